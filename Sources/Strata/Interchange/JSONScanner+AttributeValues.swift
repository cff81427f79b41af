import Foundation

extension JSONScanner {
    /// An attribute's value in its documented JSON form, typed as ``ValueJSON/value(from:type:)`` types it.
    /// Nil for Codable attributes' values (but null), arrays and objects, and whatever that function refuses:
    /// the object line's decoding path then reads the line.
    mutating func value(for type: AttributeType) -> Value? {
        guard let next = peek() else { return nil }
        if case .codable = type {
            // A Codable value is any JSON, kept in canonical form: the decoding path reads it.
            return next == UInt8(ascii: "n") && literal("null") ? .null : nil
        }
        if case .uuid = type, next == UInt8(ascii: "\""), let u = uuid() { return .uuid(u) }
        switch next {
        case UInt8(ascii: "n"):
            return literal("null") ? .null : nil
        case UInt8(ascii: "\""):
            guard let s = string() else { return nil }
            return try? ValueJSON.value(from: .string(s), type: type)
        case UInt8(ascii: "t"):
            return literal("true") ? try? ValueJSON.value(from: .bool(true), type: type) : nil
        case UInt8(ascii: "f"):
            return literal("false") ? try? ValueJSON.value(from: .bool(false), type: type) : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let (json, plain) = number() else { return nil }
            // A fraction or an exponent where an integer is due: JSONDecoder's reading decides.
            if type.isInteger && !plain { return nil }
            return try? ValueJSON.value(from: json, type: type)
        default:
            return nil
        }
    }
}
