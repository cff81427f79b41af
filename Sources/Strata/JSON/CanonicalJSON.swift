import Foundation

/// The canonical JSON of Codable values (``Value/codable(_:)``, ``JSONValue/serialized()``): `JSONEncoder` with sorted
/// keys (by their UTF-8 bytes) and unescaped slashes, no insignificant white space. Its strings are escaped exactly as
/// ``JSONText`` escapes them.
enum CanonicalJSON {
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }
}
