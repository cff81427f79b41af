import Foundation

/// Encodes a `Persistable` value into an entity's attribute values and relationship links.
enum TypedEncoding {
    struct Encoded {
        var values: [Value]
        var links: [(Int, [UInt64])]
    }

    static func encode<T: Encodable>(_ value: T, binding: EntityBinding) throws -> Encoded {
        let encoder = RowEncoder(binding: binding)
        try value.encode(to: encoder)
        if let error = encoder.error { throw error }
        return Encoded(values: encoder.values, links: encoder.links.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// The value of a Swift value for an attribute of `type`, or nil when it is not a scalar Strata knows.
    static func scalar(_ value: Any, for type: AttributeType) throws -> Value? {
        let raw: Value
        switch value {
        case let v as Bool: raw = .bool(v)
        case let v as String: raw = .string(v)
        case let v as Int: raw = .int64(Int64(v))
        case let v as Int64: raw = .int64(v)
        case let v as Int32: raw = .int32(v)
        case let v as Int16: raw = .int16(v)
        case let v as Int8: raw = .int16(Int16(v))
        case let v as UInt8: raw = .int16(Int16(v))
        case let v as UInt16: raw = .int64(Int64(v))
        case let v as UInt32: raw = .int64(Int64(v))
        case let v as Double: raw = .double(v)
        case let v as Float: raw = .float(v)
        case let v as Date: raw = .date(v)
        case let v as Data: raw = .data(v)
        case let v as UUID: raw = .uuid(v)
        case let v as URL: raw = .url(v)
        case let v as Decimal: raw = .decimal(v)
        case let v as any RawRepresentable<String>: raw = .string(v.rawValue)
        case let v as any RawRepresentable<Int>: raw = .int64(Int64(v.rawValue))
        default: return nil
        }
        if case .codable = type { return nil }
        return type.coerce(raw) ?? raw
    }
}

final class RowEncoder: Encoder {
    let binding: EntityBinding
    var values: [Value]
    var links: [Int: [UInt64]] = [:]
    var error: (any Error)?
    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]

    init(binding: EntityBinding) {
        self.binding = binding
        self.values = binding.initialValues.withOwnStorage()
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RowEncodingContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        fail(StoreError.typeMismatch(expected: "a struct or class with named properties for entity \(binding.name)", actual: "an array"))
        return IgnoringContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        fail(StoreError.typeMismatch(expected: "a struct or class with named properties for entity \(binding.name)", actual: "a single value"))
        return IgnoringContainer()
    }

    func fail(_ e: any Error) { if error == nil { error = e } }

    func set(_ key: String, _ value: Any?) throws {
        if let r = binding.relationshipIndex[key] {
            switch value {
            case nil: links[r] = []
            case let id as ObjectID: links[r] = [id.rawValue]
            case let id as ObjectID?: links[r] = id.map { [$0.rawValue] } ?? []
            case let ids as [ObjectID]: links[r] = ids.map(\.rawValue)
            default:
                throw StoreError.typeMismatch(expected: "ObjectID or [ObjectID] for relationship \(binding.name).\(key)", actual: "\(type(of: value!))")
            }
            return
        }
        guard let a = binding.position(of: key) else {
            if key == "id", value == nil || value is ObjectID || value is ObjectID? { return }
            throw StoreError.unknownAttribute(entity: binding.name, name: key)
        }
        guard let value else { values[a] = .null; return }
        let type = binding.attributeTypes[a]
        if let scalar = try TypedEncoding.scalar(value, for: type) {
            values[a] = scalar
        } else if case .codable = type, let encodable = value as? any Encodable {
            values[a] = .codable(try CanonicalJSON.encode(encodable))
        } else {
            throw StoreError.invalidValue(entity: binding.name, attribute: key, expected: type.name, actual: "\(Swift.type(of: value))")
        }
    }
}

private struct RowEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: RowEncoder
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { try encoder.set(key.stringValue, nil) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { try encoder.set(key.stringValue, value) }

    // Synthesized `Encodable` skips nil optionals through `encodeIfPresent`; a stored object must get them as
    // null (not the attribute's default) and a nil to-one relationship must be unlinked, so nil is encoded.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encoder.set(key.stringValue, value) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        encoder.fail(StoreError.typeMismatch(expected: "a stored value for \(encoder.binding.name).\(key.stringValue)", actual: "a nested container"))
        return KeyedEncodingContainer(IgnoringKeyedContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.fail(StoreError.typeMismatch(expected: "a stored value for \(encoder.binding.name).\(key.stringValue)", actual: "a nested container"))
        return IgnoringContainer()
    }

    mutating func superEncoder() -> any Encoder { encoder }
    mutating func superEncoder(forKey key: Key) -> any Encoder { encoder }
}

/// Accepts and drops values after an error was recorded (an Encoder cannot throw from container creation).
private struct IgnoringContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(IgnoringKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { IgnoringContainer() }
    mutating func superEncoder() -> any Encoder { IgnoringEncoder() }
}

private struct IgnoringKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(IgnoringKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { IgnoringContainer() }
    mutating func superEncoder() -> any Encoder { IgnoringEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { IgnoringEncoder() }
}

private struct IgnoringEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> { KeyedEncodingContainer(IgnoringKeyedContainer<Key>()) }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { IgnoringContainer() }
    func singleValueContainer() -> any SingleValueEncodingContainer { IgnoringContainer() }
}
