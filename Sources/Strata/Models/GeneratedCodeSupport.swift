import Foundation

// The API only code the `@Entity` macro generates calls: kept public for that code, hidden from the
// documentation, and gathered here. Scalars go through ``ModelScalar`` (one conformance per stored Swift type),
// Codable values through canonical JSON, raw values through their raw value's ``ModelScalar``.

extension ModelReader {
    /// The value `read` returns, typed as the property `property` names: generated initializers read each field
    /// into a local of its property's type without naming the type (which may not resolve where the initializer
    /// is expanded). `property` is never called.
    @_documentation(visibility: private)
    @inlinable @inline(__always)
    public static func value<Root, T>(of property: (Root) -> T, _ read: () throws -> T) rethrows -> T {
        try read()
    }

    /// Reads a required scalar attribute.
    @_documentation(visibility: private)
    @inlinable
    public mutating func read<T: ModelScalar>(_ slot: Int) throws -> T {
        // A plain field of a located record: read in place, here in the model's own code.
        let o = slots.offset(ofSlot: slot, code: T.fieldCode)
        if o >= 0, let v = T.inPlace(slots.bytes, at: o) { return v }
        let value = try T.read(slot, from: &self)
        return try required(value, slot)
    }

    /// Reads an optional scalar attribute.
    @_documentation(visibility: private)
    @inlinable
    public mutating func read<T: ModelScalar>(_ slot: Int) throws -> T? {
        let o = slots.offset(ofSlot: slot, code: T.fieldCode)
        if o >= 0, let v = T.inPlace(slots.bytes, at: o) { return v }
        if o == -1 { return nil }
        return try T.read(slot, from: &self)
    }

    /// A `Codable` value stored as canonical JSON (its type inferred from the property it is assigned to).
    @_documentation(visibility: private)
    public mutating func codable<T: Decodable>(_ slot: Int) throws -> T {
        let value = try optionalCodable(slot) as T?
        return try required(value, slot)
    }

    @_documentation(visibility: private)
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
    @_documentation(visibility: private)
    public mutating func raw<T: RawRepresentable>(_ slot: Int) throws -> T where T.RawValue: ModelScalar {
        let value = try optionalRaw(slot) as T?
        return try required(value, slot)
    }

    @_documentation(visibility: private)
    public mutating func optionalRaw<T: RawRepresentable>(_ slot: Int) throws -> T? where T.RawValue: ModelScalar {
        guard let raw = try T.RawValue.read(slot, from: &self) else { return nil }
        guard let value = T(rawValue: raw) else {
            throw StoreError.invalidValue(entity: binding.name, attribute: binding.attributeNames[slot],
                                          expected: "a raw value of \(T.self)", actual: "\(raw)").about(objectID)
        }
        return value
    }

    /// The objects linked through the relationship at `position` (its position in the entity's relationships).
    @_documentation(visibility: private)
    public func related(_ position: Int) throws -> [ObjectID] {
        guard let context, position < binding.relationships.count else { return [] }
        return try context.linkedIDs(objectID.rawValue, binding.relationships[position]).map(ObjectID.init(rawValue:))
    }

    /// The object linked through the to-one relationship at `position`, if any.
    @_documentation(visibility: private)
    public func relatedOne(_ position: Int) throws -> ObjectID? {
        guard let context, position < binding.relationships.count else { return nil }
        return try context.firstLinkedID(objectID.rawValue, binding.relationships[position]).map(ObjectID.init(rawValue:))
    }
}

extension ModelWriter {
    /// Writes a scalar attribute.
    @_documentation(visibility: private)
    @inlinable
    public mutating func write<T: ModelScalar>(_ slot: Int, _ v: T) throws {
        try v.write(slot, to: &self)
    }

    /// Writes an optional scalar attribute.
    @_documentation(visibility: private)
    @inlinable
    public mutating func write<T: ModelScalar>(_ slot: Int, _ v: T?) throws {
        if let v { try v.write(slot, to: &self) } else { try writeNull(slot, T.attributeType) }
    }

    /// Writes null into the attribute at `slot`, of `type`.
    @_documentation(visibility: private)
    public mutating func writeNull(_ slot: Int, _ type: AttributeType) throws {
        try putNull(slot, code: TypeCode.code(type))
    }

    /// A `Codable` value, stored as canonical JSON (sorted keys).
    @_documentation(visibility: private)
    public mutating func writeCodable<T: Encodable>(_ slot: Int, _ v: T) throws {
        let data = try CanonicalJSON.encode(v)
        try put(slot, code: 13, .codable(data)) { w in
            w.varint(UInt64(data.count))
            data.withUnsafeBytes { w.raw($0) }
        }
    }

    @_documentation(visibility: private)
    public mutating func writeCodable<T: Encodable>(_ slot: Int, _ v: T?) throws {
        if let v { try writeCodable(slot, v) } else { try putNull(slot, code: 13) }
    }

    /// A `RawRepresentable` value, stored as its raw value.
    @_documentation(visibility: private)
    public mutating func writeRaw<T: RawRepresentable>(_ slot: Int, _ v: T) throws where T.RawValue: ModelScalar {
        try v.rawValue.write(slot, to: &self)
    }

    @_documentation(visibility: private)
    public mutating func writeRaw<T: RawRepresentable>(_ slot: Int, _ v: T?) throws where T.RawValue: ModelScalar {
        if let v { try v.rawValue.write(slot, to: &self) } else { try writeNull(slot, T.RawValue.attributeType) }
    }

    /// The objects a to-many relationship (at `position` among the entity's relationships) links to.
    @_documentation(visibility: private)
    public mutating func relate(_ position: Int, _ targets: [ObjectID]) {
        links.append((position, targets.map(\.rawValue)))
    }

    /// The object a to-one relationship links to (nil: none).
    @_documentation(visibility: private)
    public mutating func relate(_ position: Int, _ target: ObjectID?) {
        links.append((position, target.map { [$0.rawValue] } ?? []))
    }
}

/// Helpers the `@Entity` macro's generated code calls.
@_documentation(visibility: private)
public enum ModelSupport {
    /// The attribute type of a property of the stored type `T`.
    public static func attributeType<T: ModelScalar>(of type: T.Type) -> AttributeType { T.attributeType }

    /// A property whose type Strata does not store as it is: a compile error that says what to do.
    @available(*, unavailable, message: "Strata stores a property as it is only when its type is a ModelScalar (Int, Int64, Int32, Int16, Double, Float, Bool, String, Date, Data, UUID, URL, Decimal): mark it @Field(.codable) to store it as Codable JSON, or @Field(.rawValue) for a RawRepresentable type")
    public static func attributeType<T>(of type: T.Type) -> AttributeType { .int64 }

    /// The stored form of a literal default of a property of type `T` (null if the literal is not of `T`).
    public static func defaultValue<T: ModelScalar>(_ literal: ModelLiteral, of type: T.Type) -> Value {
        T.defaultValue(literal) ?? .null
    }

    /// The attribute type of a `@Field(.rawValue)` property of type `T`.
    public static func rawAttributeType<T: RawRepresentable>(of type: T.Type) -> AttributeType where T.RawValue: ModelScalar {
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
