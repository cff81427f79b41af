import Foundation
import Strata

/// A position in the bytes of one JSON text, read token by token for ``ObjectLineParser``.
///
/// Each reading function returns nil (or false) when the text at the position is not what it reads, or is
/// something it does not read exactly as `JSONDecoder` would: the parser then leaves the line to the slow
/// path. The bytes are borrowed: a cursor is used only while its line's buffer is alive.
struct JSONCursor {
    private let p: UnsafePointer<UInt8>
    private let count: Int
    private var i = 0

    init(_ p: UnsafePointer<UInt8>, count: Int) {
        self.p = p
        self.count = count
    }

    // MARK: Structure

    private mutating func skipSpace() {
        while i < count {
            let b = p[i]
            guard b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D else { return }
            i += 1
        }
    }

    /// The next byte that is not white space, not consumed.
    mutating func peek() -> UInt8? {
        skipSpace()
        return i < count ? p[i] : nil
    }

    /// Consumes the byte `peek()` returned.
    mutating func advance() { i += 1 }

    /// Consumes `byte` (after white space), or returns false.
    mutating func eat(_ byte: UInt8) -> Bool {
        skipSpace()
        guard i < count, p[i] == byte else { return false }
        i += 1
        return true
    }

    /// Whether only white space is left.
    mutating func atEnd() -> Bool {
        skipSpace()
        return i == count
    }

    /// Consumes `null`, `true` or `false`.
    mutating func literal(_ word: StaticString) -> Bool {
        skipSpace()
        let n = word.utf8CodeUnitCount
        guard count - i >= n, memcmp(p + i, word.utf8Start, n) == 0 else { return false }
        i += n
        return true
    }

    // MARK: Strings

    /// A string without escapes (a key): the range of its bytes. Nil for anything else.
    mutating func plainString() -> Range<Int>? {
        skipSpace()
        guard i < count, p[i] == UInt8(ascii: "\"") else { return nil }
        let start = i + 1
        var k = start
        while k < count {
            let b = p[k]
            if b == UInt8(ascii: "\"") {
                i = k + 1
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
        guard count - i >= n + 2, p[i] == UInt8(ascii: "\""), p[i + n + 1] == UInt8(ascii: "\"") else { return false }
        guard n == 0 || name.withUnsafeBufferPointer({ memcmp(p + i + 1, $0.baseAddress!, n) }) == 0 else { return false }
        i += n + 2
        return true
    }

    /// Whether the bytes of `range` are `name`'s.
    func matches(_ range: Range<Int>, _ name: [UInt8]) -> Bool {
        guard range.count == name.count else { return false }
        return name.isEmpty || name.withUnsafeBufferPointer { memcmp(p + range.lowerBound, $0.baseAddress!, name.count) } == 0
    }

    /// A string, its escapes decoded; nil when it is not valid (a control character, a lone surrogate,
    /// bytes that are not UTF-8).
    mutating func string() -> String? {
        skipSpace()
        guard i < count, p[i] == UInt8(ascii: "\"") else { return nil }
        let start = i + 1
        var k = start
        var high: UInt8 = 0
        while k < count {
            let b = p[k]
            if b == UInt8(ascii: "\"") {
                i = k + 1
                let bytes = UnsafeBufferPointer(start: p + start, count: k - start)
                return high < 0x80 ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
            }
            if b == UInt8(ascii: "\\") {
                i = k
                return escapedString(from: start)
            }
            if b < 0x20 { return nil }
            high |= b
            k += 1
        }
        return nil
    }

    /// The rest of a string with escapes, from its first byte at `start` (`i` is at the first backslash).
    private mutating func escapedString(from start: Int) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(i - start + 16)
        out.append(contentsOf: UnsafeBufferPointer(start: p + start, count: i - start))
        while i < count {
            let b = p[i]
            if b == UInt8(ascii: "\"") {
                i += 1
                return String(validating: out, as: UTF8.self)
            }
            if b < 0x20 { return nil }
            guard b == UInt8(ascii: "\\") else {
                out.append(b)
                i += 1
                continue
            }
            guard i + 1 < count else { return nil }
            let e = p[i + 1]
            i += 2
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
                    guard i + 1 < count, p[i] == UInt8(ascii: "\\"), p[i + 1] == UInt8(ascii: "u") else { return nil }
                    i += 2
                    guard let low = hex4(), low >= 0xDC00 && low < 0xE000 else { return nil }
                    scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if unit >= 0xDC00 && unit < 0xE000 {
                    return nil
                }
                guard let s = Unicode.Scalar(scalar) else { return nil }
                out.append(contentsOf: UTF8.encode(s)!)
            default:
                return nil
            }
        }
        return nil
    }

