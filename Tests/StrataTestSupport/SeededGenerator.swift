import Foundation
import Strata

/// A deterministic random number generator (SplitMix64): the same seed gives the same sequence on every
/// machine and run, so a failing random test can be replayed from the seed in its message.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

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

    /// A random element.
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

    /// Random bytes.
    public mutating func data(count: Int) -> Data {
        var d = Data(count: count)
        for i in 0..<count { d[i] = UInt8(truncatingIfNeeded: next()) }
        return d
    }

    /// A deterministic UUID.
    public mutating func uuid() -> UUID {
        let a = next(), b = next()
        var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &u) { p in
            p.storeBytes(of: a, toByteOffset: 0, as: UInt64.self)
            p.storeBytes(of: b, toByteOffset: 8, as: UInt64.self)
        }
        return UUID(uuid: u)
    }

    /// A random value of `type` (never null). Codable values are `{"x":…,"tags":[…]}` documents.
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
        case .url: return .url(URL(string: "https://example.com/\(int(1000))/\(string(length: 3).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "x")")!)
        case .decimal: return .decimal(Decimal(Int.random(in: -100_000...100_000, using: &self)) / 100)
        case .codable:
            let doc = TestDocument(x: int(100), tags: (0..<int(3)).map { _ in string(length: 3) })
            return try! Value.encoding(doc)
        }
    }
}

/// A small nested Codable value used by generators and typed-API tests.
public struct TestDocument: Codable, Hashable, Sendable {
    public var x: Int
    public var tags: [String]
    public init(x: Int, tags: [String]) { self.x = x; self.tags = tags }
}
