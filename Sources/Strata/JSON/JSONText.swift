import Foundation

/// Writes JSON text: the library's one JSON writer and string escaper, byte for byte the same for the same
/// value.
///
/// Strings keep non-ASCII characters as UTF-8 and escape only what JSON requires (`\"`, `\\`, `\n`, `\r`,
/// `\t`, `\b`, `\f`, other control characters as `\u00xx`): exactly what `JSONEncoder` writes with
/// `.withoutEscapingSlashes`, so a key written here sits in canonical JSON (``CanonicalJSON``) unchanged.
/// Object keys are sorted; a floating-point number that is an integer within Int64's range is written as that
/// integer, so that reading the text back (which yields an integer) and writing it again gives the same bytes.
enum JSONText {
    static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): writeInteger(i, into: &out)
        case .number(let d): writeNumber(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(members[key] ?? .null, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A short text form of a value for messages (at most 60 characters).
    static func short(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        write(value, into: &out)
        let text = String(decoding: out, as: UTF8.self)
        return text.count > 60 ? String(text.prefix(57)) + "..." : text
    }

    // MARK: Numbers

    static func writeNumber(_ d: Double, into out: inout [UInt8]) {
        if !d.isFinite {
            // Not representable in JSON; ValueJSON never produces these (it writes "nan", "inf").
            out.append(contentsOf: "null".utf8)
        } else if let i = Int64(exactly: d) {
            writeInteger(i, into: &out)
        } else {
            // Swift's description is the shortest text that reads back as the same Double.
            out.append(contentsOf: d.description.utf8)
        }
    }

    static func writeInteger(_ n: Int64, into out: inout [UInt8]) {
        if n < 0 { out.append(UInt8(ascii: "-")) }
        writeInteger(n.magnitude, into: &out)
    }

    static func writeInteger(_ n: UInt64, into out: inout [UInt8]) {
        if n < 10 {
            out.append(UInt8(ascii: "0") + UInt8(n))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var v = n
            var k = 20
            while v > 0 {
                k -= 1
                digits[k] = UInt8(ascii: "0") + UInt8(v % 10)
                v /= 10
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[k..<20]))
        }
    }

    // MARK: Strings

    static func writeString(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { writeString(UnsafeRawBufferPointer($0), into: &out) }
    }

    /// A string's JSON text, quotes included.
    static func quoted(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 2)
        writeString(s, into: &out)
        return out
    }

    /// A JSON string of UTF-8 bytes (runs without anything to escape are copied whole, eight bytes are
    /// checked at a time).
    static func writeString(_ bytes: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var runStart = 0
        let n = bytes.count
        var i = 0
        while i < n {
            // Eight bytes at a time while none needs escaping (a control character, a quote, a backslash).
            if i + 8 <= n {
                let w = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                if !mayNeedEscaping(w) {
                    i += 8
                    continue
                }
            }
            let byte = bytes[i]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                i += 1
                continue
            }
            if runStart < i { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart..<i])) }
            i += 1
            runStart = i
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0x08: out.append(contentsOf: "\\b".utf8)
            case 0x0C: out.append(contentsOf: "\\f".utf8)
            default:
                let hex: StaticString = "0123456789abcdef"
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex.utf8Start[Int(byte >> 4)])
                out.append(hex.utf8Start[Int(byte & 0xF)])
            }
        }
        if runStart < n { out.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[runStart...])) }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether one of the eight bytes of `w` is below 0x20, a quote or a backslash (exact: no byte that
    /// needs no escaping makes it true).
    @inline(__always)
    static func mayNeedEscaping(_ w: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let control = (w &- 0x20 &* ones) & ~w & high
        let q = w ^ (0x22 &* ones)
        let quote = (q &- ones) & ~q & high
        let b = w ^ (0x5C &* ones)
        let backslash = (b &- ones) & ~b & high
        return control | quote | backslash != 0
    }
}
