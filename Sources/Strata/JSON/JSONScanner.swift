import Foundation

/// A position in the bytes of one JSON text, read token by token: the library's one byte scanner of JSON.
///
/// Two kinds of reading share it:
/// - *decoding* tokens exactly as `JSONDecoder` would (``string()``, ``number()``, ``uuid()``, literals), for
///   the interchange's object lines (``ObjectLineParser``); each function returns nil (or false) when the
///   text at the position is not what it reads, or is something it does not read exactly as `JSONDecoder`
///   would, and the caller then takes the decoding path;
/// - *locating* values without decoding them (``quotedString()``, ``skipValue()``), for the byte-level
///   reshapes of Codable values (``JSONObjectMembers``), whose input is canonical JSON.
///
/// The bytes are borrowed: a scanner is used only while its buffer is alive. White space is skipped before
/// every token.
struct JSONScanner {
    private let bytes: UnsafeBufferPointer<UInt8>
    /// The offset of the next byte to read.
    private(set) var position = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes.assumingMemoryBound(to: UInt8.self)
    }

    private var count: Int { bytes.count }

    // MARK: Structure

    /// JSON's insignificant white space.
    @inline(__always)
    static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

    mutating func skipSpace() {
        while position < count, Self.isSpace(bytes[position]) { position += 1 }
    }

    /// The next byte that is not white space, not consumed.
    mutating func peek() -> UInt8? {
        skipSpace()
        return position < count ? bytes[position] : nil
    }

    /// Consumes the byte `peek()` returned.
    mutating func advance() { position += 1 }

    /// Consumes `byte` (after white space), or returns false.
    mutating func eat(_ byte: UInt8) -> Bool {
        skipSpace()
        guard position < count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// Whether only white space is left.
    mutating func atEnd() -> Bool {
        skipSpace()
        return position == count
    }

    /// Consumes `null`, `true` or `false`.
    mutating func literal(_ word: StaticString) -> Bool {
        skipSpace()
        let n = word.utf8CodeUnitCount
        guard count - position >= n else { return false }
        let text = word.utf8Start
        for k in 0..<n where bytes[position + k] != text[k] { return false }
        position += n
        return true
    }

    // MARK: Strings

    /// A string without escapes (a key): the range of its bytes, quotes excluded. Nil for anything else.
    mutating func plainString() -> Range<Int>? {
        skipSpace()
        guard position < count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let start = position + 1
        var k = start
        while k < count {
            let b = bytes[k]
            if b == UInt8(ascii: "\"") {
                position = k + 1
                return start..<k
            }
            if b == UInt8(ascii: "\\") || b < 0x20 { return nil }
            k += 1
        }
        return nil
    }

    /// Consumes the key `name` (a string of exactly those bytes, no escapes) if it is next; false, consuming
    /// nothing but white space, otherwise.
    mutating func key(_ name: [UInt8]) -> Bool {
        skipSpace()
        let n = name.count
        guard count - position >= n + 2, bytes[position] == UInt8(ascii: "\""), bytes[position + n + 1] == UInt8(ascii: "\"") else {
            return false
        }
        for k in 0..<n where bytes[position + 1 + k] != name[k] { return false }
        position += n + 2
        return true
    }

    /// Whether the bytes of `range` are `name`'s.
    func matches(_ range: Range<Int>, _ name: [UInt8]) -> Bool {
        guard range.count == name.count else { return false }
        for k in 0..<name.count where bytes[range.lowerBound + k] != name[k] { return false }
        return true
    }

    /// A string, its escapes decoded; nil when it is not valid (a control character, a lone surrogate,
    /// bytes that are not UTF-8).
    mutating func string() -> String? {
        skipSpace()
        guard position < count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        let start = position + 1
        var k = start
        var high: UInt8 = 0
        while k < count {
            let b = bytes[k]
            if b == UInt8(ascii: "\"") {
                position = k + 1
                let text = UnsafeBufferPointer(rebasing: bytes[start..<k])
                return high < 0x80 ? String(decoding: text, as: UTF8.self) : String(validating: text, as: UTF8.self)
            }
            if b == UInt8(ascii: "\\") {
                position = k
                return escapedString(from: start)
            }
            if b < 0x20 { return nil }
            high |= b
            k += 1
        }
        return nil
    }

    /// The rest of a string with escapes, from its first byte at `start` (`position` is at the first backslash).
    private mutating func escapedString(from start: Int) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(position - start + 16)
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        while position < count {
            let b = bytes[position]
            if b == UInt8(ascii: "\"") {
                position += 1
                return String(validating: out, as: UTF8.self)
            }
            if b < 0x20 { return nil }
            guard b == UInt8(ascii: "\\") else {
                out.append(b)
                position += 1
                continue
            }
            guard position + 1 < count else { return nil }
            let e = bytes[position + 1]
            position += 2
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hex4() else { return nil }
                var scalar = UInt32(unit)
                if unit >= 0xD800 && unit < 0xDC00 {
                    guard position + 1 < count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else { return nil }
                    position += 2
                    guard let low = hex4(), low >= 0xDC00 && low < 0xE000 else { return nil }
                    scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if unit >= 0xDC00 && unit < 0xE000 {
                    return nil
                }
                guard let s = Unicode.Scalar(scalar) else { return nil }
                UTF8.encode(s) { out.append($0) }
            default:
                return nil
            }
        }
        return nil
    }

    private mutating func hex4() -> UInt16? {
        guard count - position >= 4 else { return nil }
        var v: UInt16 = 0
        for k in 0..<4 {
            guard let d = HexDigit.value(bytes[position + k]) else { return nil }
            v = v << 4 | UInt16(d)
        }
        position += 4
        return v
    }

    /// A UUID string in its canonical form (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`, either case), read from
    /// the bytes; nil (nothing consumed but white space) for anything else, which `UUID(uuidString:)` then reads.
    mutating func uuid() -> UUID? {
        skipSpace()
        guard count - position >= 38, bytes[position] == UInt8(ascii: "\""), bytes[position + 37] == UInt8(ascii: "\"") else { return nil }
        var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let start = position + 1
        let text = bytes
        let ok = withUnsafeMutableBytes(of: &value) { out -> Bool in
            var k = start
            for b in 0..<16 {
                if b == 4 || b == 6 || b == 8 || b == 10 {
                    guard text[k] == UInt8(ascii: "-") else { return false }
                    k += 1
                }
                guard let high = HexDigit.value(text[k]), let low = HexDigit.value(text[k + 1]) else { return false }
                out[b] = high << 4 | low
                k += 2
            }
            return true
        }
        guard ok else { return nil }
        position += 38
        return UUID(uuid: value)
    }

    // MARK: Locating values without decoding them

    /// A string, quotes included, its escapes skipped but not decoded (or checked); nil when it does not end
    /// or holds a control character.
    mutating func quotedString() -> Range<Int>? {
        skipSpace()
        let start = position
        guard position < count, bytes[position] == UInt8(ascii: "\"") else { return nil }
        var k = position + 1
        while k < count {
            let b = bytes[k]
            k += 1
            if b == UInt8(ascii: "\\") {
                k += 1
                continue
            }
            if b == UInt8(ascii: "\"") {
                position = k
                return start..<k
            }
            if b < 0x20 { return nil }
        }
        return nil
    }

    /// Any value, located and skipped: a string, an object or an array (nested strings respected), a number
    /// or a literal (up to the next delimiter, not checked).
    mutating func skipValue() -> Range<Int>? {
        skipSpace()
        let start = position
        guard position < count else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            return quotedString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while position < count {
                switch bytes[position] {
                case UInt8(ascii: "\""):
                    guard quotedString() != nil else { return nil }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        position += 1
                        return start..<position
                    }
                default:
                    break
                }
                position += 1
            }
            return nil
        default:
            while position < count {
                let b = bytes[position]
                if b == UInt8(ascii: ",") || b == UInt8(ascii: "}") || b == UInt8(ascii: "]") || Self.isSpace(b) { break }
                position += 1
            }
            return position > start ? start..<position : nil
        }
    }

    // MARK: Numbers

    @inline(__always)
    private func isDigit(_ k: Int) -> Bool { bytes[k] >= UInt8(ascii: "0") && bytes[k] <= UInt8(ascii: "9") }

    /// A number: an integer when written as one (no fraction, no exponent) and within Int64's range, else a
    /// Double read exactly (correctly rounded). Nil for `-0`, for integers out of range, and for values
    /// that overflow or underflow a Double: the decoding path words those.
    mutating func number() -> (value: JSONValue, isPlainInteger: Bool)? {
        skipSpace()
        let start = position
        var k = position
        let negative = k < count && bytes[k] == UInt8(ascii: "-")
        if negative { k += 1 }
        guard k < count else { return nil }
        let digitsStart = k
        if bytes[k] == UInt8(ascii: "0") {
            k += 1
        } else if bytes[k] >= UInt8(ascii: "1") && bytes[k] <= UInt8(ascii: "9") {
            while k < count, isDigit(k) { k += 1 }
        } else {
            return nil
        }
        let integerEnd = k
        var mantissaEnd = k
        var plain = true
        if k < count, bytes[k] == UInt8(ascii: ".") {
            plain = false
            k += 1
            guard k < count, isDigit(k) else { return nil }
            while k < count, isDigit(k) { k += 1 }
            mantissaEnd = k
        }
        if k < count, bytes[k] == UInt8(ascii: "e") || bytes[k] == UInt8(ascii: "E") {
            plain = false
            k += 1
            if k < count, bytes[k] == UInt8(ascii: "+") || bytes[k] == UInt8(ascii: "-") { k += 1 }
            guard k < count, isDigit(k) else { return nil }
            while k < count, isDigit(k) { k += 1 }
        }
        if plain {
            // Accumulated on the negative side, so that Int64.min is read too.
            var v: Int64 = 0
            for d in digitsStart..<integerEnd {
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.subtractingReportingOverflow(Int64(bytes[d] - UInt8(ascii: "0")))
                guard !o1 && !o2 else { return nil }
                v = s
            }
            if negative {
                guard v != 0 else { return nil }
            } else {
                guard v != Int64.min else { return nil }
                v = -v
            }
            position = k
            return (.integer(v), true)
        }
        if let d = exactDouble(digitsStart..<integerEnd, fraction: integerEnd < mantissaEnd ? integerEnd + 1..<mantissaEnd : nil,
                               exponent: mantissaEnd < k ? mantissaEnd + 1..<k : nil, negative: negative) {
            position = k
            return (.number(d), false)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<k]), as: UTF8.self)
        guard let d = Double(text), d.isFinite else { return nil }
        if d == 0 {
            // An underflow to zero is not the number written.
            for m in digitsStart..<mantissaEnd where bytes[m] >= UInt8(ascii: "1") && bytes[m] <= UInt8(ascii: "9") { return nil }
        }
        position = k
        return (.number(d), false)
    }

    /// The common decimals without the general conversion: when the digits make an integer w ≤ 2^53 and the
    /// decimal exponent e is within ±22, w and 10^|e| are exact doubles and one IEEE multiplication or
    /// division rounds w × 10^e correctly — the result `strtod` gives. Nil otherwise.
    private func exactDouble(_ integer: Range<Int>, fraction: Range<Int>?, exponent: Range<Int>?, negative: Bool) -> Double? {
        var w: UInt64 = 0
        var digits = 0
        for k in integer {
            w = w &* 10 &+ UInt64(bytes[k] - UInt8(ascii: "0"))
            if w != 0 { digits += 1 }
        }
        var scale = 0
        if let fraction {
            for k in fraction {
                w = w &* 10 &+ UInt64(bytes[k] - UInt8(ascii: "0"))
                if w != 0 { digits += 1 }
                scale -= 1
            }
        }
        // Up to 19 significant digits fit in 64 bits; the value must be exact as a double.
        guard digits <= 19, w <= 1 << 53 else { return nil }
        if let exponent {
            var e = 0
            var k = exponent.lowerBound
            var negativeExponent = false
            if bytes[k] == UInt8(ascii: "+") || bytes[k] == UInt8(ascii: "-") {
                negativeExponent = bytes[k] == UInt8(ascii: "-")
                k += 1
            }
            while k < exponent.upperBound {
                e = e * 10 + Int(bytes[k] - UInt8(ascii: "0"))
                guard e < 1000 else { return nil }
                k += 1
            }
            scale += negativeExponent ? -e : e
        }
        guard scale >= -22 && scale <= 22 else { return nil }
        let m = Double(w)
        let d = scale < 0 ? m / Self.powersOfTen[-scale] : m * Self.powersOfTen[scale]
        return negative ? -d : d
    }

    private static let powersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
                                                1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

    /// An object ID: an integer above zero, written as one.
    mutating func positiveInteger() -> UInt64? {
        guard let (value, plain) = number(), plain, case .integer(let n) = value, n > 0 else { return nil }
        return UInt64(n)
    }
}
