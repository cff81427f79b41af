/// A numeric widening of a stored value to a wider attribute type — an `Int16` or `Int32` field read as
/// `Int64`, a `Float` as a `Double`, an integer as a `Double` — done on decoded values and, without a
/// ``Value``, on a field's bytes. Inferred migrations widen through projections (``FieldSource/converted(_:default:)``);
/// rewrites widen bytes.
enum Widening {
    case int16ToInt32, int16ToInt64, int32ToInt64, floatToDouble, int16ToDouble, int32ToDouble, int64ToDouble

    init?(_ c: AttributeMappingPlan.Conversion) {
        switch (c.from, c.to) {
        case (.int16, .int32): self = .int16ToInt32
        case (.int16, .int64): self = .int16ToInt64
        case (.int32, .int64): self = .int32ToInt64
        case (.float, .double): self = .floatToDouble
        case (.int16, .double): self = .int16ToDouble
        case (.int32, .double): self = .int32ToDouble
        case (.int64, .double): self = .int64ToDouble
        default: return nil
        }
    }

    /// The size of the field it reads.
    var sourceSize: Int {
        switch self {
        case .int16ToInt32, .int16ToInt64, .int16ToDouble: 2
        case .int32ToInt64, .floatToDouble, .int32ToDouble: 4
        case .int64ToDouble: 8
        }
    }

    /// Appends the widened value of `field` (little-endian, as ``BinaryWriter/fixed(_:)`` writes), as
    /// ``widen(_:to:)`` widens decoded values.
    @inline(__always)
    func write(_ field: UnsafeRawBufferPointer, into w: inout BinaryWriter) {
        switch self {
        case .int16ToInt32: w.fixed(Int32(Int16(littleEndian: field.loadUnaligned(as: Int16.self))))
        case .int16ToInt64: w.fixed(Int64(Int16(littleEndian: field.loadUnaligned(as: Int16.self))))
        case .int32ToInt64: w.fixed(Int64(Int32(littleEndian: field.loadUnaligned(as: Int32.self))))
        case .floatToDouble:
            w.fixed(Double(Float(bitPattern: UInt32(littleEndian: field.loadUnaligned(as: UInt32.self)))).bitPattern)
        case .int16ToDouble: w.fixed(Double(Int16(littleEndian: field.loadUnaligned(as: Int16.self))).bitPattern)
        case .int32ToDouble: w.fixed(Double(Int32(littleEndian: field.loadUnaligned(as: Int32.self))).bitPattern)
        case .int64ToDouble: w.fixed(Double(Int64(littleEndian: field.loadUnaligned(as: Int64.self))).bitPattern)
        }
    }

    /// Widens a value to `type` (an integer to a wider integer or a double, a float to a double); other values
    /// are returned as they are.
    static func widen(_ value: Value, to type: AttributeType) -> Value {
        switch (value, type) {
        case (.int16(let v), .int32): .int32(Int32(v))
        case (.int16(let v), .int64): .int64(Int64(v))
        case (.int32(let v), .int64): .int64(Int64(v))
        case (.float(let v), .double): .double(Double(v))
        case (.int16(let v), .double): .double(Double(v))
        case (.int32(let v), .double): .double(Double(v))
        case (.int64(let v), .double): .double(Double(v))
        default: value
        }
    }

    /// Applies a step's widening to a value, if it has one (null stays null).
    static func convert(_ value: Value, _ conversion: AttributeMappingPlan.Conversion?) -> Value {
        guard let conversion else { return value }
        return widen(value, to: conversion.to)
    }
}
