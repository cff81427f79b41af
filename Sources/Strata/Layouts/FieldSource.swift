/// Where an attribute's value comes from in a record of some layout: one entry of a layout's projection, the
/// mechanism behind metadata-only migrations (see <doc:Architecture>).
///
/// This file is the one home of what each kind of source means — how it reads a record, how a binding checks it
/// against its layout, how the catalog stores it, how a migration step composes it with the step's mapping,
/// and how a rewrite transcodes it. A new kind of source is a new case here and, when it needs a byte-level
/// operation of its own, one in ``RecordTranscoder``.
enum FieldSource: Sendable, Equatable {
    /// The value of field `index` (of the attribute's own type).
    case field(Int)
    /// The value of field `index`, or `default` when that field is null (an attribute made required).
    case fieldOrDefault(Int, Value)
    /// Always this value (an attribute added after the record was written; null for optional ones).
    case constant(Value)
    /// The value of field `index`, widened to the attribute's type (an `Int32` field read as `Int64`, a
    /// `Float` as a `Double`), or `default` when that field is null: a widening that changed metadata only.
    case converted(Int, default: Value?)
    /// The JSON of codable field `index`, reshaped to the attribute's ``CodableShape``, or `default` when
    /// that field is null: a change of a codable value's shape that changed metadata only.
    case reshaped(Int, CodableReshape, default: Value?)

    /// The field this source reads, if any.
    var field: Int? {
        switch self {
        case .field(let i), .fieldOrDefault(let i, _), .converted(let i, _), .reshaped(let i, _, _): i
        case .constant: nil
        }
    }

    /// Whether the attribute is the field exactly as stored: read in place, no projection work.
    var isPlainField: Bool { if case .field = self { true } else { false } }

    // MARK: Reading

    /// The attribute's value when its field is null, or when the source reads no field.
    var valueWhenFieldIsNull: Value {
        switch self {
        case .field: .null
        case .fieldOrDefault(_, let v), .constant(let v): v
        case .converted(_, let v), .reshaped(_, _, let v): v ?? .null
        }
    }

    /// The attribute's value, of `type`, from its field's stored value (`.null` when the field is null).
    @inline(__always)
    func project(_ stored: Value, to type: AttributeType) throws(DecodeFailure) -> Value {
        switch self {
        case .field: return stored
        case .constant(let v): return v
        case .fieldOrDefault(_, let v): return stored.isNull ? v : stored
        case .converted(_, let v): return stored.isNull ? (v ?? .null) : Widening.widen(stored, to: type)
        case .reshaped(_, let reshape, let v): return stored.isNull ? (v ?? .null) : try reshape.apply(to: stored)
        }
    }

    /// Checks that the source can produce a value of `attribute`'s type from a record of `layout`.
    func check(layout: RecordLayout, attribute: Attribute, entity: String) throws(DecodeFailure) {
        guard let f = field else { return }
        guard f < layout.fieldTypes.count else {
            throw DecodeFailure("layout \(layout.id) of \(entity) has no field \(f) for \(attribute.name)")
        }
        let stored = layout.fieldTypes[f]
        switch self {
        case .field, .fieldOrDefault:
            guard stored == attribute.type else {
                throw DecodeFailure("layout \(layout.id) of \(entity) does not store \(attribute.name) as \(attribute.type.name)")
            }
        case .converted:
            guard stored.widens(to: attribute.type) else {
                throw DecodeFailure("layout \(layout.id) of \(entity) cannot widen a field to \(attribute.name) as \(attribute.type.name)")
            }
        case .reshaped:
            guard case .codable = stored, case .codable = attribute.type else {
                throw DecodeFailure("layout \(layout.id) of \(entity) reshapes a field that is not codable into \(attribute.name)")
            }
        case .constant:
            break
        }
    }

    // MARK: The catalog's binary form

    /// The oldest catalog format that can hold this source (see ``Catalog/formatVersion``).
    var requiredCatalogFormat: UInt8 {
        switch self {
        case .field, .fieldOrDefault, .constant: 1
        case .converted: 2
        case .reshaped: 3
        }
    }

    func encode(into w: inout BinaryWriter) {
        switch self {
        case .field(let i):
            w.u8(1); w.varint(i)
        case .fieldOrDefault(let i, let v):
            w.u8(2); w.varint(i); FieldCodec.encodeTagged(v, into: &w)
        case .constant(let v):
            w.u8(3); FieldCodec.encodeTagged(v, into: &w)
        case .converted(let i, let d):
            w.u8(4); w.varint(i); FieldCodec.encodeTagged(d ?? .null, into: &w)
        case .reshaped(let i, let reshape, let d):
            w.u8(5); w.varint(i); FieldCodec.encodeTagged(d ?? .null, into: &w)
            reshape.encode(into: &w)
        }
    }

    /// Reads a source of a layout with `fieldCount` fields from a catalog of format `catalogFormat`.
    init(decoding r: inout BinaryReader, fieldCount: Int, catalogFormat: UInt8) throws {
        func fieldIndex() throws -> Int {
            guard fieldCount > 0 else { throw DecodeFailure("field source in an empty layout") }
            return try r.count(limit: fieldCount - 1)
        }
        switch try r.u8() {
        case 1:
            self = .field(try fieldIndex())
        case 2:
            let i = try fieldIndex()
            self = .fieldOrDefault(i, try FieldCodec.decodeTagged(from: &r))
        case 3:
            self = .constant(try FieldCodec.decodeTagged(from: &r))
        case 4 where catalogFormat >= 2:
            let i = try fieldIndex()
            let d = try FieldCodec.decodeTagged(from: &r)
            // No default is stored as null: `Value?.none`, not `nil` (which `Value`, being nil-expressible,
            // would take as `.null`, a default of null that hides a later step's default).
            self = .converted(i, default: d.isNull ? Value?.none : d)
        case 5 where catalogFormat >= 3:
            let i = try fieldIndex()
            let d = try FieldCodec.decodeTagged(from: &r)
            self = .reshaped(i, try CodableReshape(decoding: &r), default: d.isNull ? Value?.none : d)
        case let c:
            throw DecodeFailure("unknown field source \(c)")
        }
    }

