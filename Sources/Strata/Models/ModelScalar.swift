import Foundation

/// A Swift type Strata stores in a field of its own — the one table of the types a model property can have as
/// it is: `Int`, `Int64`, `Int32`, `Int16`, `Double`, `Float`, `Bool`, `String`, `Date`, `Data`, `UUID`, `URL`
/// and `Decimal`, and their optionals.
///
/// Each conformance says everything about its type: the ``AttributeType`` it is stored as, how it becomes the
/// ``Value`` of the dynamic API and of queries (``ModelQueryable/queryValue``) and back
/// (``init(storedValue:)``), and how code the `@Entity` macro generates reads and writes it in place. The macro
/// calls these generically, so a property of any other type does not compile: store such a value as Codable JSON
/// with `@Field(.codable)`, or a `RawRepresentable` type by its raw value with `@Field(.rawValue)`.
public protocol ModelScalar: ModelQueryable, Sendable {
    /// The attribute type values are stored as.
    static var attributeType: AttributeType { get }
    /// A value of this type from the store's value, or nil when it does not convert (another type, or out of
    /// range: an `Int64` too large for an `Int16`).
    init?(storedValue: Value)

    /// Reads the attribute at `slot` in place (for generated code).
    @_documentation(visibility: private)
    static func read(_ slot: Int, from record: inout ModelReader) throws -> Self?
    /// Writes the value into the attribute at `slot` (for generated code).
    @_documentation(visibility: private)
    func write(_ slot: Int, to record: inout ModelWriter) throws
    /// The stored form of a literal initial value of this type (for generated code); nil when the literal is
    /// not of this type.
    @_documentation(visibility: private)
    static func defaultValue(_ literal: ModelLiteral) -> Value?

    /// The type code of the field values are stored in (for generated code; see `ModelScalar+InPlace.swift`).
    @_documentation(visibility: private)
    static var fieldCode: UInt8 { get }
    /// The value of the field that starts at `offset` in a record whose fields were located (their bounds
    /// checked), or nil when it is read through the general path (for generated code).
    @_documentation(visibility: private)
    static func inPlace(_ record: UnsafeRawBufferPointer, at offset: Int) -> Self?
}

/// A literal a model property is initialized with, as the `@Entity` macro reads it: the attribute's default.
@_documentation(visibility: private)
public enum ModelLiteral: Sendable {
    case integer(Int64)
    /// A floating-point literal's text (so that a `Decimal` default is exact).
    case floating(String)
    case boolean(Bool)
    case string(String)
}

// MARK: Integers

