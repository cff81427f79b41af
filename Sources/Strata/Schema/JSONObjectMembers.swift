import Foundation

/// The top-level members of a JSON object, located in its bytes without decoding the values: what lets a
/// ``CodableReshape`` rename, remove and fill keys by moving byte ranges, values copied as they were written.
///
/// Output is canonical as ``CanonicalJSON`` writes it — keys sorted as `JSONEncoder`'s `.sortedKeys` sorts
/// them (by their UTF-8 bytes, not Swift's normalized `String` order), no whitespace — and values keep their
/// bytes. `parse` returns nil for
/// anything it does not handle simply (not an object, duplicate keys, malformed structure): the caller then
/// takes the decoding path.
struct JSONObjectMembers {
    /// A member: its key, the key's JSON text (quoted, escaped), and its value's JSON text.
    struct Member {
        var key: String
        var keyJSON: [UInt8]
        var value: [UInt8]
    }

    var members: [Member]

    /// The members of the object `bytes` holds, or nil (see the type's description).
    static func parse(_ bytes: UnsafeRawBufferPointer) -> JSONObjectMembers? {
        var scanner = Scanner(bytes: bytes)
        scanner.skipSpace()
        guard scanner.take(UInt8(ascii: "{")) else { return nil }
        var members: [Member] = []
        var seen: Set<String> = []
        scanner.skipSpace()
        if !scanner.take(UInt8(ascii: "}")) {
            while true {
                scanner.skipSpace()
                guard let keyRange = scanner.string(), let key = Self.key(UnsafeRawBufferPointer(rebasing: bytes[keyRange])),
                      seen.insert(key).inserted else { return nil }
                scanner.skipSpace()
                guard scanner.take(UInt8(ascii: ":")) else { return nil }
                scanner.skipSpace()
                guard let valueRange = scanner.value() else { return nil }
                members.append(Member(key: key, keyJSON: Array(bytes[keyRange]), value: Array(bytes[valueRange])))
                scanner.skipSpace()
                if scanner.take(UInt8(ascii: ",")) { continue }
                guard scanner.take(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        scanner.skipSpace()
        guard scanner.isAtEnd else { return nil }
        return JSONObjectMembers(members: members)
    }

    /// The key a quoted JSON string spells (escapes decoded only when there are any).
    private static func key(_ quoted: UnsafeRawBufferPointer) -> String? {
        let inner = UnsafeRawBufferPointer(rebasing: quoted[1..<(quoted.count - 1)])
        if !inner.contains(UInt8(ascii: "\\")) { return String(decoding: inner, as: UTF8.self) }
        return try? JSONDecoder().decode(String.self, from: Data(quoted))
    }

    /// The JSON text of a key, escaped as `JSONEncoder` escapes it.
    static func keyJSON(_ key: String) -> [UInt8] {
        let plain = key.utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 < 0x7F }
        if plain { return [UInt8(ascii: "\"")] + Array(key.utf8) + [UInt8(ascii: "\"")] }
        return (try? CanonicalJSON.encode(key)).map(Array.init) ?? [UInt8(ascii: "\"")] + Array(key.utf8) + [UInt8(ascii: "\"")]
    }

    /// The object's canonical JSON: members sorted by key.
    func serialized() -> Data {
        let sorted = members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(2 + sorted.reduce(0) { $0 + $1.keyJSON.count + $1.value.count + 2 })
        for (i, m) in sorted.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out += m.keyJSON
            out.append(UInt8(ascii: ":"))
            out += m.value
        }
        out.append(UInt8(ascii: "}"))
        return Data(out)
    }

    /// A forward scanner over JSON bytes that locates values without decoding them.
    private struct Scanner {
        let bytes: UnsafeRawBufferPointer
        var offset = 0

        var isAtEnd: Bool { offset >= bytes.count }

        /// JSON's insignificant whitespace.
        static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

        mutating func skipSpace() {
            while offset < bytes.count, Self.isSpace(bytes[offset]) { offset += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard offset < bytes.count, bytes[offset] == byte else { return false }
            offset += 1
            return true
        }

        /// A string, quotes included.
        mutating func string() -> Range<Int>? {
            let start = offset
            guard take(UInt8(ascii: "\"")) else { return nil }
            while offset < bytes.count {
                let b = bytes[offset]
                offset += 1
                if b == UInt8(ascii: "\\") { offset += 1; continue }
                if b == UInt8(ascii: "\"") { return start..<offset }
                if b < 0x20 { return nil }
            }
            return nil
        }

        /// Any value: a string, an object or array (nested strings respected), a number or a literal.
        mutating func value() -> Range<Int>? {
            let start = offset
            guard offset < bytes.count else { return nil }
            switch bytes[offset] {
            case UInt8(ascii: "\""):
                return string()
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while offset < bytes.count {
                    switch bytes[offset] {
                    case UInt8(ascii: "\""):
                        guard string() != nil else { return nil }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 { offset += 1; return start..<offset }
                    default:
                        break
                    }
                    offset += 1
                }
                return nil
            default:
                // A number or a literal: up to the next delimiter.
                while offset < bytes.count {
                    let b = bytes[offset]
                    if b == UInt8(ascii: ",") || b == UInt8(ascii: "}") || b == UInt8(ascii: "]") || Self.isSpace(b) { break }
                    offset += 1
                }
                return offset > start ? start..<offset : nil
            }
        }
    }
}
