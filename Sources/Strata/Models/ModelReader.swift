import Foundation

/// Reads one stored object's attributes by slot, for the code the `@Entity` macro generates
/// (``EntityModel/init(from:)``). A slot is the attribute's position in ``EntityModel/entity``.
///
/// A record is read in place, field after field, from the store's memory map: no ``Value``, no dictionary.
/// A record of an older layout is read through its layout's projection, attribute by attribute: a field
/// read as it is, a default for a null field, a constant for an attribute added since, a narrower field
/// widened — so a value read through a newer type is exactly what the dynamic API reads.
///
/// A reader is valid only during the ``EntityModel/init(from:)`` call that receives it.
public struct ModelReader {
    let binding: EntityBinding
    let context: ReadContext?
    /// The object's identifier.
    public let objectID: ObjectID
    /// The stored record (nil for decoded values).
    private var record: RecordFields?
    /// The attribute values, by slot, for an object of the dynamic API.
    private let values: [Value]?

    /// A reader over a stored record: checks its checksum and format; attributes are then read through its
    /// layout's projection (see ``RecordFields``).
    init(record bytes: UnsafeRawBufferPointer, id: UInt64, binding: EntityBinding, context: ReadContext?) throws {
        do {
            record = try RecordFields(bytes, id: id, entity: binding)
        } catch {
            throw StoreError.corruptedRecord(entity: binding.name, id: ObjectID(rawValue: id), reason: error.reason)
        }
        self.binding = binding
        self.context = context
        self.objectID = ObjectID(rawValue: id)
        self.values = nil
    }

    /// A reader over attribute values already decoded (an object of the dynamic API).
    init(values: [Value], id: ObjectID, binding: EntityBinding, context: ReadContext?) {
        self.binding = binding
        self.context = context
        self.objectID = id
        self.record = nil
        self.values = values
    }

    private func corrupted(_ reason: String) -> StoreError {
        StoreError.corruptedRecord(entity: binding.name, id: objectID, reason: reason)
    }

    /// Checks that nothing follows the record's last field (after every attribute was read).
    mutating func finish() throws {
        do {
            try record?.checkEnd()
        } catch {
            throw corrupted(error.reason)
        }
    }

    /// Reads slot `slot`: in place from a field of type code `code` with `decode`, or, for decoded values and
    /// attributes an older layout projects, converted from a ``Value`` with `convert`. Nil when null.
    @inline(__always)
    private mutating func read<T>(_ slot: Int, code: UInt8, _ decode: (inout BinaryReader) throws -> T,
                                  _ convert: (Value) -> T?) throws -> T? {
        if let values {
            guard slot < values.count else { throw corrupted("attribute \(slot) is missing") }
            let value = values[slot]
            if value.isNull { return nil }
            guard let converted = convert(value) else {
                throw StoreError.invalidValue(entity: binding.name, attribute: binding.attributeNames[slot],
                                              expected: "\(T.self)", actual: value.caseName).about(objectID)
            }
            return converted
        }
        guard slot < binding.attributeTypes.count else { throw corrupted("attribute \(slot) is missing") }
        do {
            return try record?.read(slot, of: binding, code: code, decode: decode, fromValue: convert) ?? nil
        } catch {
            switch error {
            case .damaged(let failure):
                throw corrupted(failure.reason)
            case .wrongType(let actual):
                throw StoreError.typeMismatch(expected: "a field of type code \(code) for \(binding.name).\(binding.attributeNames[slot])",
                                              actual: "type code \(actual)")
            case .notConvertible(let value):
                throw StoreError.invalidValue(entity: binding.name, attribute: binding.attributeNames[slot],
                                              expected: "\(T.self)", actual: value.caseName).about(objectID)
            }
        }
    }

    @inline(__always)
    private func required<T>(_ value: T?, _ slot: Int) throws -> T {
        guard let value else {
            // Decoded values (an inferred object a policy has not filled in yet) may lack a required value; a
            // stored record never does unless it is damaged.
            if values != nil {
                throw StoreError.missingRequiredValue(entity: binding.name, attribute: binding.attributeNames[slot]).about(objectID)
            }
            throw corrupted("required attribute \(binding.attributeNames[slot]) is null")
        }
        return value
    }

    // MARK: Scalars

