import Foundation

/// Rewrites records of a source entity as records of its destination entity at the byte level: fields are
/// copied as bytes, converted only where a widening requires it, and constants are pre-encoded. No object
/// is materialised, so a rewrite step costs little more than LMDB copying the bytes.
struct RecordTranscoder {
    enum Operation {
        /// Copies field `index` (converting it when `conversion` is set); a null field becomes
        /// `nullReplacement` (already encoded in the destination type) when given.
        case copy(index: Int, conversion: AttributeMappingPlan.Conversion?, nullReplacement: [UInt8]?)
        /// Writes an encoded constant, or null.
        case constant([UInt8]?)
    }

    struct Program {
        let sourceLayout: RecordLayout
        let operations: [Operation]
    }

    let entityTag: UInt32
    let destinationLayout: RecordLayout
    private let programs: [UInt32: Program]
    private var fields: [Range<Int>?] = []

    /// Builds one program per source layout.
    init(source: Catalog.EntityEntry, destination: Catalog.EntityEntry, plan: EntityMappingPlan) throws {
        guard let destLayout = destination.layout(destination.currentLayout)?.layout else {
            throw DecodeFailure("no current layout for \(destination.name)")
        }
        entityTag = destination.tag
        destinationLayout = destLayout
        var programs: [UInt32: Program] = [:]
        for l in source.layouts {
            var ops: [Operation] = []
            for (j, name) in destination.attributes.enumerated() {
                guard let m = plan.attributes.first(where: { $0.name == name }) else {
                    throw DecodeFailure("no mapping for \(destination.name).\(name)")
                }
                let type = destLayout.fieldTypes[j]
                switch m.origin {
                case .added(let value):
                    ops.append(.constant(try RecordTranscoder.encode(value, type)))
                case .scripted:
                    throw DecodeFailure("a scripted attribute cannot be transcoded")
                case .source(let s):
                    guard let k = source.attributes.firstIndex(of: s) else {
                        throw DecodeFailure("the catalog of \(source.name) has no attribute \(s)")
                    }
                    let replacement = try m.nullReplacement.map { try RecordTranscoder.encode($0, type) } ?? nil
                    switch l.sources[k] {
                    case .field(let i):
                        ops.append(.copy(index: i, conversion: m.conversion, nullReplacement: replacement))
                    case .fieldOrDefault(let i, let fallback):
                        let converted = try RecordTranscoder.encode(RecordTranscoder.convert(fallback, m.conversion), type)
                        ops.append(.copy(index: i, conversion: m.conversion, nullReplacement: converted))
                    case .constant(let v):
                        let value = RecordTranscoder.convert(v, m.conversion)
                        ops.append(.constant(value.isNull ? replacement : try RecordTranscoder.encode(value, type)))
                    }
                }
            }
            programs[l.layout.id] = Program(sourceLayout: l.layout, operations: ops)
        }
        self.programs = programs
    }

    /// Rewrites one record (`id`) into `w`, sealed for the destination entity.
    mutating func transcode(_ bytes: UnsafeRawBufferPointer, id: UInt64, sourceTag: UInt32, into w: inout BinaryWriter) throws(DecodeFailure) {
        var (layoutID, r) = try RecordCodec.open(bytes, entityTag: sourceTag, id: id)
        guard let program = programs[layoutID] else { throw DecodeFailure("unknown layout \(layoutID)") }
        let types = program.sourceLayout.fieldTypes
        let bitmap: UnsafeRawBufferPointer
        do {
            bitmap = try r.bytes(program.sourceLayout.bitmapSize)
            fields.removeAll(keepingCapacity: true)
            for i in 0..<types.count {
                if bitmap[i >> 3] & (UInt8(1) << UInt8(i & 7)) != 0 {
                    fields.append(nil)
                } else {
                    fields.append(try FieldCodec.skip(types[i], in: &r))
                }
            }
            guard r.isAtEnd else { throw DecodeFailure("\(r.remaining) bytes after the last field") }
        } catch let failure as DecodeFailure {
            throw failure
        } catch {
            throw DecodeFailure("\(error)")
        }
        let bitmapOffset = RecordCodec.begin(destinationLayout, into: &w)
        for (j, op) in program.operations.enumerated() {
            switch op {
            case .constant(let encoded):
                if let encoded { w.bytes.append(contentsOf: encoded) } else { RecordCodec.markNull(field: j, bitmapOffset: bitmapOffset, in: &w) }
            case .copy(let i, let conversion, let replacement):
                guard let range = fields[i] else {
                    if let replacement { w.bytes.append(contentsOf: replacement) } else { RecordCodec.markNull(field: j, bitmapOffset: bitmapOffset, in: &w) }
                    continue
                }
                if let conversion {
                    var fr = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[range]))
                    do {
                        let value = try FieldCodec.decode(conversion.from, from: &fr)
                        try FieldCodec.encode(RecordTranscoder.convert(value, conversion), as: conversion.to, into: &w)
                    } catch let failure as DecodeFailure {
                        throw failure
                    } catch {
                        throw DecodeFailure("\(error)")
                    }
                } else {
                    w.raw(UnsafeRawBufferPointer(rebasing: bytes[range]))
                }
            }
        }
        RecordCodec.seal(&w, entityTag: entityTag, id: id)
    }

    static func encode(_ value: Value, _ type: AttributeType) throws -> [UInt8]? {
        if value.isNull { return nil }
        var w = BinaryWriter(capacity: 16)
        try FieldCodec.encode(type.coerce(value) ?? value, as: type, into: &w)
        return w.bytes
    }

    /// Applies a widening to a value (null stays null).
    static func convert(_ value: Value, _ conversion: AttributeMappingPlan.Conversion?) -> Value {
        guard let conversion else { return value }
        switch (value, conversion.to) {
        case (.null, _): return .null
        case (.int16(let v), .int32): return .int32(Int32(v))
        case (.int16(let v), .int64): return .int64(Int64(v))
        case (.int32(let v), .int64): return .int64(Int64(v))
        case (.float(let v), .double): return .double(Double(v))
        case (.int16(let v), .double): return .double(Double(v))
        case (.int32(let v), .double): return .double(Double(v))
        case (.int64(let v), .double): return .double(Double(v))
        default: return value
        }
    }
}