    // MARK: Composition with a migration step

    /// This source followed by a step's mapping of the attribute (`mapping`, whose origin is this source's
    /// attribute), for an attribute of `type` after the step: the source that reads the step's result from the
    /// same record, so that the step changes metadata only.
    func composed(with mapping: AttributeMappingPlan, to type: AttributeType) throws -> FieldSource {
        if let reshape = mapping.reshape {
            return try composed(with: reshape, nullReplacement: mapping.nullReplacement)
        }
        let widened: Bool = { if case .converted = self { return true }; return mapping.conversion != nil }()
        if widened {
            // The field keeps its type and is widened when read (composing with earlier widenings).
            switch self {
            case .field(let i):
                return .converted(i, default: mapping.nullReplacement)
            case .fieldOrDefault(let i, let d):
                return .converted(i, default: Widening.widen(d, to: type))
            case .converted(let i, let d):
                return .converted(i, default: d.map { Widening.widen($0, to: type) } ?? mapping.nullReplacement)
            case .constant(let v):
                return .constant(v.isNull ? (mapping.nullReplacement ?? .null) : Widening.widen(v, to: type))
            case .reshaped:
                throw StoreError.internalInconsistency("a widening of a codable attribute")
            }
        }
        switch (self, mapping.nullReplacement) {
        case (_, nil): return self
        case (.field(let i), let r?): return .fieldOrDefault(i, r)
        case (.reshaped(let i, let r, let d), let n?): return .reshaped(i, r, default: d ?? n)
        case (.fieldOrDefault, _), (.converted, _): return self
        case (.constant(let v), let r?): return .constant(v.isNull ? r : v)
        }
    }

    /// This source of a codable attribute followed by a step's reshape (and its null replacement, given in the
    /// destination's shape).
    private func composed(with reshape: CodableReshape, nullReplacement: Value?) throws -> FieldSource {
        do {
            switch self {
            case .field(let i):
                return .reshaped(i, reshape, default: nullReplacement)
            case .fieldOrDefault(let i, let d):
                return .reshaped(i, reshape, default: try reshape.apply(to: d))
            case .reshaped(let i, let earlier, let d):
                return .reshaped(i, earlier.followed(by: reshape), default: try d.map { try reshape.apply(to: $0) } ?? nullReplacement)
            case .constant(let v):
                return .constant(v.isNull ? (nullReplacement ?? .null) : try reshape.apply(to: v))
            case .converted:
                throw DecodeFailure("a widened field cannot be codable")
            }
        } catch let failure as DecodeFailure {
            throw StoreError.internalInconsistency("cannot reshape a codable default: \(failure.reason)")
        }
    }

    // MARK: Rewriting

    /// The byte-level operation that writes a destination field of `type` from a record of the layout with
    /// `fieldTypes`, for an attribute this source reads and a step maps with `mapping` (the maintenance sweep
    /// passes a plain copy).
    func transcoding(_ mapping: AttributeMappingPlan, fieldTypes: [AttributeType], to type: AttributeType) throws -> RecordTranscoder.Operation {
        let replacement = try mapping.nullReplacement.map { try RecordTranscoder.encode($0, type) } ?? nil
        if let reshape = mapping.reshape {
            switch self {
            case .field(let i):
                return .reshape(index: i, reshape, nullReplacement: replacement)
            case .fieldOrDefault(let i, let d):
                return .reshape(index: i, reshape, nullReplacement: try RecordTranscoder.encode(try reshape.apply(to: d), type))
            case .reshaped(let i, let earlier, let d):
                let null = try d.map { try RecordTranscoder.encode(try reshape.apply(to: $0), type) } ?? replacement
                return .reshape(index: i, earlier.followed(by: reshape), nullReplacement: null)
            case .constant(let v):
                return .constant(v.isNull ? replacement : try RecordTranscoder.encode(try reshape.apply(to: v), type))
            case .converted:
                throw DecodeFailure("a widened field cannot be codable")
            }
        }
        switch self {
        case .field(let i):
            return .copy(index: i, conversion: mapping.conversion, nullReplacement: replacement)
        case .converted(let i, let fallback):
            // The field has its layout's type: widen it straight to the destination's.
            guard i < fieldTypes.count else { throw DecodeFailure("no field \(i)") }
            let from = fieldTypes[i]
            let conversion = from == type ? nil : AttributeMappingPlan.Conversion(from: from, to: type)
            let null = try fallback.map { try RecordTranscoder.encode(Widening.widen($0, to: type), type) } ?? replacement
            return .copy(index: i, conversion: conversion, nullReplacement: null)
        case .fieldOrDefault(let i, let fallback):
            let converted = try RecordTranscoder.encode(Widening.convert(fallback, mapping.conversion), type)
            return .copy(index: i, conversion: mapping.conversion, nullReplacement: converted)
        case .constant(let v):
            let value = Widening.convert(v, mapping.conversion)
            return .constant(value.isNull ? replacement : try RecordTranscoder.encode(value, type))
        case .reshaped(let i, let earlier, let fallback):
            // An older shape's JSON: reshaped as the layout's projection says.
            let null = try fallback.map { try RecordTranscoder.encode($0, type) } ?? replacement
            return .reshape(index: i, earlier, nullReplacement: null)
        }
    }
}
