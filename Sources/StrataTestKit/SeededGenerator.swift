import Foundation
import Strata

/// A deterministic random number generator (SplitMix64): the same seed gives the same sequence on every
/// machine and run, so data made from it (fixtures, a failing random test) can be made again from the seed.
///
/// ```swift
/// var random = SeededGenerator(seed: 42)
/// let title = random.string(length: 12)
/// let value = random.value(of: .date)      // a random value for an attribute type
/// ```
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<upperBound`.
    public mutating func int(_ upperBound: Int) -> Int { Int.random(in: 0..<upperBound, using: &self) }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }

    /// A random element of a non-empty collection.
    public mutating func pick<C: Collection>(_ c: C) -> C.Element where C.Index == Int {
        c[c.startIndex + int(c.count)]
    }

    /// A string of `length` characters drawn from ASCII letters and a few multi-byte scalars.
    public mutating func string(length: Int) -> String {
        let alphabet: [Character] = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 é日本🙂") + ["e\u{301}"]
        var s = ""
        for _ in 0..<length { s.append(pick(alphabet)) }
        return s
    }

    /// `count` random bytes.
    public mutating func data(count: Int) -> Data {
        var d = Data(count: count)
        for i in 0..<count { d[i] = UInt8(truncatingIfNeeded: next()) }
        return d
    }

    /// A random version-4 UUID.
    public mutating func uuid() -> UUID {
        let a = next(), b = next()
        return UUID(uuid: (UInt8(truncatingIfNeeded: a), UInt8(truncatingIfNeeded: a >> 8), UInt8(truncatingIfNeeded: a >> 16),
                           UInt8(truncatingIfNeeded: a >> 24), UInt8(truncatingIfNeeded: a >> 32), UInt8(truncatingIfNeeded: a >> 40),
                           UInt8(truncatingIfNeeded: (a >> 48) & 0x0F | 0x40), UInt8(truncatingIfNeeded: a >> 56),
                           UInt8(truncatingIfNeeded: (b & 0x3F) | 0x80), UInt8(truncatingIfNeeded: b >> 8), UInt8(truncatingIfNeeded: b >> 16),
                           UInt8(truncatingIfNeeded: b >> 24), UInt8(truncatingIfNeeded: b >> 32), UInt8(truncatingIfNeeded: b >> 40),
                           UInt8(truncatingIfNeeded: b >> 48), UInt8(truncatingIfNeeded: b >> 56)))
    }

    /// A random, never null, value of `type`. Codable values are `{"tags":[…],"x":…}` documents.
    public mutating func value(of type: AttributeType) -> Value {
        switch type {
        case .int64: return .int64(Int64.random(in: -1_000_000...1_000_000, using: &self))
        case .int32: return .int32(Int32.random(in: -100_000...100_000, using: &self))
        case .int16: return .int16(Int16.random(in: Int16.min...Int16.max, using: &self))
        case .double: return .double(Double(Int.random(in: -100_000...100_000, using: &self)) / 8)
        case .float: return .float(Float(Int.random(in: -10_000...10_000, using: &self)) / 4)
        case .bool: return .bool(chance(0.5))
        case .string: return .string(string(length: int(12)))
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000_000...1_000_000_000, using: &self))))
        case .data: return .data(data(count: int(24)))
        case .uuid: return .uuid(uuid())
        case .url: return .url(URL(string: "https://example.com/\(int(1000))/p\(int(1000))") ?? URL(fileURLWithPath: "/"))
        case .decimal: return .decimal(Decimal(Int.random(in: -100_000...100_000, using: &self)) / 100)
        case .codable:
            let tags = (0..<int(3)).map { _ in "\"\(string(length: 3).unicodeScalars.filter(\.isASCII).map(String.init).joined())\"" }
            return .codable(Data("{\"tags\":[\(tags.joined(separator: ","))],\"x\":\(int(100))}".utf8))
        }
    }
}