    private mutating func hex4() -> UInt16? {
        guard count - i >= 4 else { return nil }
        var v: UInt16 = 0
        for k in 0..<4 {
            let b = p[i + k]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: return nil
            }
            v = v << 4 | UInt16(d)
        }
        i += 4
        return v
    }

    /// A UUID string in its canonical form (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`, either case), read from
    /// the bytes; nil (nothing consumed) for anything else, which `UUID(uuidString:)` then reads.
    private mutating func uuid() -> UUID? {
        guard count - i >= 38, p[i] == UInt8(ascii: "\""), p[i + 37] == UInt8(ascii: "\"") else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let ok = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var k = i + 1
            for b in 0..<16 {
                if b == 4 || b == 6 || b == 8 || b == 10 {
                    guard p[k] == UInt8(ascii: "-") else { return false }
                    k += 1
                }
                guard let high = Self.hexValue(p[k]), let low = Self.hexValue(p[k + 1]) else { return false }
                out[b] = high << 4 | low
                k += 2
            }
            return true
        }
        guard ok else { return nil }
        i += 38
        return UUID(uuid: bytes)
    }

    @inline(__always)
    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Numbers

    /// A number: an integer when written as one (no fraction, no exponent) and within Int64's range, else a
    /// Double read exactly (correctly rounded). Nil for `-0`, for integers out of range, and for values
    /// that overflow or underflow a Double: the slow path words those.
    mutating func number() -> (value: JSONValue, isPlainInteger: Bool)? {
        skipSpace()
        let start = i
        var k = i
        let negative = k < count && p[k] == UInt8(ascii: "-")
        if negative { k += 1 }
        guard k < count else { return nil }
        let digitsStart = k
        if p[k] == UInt8(ascii: "0") {
            k += 1
        } else if p[k] >= UInt8(ascii: "1") && p[k] <= UInt8(ascii: "9") {
            while k < count, p[k] >= UInt8(ascii: "0") && p[k] <= UInt8(ascii: "9") { k += 1 }
        } else {
            return nil
        }
        let integerEnd = k
        var mantissaEnd = k
        var plain = true
        if k < count, p[k] == UInt8(ascii: ".") {
            plain = false
            k += 1
            guard k < count, p[k] >= UInt8(ascii: "0") && p[k] <= UInt8(ascii: "9") else { return nil }
            while k < count, p[k] >= UInt8(ascii: "0") && p[k] <= UInt8(ascii: "9") { k += 1 }
            mantissaEnd = k
        }
        if k < count, p[k] == UInt8(ascii: "e") || p[k] == UInt8(ascii: "E") {
            plain = false
            k += 1
            if k < count, p[k] == UInt8(ascii: "+") || p[k] == UInt8(ascii: "-") { k += 1 }
            guard k < count, p[k] >= UInt8(ascii: "0") && p[k] <= UInt8(ascii: "9") else { return nil }
            while k < count, p[k] >= UInt8(ascii: "0") && p[k] <= UInt8(ascii: "9") { k += 1 }
        }
        if plain {
            // Accumulated on the negative side, so that Int64.min is read too.
            var v: Int64 = 0
            for d in digitsStart..<integerEnd {
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (s, o2) = m.subtractingReportingOverflow(Int64(p[d] - UInt8(ascii: "0")))
                guard !o1 && !o2 else { return nil }
                v = s
            }
            if negative {
                guard v != 0 else { return nil }
            } else {
                guard v != Int64.min else { return nil }
                v = -v
            }
            i = k
            return (.integer(v), true)
        }
        if let d = Self.exactDouble(p, digitsStart..<integerEnd, fraction: integerEnd < mantissaEnd ? integerEnd + 1..<mantissaEnd : nil,
                                    exponent: mantissaEnd < k ? mantissaEnd + 1..<k : nil, negative: negative) {
            i = k
            return (.number(d), false)
        }
        let text = String(decoding: UnsafeBufferPointer(start: p + start, count: k - start), as: UTF8.self)
        guard let d = Double(text), d.isFinite else { return nil }
        if d == 0 {
            // An underflow to zero is not the number written.
            for m in digitsStart..<mantissaEnd where p[m] >= UInt8(ascii: "1") && p[m] <= UInt8(ascii: "9") { return nil }
        }
        i = k
        return (.number(d), false)
    }

    /// The common decimals without the general conversion: when the digits make an integer w ≤ 2^53 and the
    /// decimal exponent e is within ±22, w and 10^|e| are exact doubles and one IEEE multiplication or
    /// division rounds w × 10^e correctly — the result `strtod` gives. Nil otherwise.
    private static func exactDouble(_ p: UnsafePointer<UInt8>, _ integer: Range<Int>, fraction: Range<Int>?, exponent: Range<Int>?,
                                    negative: Bool) -> Double? {
        var w: UInt64 = 0
        var digits = 0
        for k in integer {
            w = w &* 10 &+ UInt64(p[k] - UInt8(ascii: "0"))
            if w != 0 { digits += 1 }
        }
        var scale = 0
        if let fraction {
            for k in fraction {
                w = w &* 10 &+ UInt64(p[k] - UInt8(ascii: "0"))
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
            if p[k] == UInt8(ascii: "+") || p[k] == UInt8(ascii: "-") {
                negativeExponent = p[k] == UInt8(ascii: "-")
                k += 1
            }
            while k < exponent.upperBound {
                e = e * 10 + Int(p[k] - UInt8(ascii: "0"))
                guard e < 1000 else { return nil }
                k += 1
            }
            scale += negativeExponent ? -e : e
        }
        guard scale >= -22 && scale <= 22 else { return nil }
        let powers = powersOfTen
        let m = Double(w)
        let d = scale < 0 ? m / powers[-scale] : m * powers[scale]
        return negative ? -d : d
    }

    private static let powersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13,
                                                1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

    /// An object ID: an integer above zero, written as one.
    mutating func positiveInteger() -> UInt64? {
        guard let (value, plain) = number(), plain, case .integer(let n) = value, n > 0 else { return nil }
        return UInt64(n)
    }

    // MARK: Values

    /// An attribute's value in its documented JSON form, typed as ``ValueJSON/value(from:type:)`` types it.
    /// Nil for Codable attributes' values (but null), arrays and objects, and whatever that function refuses.
    mutating func value(for type: AttributeType) -> Value? {
        guard let next = peek() else { return nil }
        if case .codable = type {
            // A Codable value is any JSON, kept in canonical form: the slow path reads it.
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