    public mutating func int(_ slot: Int) throws -> Int {
        let value = try optionalInt(slot)
        return try required(value, slot)
    }
    public mutating func optionalInt(_ slot: Int) throws -> Int? {
        try optionalInt64(slot).map { Int(truncatingIfNeeded: $0) }
    }
    public mutating func int64(_ slot: Int) throws -> Int64 {
        let value = try optionalInt64(slot)
        return try required(value, slot)
    }
    public mutating func optionalInt64(_ slot: Int) throws -> Int64? {
        try read(slot, code: 1, { try $0.fixed(Int64.self) }, { $0.int64Value })
    }
    public mutating func int32(_ slot: Int) throws -> Int32 {
        let value = try optionalInt32(slot)
        return try required(value, slot)
    }
    public mutating func optionalInt32(_ slot: Int) throws -> Int32? {
        try read(slot, code: 2, { try $0.fixed(Int32.self) }, { $0.int64Value.flatMap { Int32(exactly: $0) } })
    }
    public mutating func int16(_ slot: Int) throws -> Int16 {
        let value = try optionalInt16(slot)
        return try required(value, slot)
    }
    public mutating func optionalInt16(_ slot: Int) throws -> Int16? {
        try read(slot, code: 3, { try $0.fixed(Int16.self) }, { $0.int64Value.flatMap { Int16(exactly: $0) } })
    }
    public mutating func double(_ slot: Int) throws -> Double {
        let value = try optionalDouble(slot)
        return try required(value, slot)
    }
    public mutating func optionalDouble(_ slot: Int) throws -> Double? {
        try read(slot, code: 4, { Double(bitPattern: try $0.fixed(UInt64.self)) }, { $0.doubleValue })
    }
    public mutating func float(_ slot: Int) throws -> Float {
        let value = try optionalFloat(slot)
        return try required(value, slot)
    }
    public mutating func optionalFloat(_ slot: Int) throws -> Float? {
        try read(slot, code: 5, { Float(bitPattern: try $0.fixed(UInt32.self)) }, { if case .float(let f) = $0 { f } else { nil } })
    }
    public mutating func bool(_ slot: Int) throws -> Bool {
        let value = try optionalBool(slot)
        return try required(value, slot)
    }
    public mutating func optionalBool(_ slot: Int) throws -> Bool? {
        try read(slot, code: 6, { r in
            switch try r.u8() {
            case 0: return false
            case 1: return true
            case let b: throw DecodeFailure("invalid Boolean byte \(b)")
            }
        }, { $0.boolValue })
    }
    public mutating func string(_ slot: Int) throws -> String {
        let value = try optionalString(slot)
        return try required(value, slot)
    }
    public mutating func optionalString(_ slot: Int) throws -> String? {
        try read(slot, code: 7, { try $0.string() }, { $0.stringValue })
    }
    public mutating func date(_ slot: Int) throws -> Date {
        let value = try optionalDate(slot)
        return try required(value, slot)
    }
    public mutating func optionalDate(_ slot: Int) throws -> Date? {
        try read(slot, code: 8, { Date(timeIntervalSinceReferenceDate: Double(bitPattern: try $0.fixed(UInt64.self))) }, { $0.dateValue })
    }
    public mutating func data(_ slot: Int) throws -> Data {
        let value = try optionalData(slot)
        return try required(value, slot)
    }
    public mutating func optionalData(_ slot: Int) throws -> Data? {
        try read(slot, code: 9, { Data(try $0.lengthPrefixed()) }, { $0.dataValue })
    }
    public mutating func uuid(_ slot: Int) throws -> UUID {
        let value = try optionalUUID(slot)
        return try required(value, slot)
    }
    public mutating func optionalUUID(_ slot: Int) throws -> UUID? {
        try read(slot, code: 10, { UUID(uuid: try $0.bytes(16).loadUnaligned(as: uuid_t.self)) }, { $0.uuidValue })
    }
    public mutating func url(_ slot: Int) throws -> URL {
        let value = try optionalURL(slot)
        return try required(value, slot)
    }
    public mutating func optionalURL(_ slot: Int) throws -> URL? {
        try read(slot, code: 11, { r in
            guard let url = URL(string: try r.string()) else { throw DecodeFailure("invalid URL text") }
            return url
        }, { $0.urlValue })
    }
    public mutating func decimal(_ slot: Int) throws -> Decimal {
        let value = try optionalDecimal(slot)
        return try required(value, slot)
    }
    public mutating func optionalDecimal(_ slot: Int) throws -> Decimal? {
        try read(slot, code: 12, { r in
            guard let d = DecimalText.parseCanonical(try r.string()) else { throw DecodeFailure("invalid decimal text") }
            return d
        }, { $0.decimalValue })
    }

    // MARK: Codable and raw values

    /// A `Codable` value stored as canonical JSON (its type inferred from the property it is assigned to).
    public mutating func codable<T: Decodable>(_ slot: Int) throws -> T {
        let value = try optionalCodable(slot) as T?
        return try required(value, slot)
    }
    public mutating func optionalCodable<T: Decodable>(_ slot: Int) throws -> T? {
        guard let data = try read(slot, code: 13, { Data(try $0.lengthPrefixed()) }, { if case .codable(let d) = $0 { d } else { nil } }) else {
            return nil
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw StoreError.invalidValue(entity: binding.name, attribute: binding.attributeNames[slot],
                                          expected: "JSON of \(T.self)", actual: "\(error)").about(objectID)
        }
    }

