import Foundation

/// The top-level members of a JSON object, located in its bytes without decoding the values (by the library's one
/// ``JSONScanner``): what lets a ``CodableReshape`` rename, remove and fill keys by moving byte ranges, values copied
/// as they were written.
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
        var scanner = JSONScanner(bytes)
        guard scanner.eat(UInt8(ascii: "{")) else { return nil }
        var members: [Member] = []
        var seen: Set<String> = []
        if !scanner.eat(UInt8(ascii: "}")) {
            while true {
                // The key located (its JSON text kept as written), then decoded.
                let before = scanner
                guard let keyRange = scanner.quotedString() else { return nil }
                var decoding = before
                guard let key = decoding.string(), seen.insert(key).inserted else { return nil }
                guard scanner.eat(UInt8(ascii: ":")), let valueRange = scanner.skipValue() else { return nil }
                members.append(Member(key: key, keyJSON: Array(bytes[keyRange]), value: Array(bytes[valueRange])))
                if scanner.eat(UInt8(ascii: ",")) { continue }
                guard scanner.eat(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        guard scanner.atEnd() else { return nil }
        return JSONObjectMembers(members: members)
    }

    /// The JSON text of a key, escaped as `JSONEncoder` escapes it (``JSONText``).
    static func keyJSON(_ key: String) -> [UInt8] { JSONText.quoted(key) }

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
}
