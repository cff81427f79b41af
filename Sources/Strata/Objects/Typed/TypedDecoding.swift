import Foundation

/// Decodes a `Persistable` value from a dynamic object (and, for relationship properties, its links).
enum TypedDecoding {
    static func decode<T: Decodable>(_ type: T.Type, from object: DynamicObject, context: ReadContext) throws -> T {
        try T(from: RowDecoder(object: object, context: context))
    }
}

final class RowDecoder: Decoder {
    let object: DynamicObject
    let context: ReadContext
    let codingPath: [any CodingKey] = []
    let userInfo: [CodingUserInfoKey: Any] = [:]

    init(object: DynamicObject, context: ReadContext) {
        self.object = object
        self.context = context
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowDecodingContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw StoreError.typeMismatch(expected: "an array", actual: "an object of \(object.entityName)")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw StoreError.typeMismatch(expected: "a single value", actual: "an object of \(object.entityName)")
    }
}

private struct RowDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: RowDecoder
    var codingPath: [any CodingKey] { [] }
    var binding: EntityBinding { decoder.object.binding }

    var allKeys: [Key] {
        (binding.attributeNames + binding.relationships.map(\.name) + ["id"]).compactMap { Key(stringValue: $0) }
    }

    func contains(_ key: Key) -> Bool {
        let k = key.stringValue
        return binding.position(of: k) != nil || binding.relationshipIndex[k] != nil || k == "id"
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        let k = key.stringValue
        if let a = binding.position(of: k) { return decoder.object.values[a].isNull }
        if let r = binding.relationshipIndex[k] {
            let rel = binding.relationships[r]
            if rel.isToMany { return false }
            return try decoder.context.firstLinkedID(decoder.object.id.rawValue, rel) == nil
        }
        return k != "id"
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        let k = key.stringValue
        if let r = binding.relationshipIndex[k] {
            let ids = try decoder.context.linkedIDs(decoder.object.id.rawValue, binding.relationships[r]).map(ObjectID.init(rawValue:))
            if let v = ids as? T { return v }
            if let first = ids.first, let v = first as? T { return v }
            throw StoreError.typeMismatch(expected: "\(T.self) for relationship \(binding.name).\(k)", actual: "\(ids.count) linked objects")
        }
        if k == "id", binding.position(of: k) == nil, let v = decoder.object.id as? T { return v }
        guard let a = binding.position(of: k) else {
            throw StoreError.unknownAttribute(entity: binding.name, name: k)
        }
        let value = decoder.object.values[a]
        if let v = try Self.swiftValue(value, as: T.self) { return v }
        if case .codable(let data) = value { return try JSONDecoder().decode(T.self, from: data) }
        // Enums backed by a String or an Int, stored in string or integer attributes.
        if case .string(let s) = value, let type = T.self as? any RawRepresentable<String>.Type {
            if let v = type.init(rawValue: s) as? T { return v }
            throw StoreError.invalidValue(entity: binding.name, attribute: k, expected: "a raw value of \(T.self)", actual: "\"\(s)\"")
        }
        if let i = value.int64Value, let type = T.self as? any RawRepresentable<Int>.Type, let n = Int(exactly: i) {
            if let v = type.init(rawValue: n) as? T { return v }
            throw StoreError.invalidValue(entity: binding.name, attribute: k, expected: "a raw value of \(T.self)", actual: "\(i)")
        }
        throw StoreError.invalidValue(entity: binding.name, attribute: k, expected: "\(T.self)", actual: value.caseName)
    }

    static func swiftValue<T>(_ value: Value, as type: T.Type) throws -> T? {
        switch value {
        case .bool(let v): return v as? T
        case .string(let v): return v as? T
        case .date(let v): return v as? T
        case .data(let v): return v as? T
        case .uuid(let v): return v as? T
        case .url(let v): return v as? T
        case .decimal(let v): return v as? T
        case .double(let v): return (v as? T) ?? (Float(v) as? T)
        case .float(let v): return (v as? T) ?? (Double(v) as? T)
        default:
            guard let i = value.int64Value else { return nil }
            if T.self == Int.self { return Int(exactly: i) as? T }
            if T.self == Int64.self { return i as? T }
            if T.self == Int32.self { return Int32(exactly: i) as? T }
            if T.self == Int16.self { return Int16(exactly: i) as? T }
            if T.self == Int8.self { return Int8(exactly: i) as? T }
            if T.self == UInt8.self { return UInt8(exactly: i) as? T }
            if T.self == UInt16.self { return UInt16(exactly: i) as? T }
            if T.self == UInt32.self { return UInt32(exactly: i) as? T }
            if T.self == UInt64.self { return UInt64(exactly: i) as? T }
            if T.self == UInt.self { return UInt(exactly: i) as? T }
            if T.self == Double.self { return Double(i) as? T }
            return nil
        }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw StoreError.typeMismatch(expected: "a stored value for \(binding.name).\(key.stringValue)", actual: "a nested container")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw StoreError.typeMismatch(expected: "a stored value for \(binding.name).\(key.stringValue)", actual: "a nested container")
    }

    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
}