    /// A `RawRepresentable` value stored as its raw value (its type inferred from the property).
    public mutating func raw<T: RawRepresentable>(_ slot: Int) throws -> T where T.RawValue: ModelRawValue {
        let value = try optionalRaw(slot) as T?
        return try required(value, slot)
    }
    public mutating func optionalRaw<T: RawRepresentable>(_ slot: Int) throws -> T? where T.RawValue: ModelRawValue {
        guard let raw = try T.RawValue.read(slot, from: &self) else { return nil }
        guard let value = T(rawValue: raw) else {
            throw StoreError.invalidValue(entity: binding.name, attribute: binding.attributeNames[slot],
                                          expected: "a raw value of \(T.self)", actual: "\(raw)").about(objectID)
        }
        return value
    }

    // MARK: Relationships

    /// The objects linked through the relationship at `position` (its position in the entity's relationships).
    public func related(_ position: Int) throws -> [ObjectID] {
        guard let context, position < binding.relationships.count else { return [] }
        return try context.linkedIDs(objectID.rawValue, binding.relationships[position]).map(ObjectID.init(rawValue:))
    }

    /// The object linked through the to-one relationship at `position`, if any.
    public func relatedOne(_ position: Int) throws -> ObjectID? {
        guard let context, position < binding.relationships.count else { return nil }
        return try context.firstLinkedID(objectID.rawValue, binding.relationships[position]).map(ObjectID.init(rawValue:))
    }
}

/// A type that stores the raw values of `@Field(.rawValue)` properties: the integer, floating-point and
/// string types Strata stores.
public protocol ModelRawValue {
    /// The attribute type raw values are stored as.
    static var attributeType: AttributeType { get }
    static func read(_ slot: Int, from reader: inout ModelReader) throws -> Self?
    func write(_ slot: Int, to writer: inout ModelWriter) throws
}

extension String: ModelRawValue {
    public static var attributeType: AttributeType { .string }
    public static func read(_ slot: Int, from reader: inout ModelReader) throws -> String? { try reader.optionalString(slot) }
    public func write(_ slot: Int, to writer: inout ModelWriter) throws { try writer.write(slot, self) }
}

extension Int: ModelRawValue {
    public static var attributeType: AttributeType { .int64 }
    public static func read(_ slot: Int, from reader: inout ModelReader) throws -> Int? { try reader.optionalInt(slot) }
    public func write(_ slot: Int, to writer: inout ModelWriter) throws { try writer.write(slot, self) }
}

extension Int64: ModelRawValue {
    public static var attributeType: AttributeType { .int64 }
    public static func read(_ slot: Int, from reader: inout ModelReader) throws -> Int64? { try reader.optionalInt64(slot) }
    public func write(_ slot: Int, to writer: inout ModelWriter) throws { try writer.write(slot, self) }
}

extension Int32: ModelRawValue {
    public static var attributeType: AttributeType { .int32 }
    public static func read(_ slot: Int, from reader: inout ModelReader) throws -> Int32? { try reader.optionalInt32(slot) }
    public func write(_ slot: Int, to writer: inout ModelWriter) throws { try writer.write(slot, self) }
}

extension Int16: ModelRawValue {
    public static var attributeType: AttributeType { .int16 }
    public static func read(_ slot: Int, from reader: inout ModelReader) throws -> Int16? { try reader.optionalInt16(slot) }
    public func write(_ slot: Int, to writer: inout ModelWriter) throws { try writer.write(slot, self) }
}

extension Double: ModelRawValue {
    public static var attributeType: AttributeType { .double }
    public static func read(_ slot: Int, from reader: inout ModelReader) throws -> Double? { try reader.optionalDouble(slot) }
    public func write(_ slot: Int, to writer: inout ModelWriter) throws { try writer.write(slot, self) }
}

/// Helpers the `@Entity` macro's generated code calls.
public enum ModelSupport {
    /// The attribute type of a `@Field(.rawValue)` property of type `T`.
    public static func rawAttributeType<T: RawRepresentable>(of type: T.Type) -> AttributeType where T.RawValue: ModelRawValue {
        T.RawValue.attributeType
    }

    /// The stored form of a `@Field(.rawValue)` property's default value.
    public static func rawDefault<T: RawRepresentable>(_ value: T) -> Value where T.RawValue: ModelQueryable {
        value.rawValue.queryValue
    }

    /// The name of a relationship's inverse given by name, with the key path that makes the compiler check it.
    public static func inverse(_ name: String, _ keyPath: AnyKeyPath) -> String { name }

    /// A `@Field(.codable)` property's attribute, as declared: its type does not describe its shape.
    public static func shaped<T>(_ attribute: Attribute, of type: T.Type) -> Attribute { attribute }

    /// A `@Field(.codable)` property's attribute, with the shape its type describes.
    public static func shaped<T: CodableShapeDescribing>(_ attribute: Attribute, of type: T.Type) -> Attribute {
        attribute.shape(T.codableShape)
    }

    /// The stored form of a `@Field(.codable)` property's default value (null if it cannot be encoded).
    public static func codableDefault<T: Encodable>(_ value: T) -> Value {
        (try? Value.encoding(value)) ?? .null
    }
}