extension Int: ModelScalar {
    public static var attributeType: AttributeType { .int64 }
    public var queryValue: Value { .int64(Int64(self)) }
    public init?(storedValue: Value) {
        guard let v = storedValue.int64Value, let i = Int(exactly: v) else { return nil }
        self = i
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Int? {
        try record.read(slot, code: Self.fieldCode, { Int(truncatingIfNeeded: try $0.fixed(Int64.self)) }, Int.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        let v = Int64(self)
        try record.put(slot, code: Self.fieldCode, .int64(v)) { $0.fixed(v) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? {
        if case .integer(let v) = literal { .int64(v) } else { nil }
    }
}

extension Int64: ModelScalar {
    public static var attributeType: AttributeType { .int64 }
    public var queryValue: Value { .int64(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.int64Value else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Int64? {
        try record.read(slot, code: Self.fieldCode, { try $0.fixed(Int64.self) }, Int64.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .int64(self)) { $0.fixed(self) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? {
        if case .integer(let v) = literal { .int64(v) } else { nil }
    }
}

extension Int32: ModelScalar {
    public static var attributeType: AttributeType { .int32 }
    public var queryValue: Value { .int32(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.int64Value.flatMap(Int32.init(exactly:)) else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Int32? {
        try record.read(slot, code: Self.fieldCode, { try $0.fixed(Int32.self) }, Int32.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .int32(self)) { $0.fixed(self) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? {
        if case .integer(let v) = literal, let i = Int32(exactly: v) { .int32(i) } else { nil }
    }
}

extension Int16: ModelScalar {
    public static var attributeType: AttributeType { .int16 }
    public var queryValue: Value { .int16(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.int64Value.flatMap(Int16.init(exactly:)) else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Int16? {
        try record.read(slot, code: Self.fieldCode, { try $0.fixed(Int16.self) }, Int16.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .int16(self)) { $0.fixed(self) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? {
        if case .integer(let v) = literal, let i = Int16(exactly: v) { .int16(i) } else { nil }
    }
}

// MARK: Floating point

extension Double: ModelScalar {
    public static var attributeType: AttributeType { .double }
    public var queryValue: Value { .double(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.doubleValue else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Double? {
        try record.read(slot, code: Self.fieldCode, { Double(bitPattern: try $0.fixed(UInt64.self)) }, Double.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .double(self)) { $0.fixed(self.bitPattern) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? {
        switch literal {
        case .integer(let v): .double(Double(v))
        case .floating(let text): Double(text).map(Value.double)
        default: nil
        }
    }
}

extension Float: ModelScalar {
    public static var attributeType: AttributeType { .float }
    public var queryValue: Value { .float(self) }
    public init?(storedValue: Value) {
        guard case .float(let v) = storedValue else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Float? {
        try record.read(slot, code: Self.fieldCode, { Float(bitPattern: try $0.fixed(UInt32.self)) }, Float.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .float(self)) { $0.fixed(self.bitPattern) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? {
        switch literal {
        case .integer(let v): .float(Float(v))
        case .floating(let text): Float(text).map(Value.float)
        default: nil
        }
    }
}

extension Decimal: ModelScalar {
    public static var attributeType: AttributeType { .decimal }
    public var queryValue: Value { .decimal(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.decimalValue else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Decimal? {
        try record.read(slot, code: Self.fieldCode, { r in
            guard let d = DecimalText.parseCanonical(try r.string()) else { throw DecodeFailure("invalid decimal text") }
            return d
        }, Decimal.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .decimal(self)) { w in
            var s = self.isNaN ? "NaN" : self.description
            s.withUTF8 { w.lengthPrefixed($0) }
        }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? {
        switch literal {
        case .integer(let v): .decimal(Decimal(v))
        case .floating(let text): Decimal(string: text).map(Value.decimal)
        default: nil
        }
    }
}

// MARK: Other values

extension Bool: ModelScalar {
    public static var attributeType: AttributeType { .bool }
    public var queryValue: Value { .bool(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.boolValue else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Bool? {
        try record.read(slot, code: Self.fieldCode, { r in
            switch try r.u8() {
            case 0: return false
            case 1: return true
            case let b: throw DecodeFailure("invalid Boolean byte \(b)")
            }
        }, Bool.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .bool(self)) { $0.u8(self ? 1 : 0) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? {
        if case .boolean(let v) = literal { .bool(v) } else { nil }
    }
}

extension String: ModelScalar {
    public static var attributeType: AttributeType { .string }
    public var queryValue: Value { .string(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.stringValue else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> String? {
        try record.read(slot, code: Self.fieldCode, { try $0.string() }, String.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .string(self)) { $0.string(self) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? {
        if case .string(let v) = literal { .string(v) } else { nil }
    }
}

extension Date: ModelScalar {
    public static var attributeType: AttributeType { .date }
    public var queryValue: Value { .date(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.dateValue else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Date? {
        try record.read(slot, code: Self.fieldCode, { Date(timeIntervalSinceReferenceDate: Double(bitPattern: try $0.fixed(UInt64.self))) },
                        Date.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .date(self)) { $0.fixed(self.timeIntervalSinceReferenceDate.bitPattern) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? { nil }
}

extension Data: ModelScalar {
    public static var attributeType: AttributeType { .data }
    public var queryValue: Value { .data(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.dataValue else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> Data? {
        try record.read(slot, code: Self.fieldCode, { Data(try $0.lengthPrefixed()) }, Data.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .data(self)) { w in
            w.varint(UInt64(self.count))
            self.withUnsafeBytes { w.raw($0) }
        }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? { nil }
}

extension UUID: ModelScalar {
    public static var attributeType: AttributeType { .uuid }
    public var queryValue: Value { .uuid(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.uuidValue else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> UUID? {
        try record.read(slot, code: Self.fieldCode, { try $0.uuid() }, UUID.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .uuid(self)) { $0.uuid(self) }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? { nil }
}

extension URL: ModelScalar {
    public static var attributeType: AttributeType { .url }
    public var queryValue: Value { .url(self) }
    public init?(storedValue: Value) {
        guard let v = storedValue.urlValue else { return nil }
        self = v
    }
    public static func read(_ slot: Int, from record: inout ModelReader) throws -> URL? {
        try record.read(slot, code: Self.fieldCode, { r in
            guard let url = URL(string: try r.string()) else { throw DecodeFailure("invalid URL text") }
            return url
        }, URL.init(storedValue:))
    }
    public func write(_ slot: Int, to record: inout ModelWriter) throws {
        try record.put(slot, code: Self.fieldCode, .url(self)) { w in
            var s = self.absoluteString
            s.withUTF8 { w.lengthPrefixed($0) }
        }
    }
    public static func defaultValue(_ literal: ModelLiteral) -> Value? { nil }
}
