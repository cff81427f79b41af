import Foundation

/// A fast deterministic generator (SplitMix64): the same seed gives the same data set on every machine.
public struct SplitMix64: Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    @inline(__always)
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `0..<bound` (bound > 0).
    @inline(__always)
    public mutating func next(below bound: UInt64) -> UInt64 {
        next().multipliedFullWidth(by: bound).high
    }
}

/// One post of the benchmark's data set: what a real app's object holds — an identifier, a date, a short
/// string (a colour such as `#A1B2C3`), a text of about 60 bytes, and an `Int32` that the rewrite scenario
/// widens to `Int64`.
public struct PostRecord: Sendable, Equatable {
    public var uuid: UUID
    /// Seconds since 2001-01-01 (Foundation's reference date), as Strata and the raw baselines store it.
    public var date: Double
    /// Exactly 7 ASCII bytes.
    public var color: String
    /// 56 to 66 ASCII bytes of words.
    public var content: String
    public var views: Int32

    public var dateValue: Date { Date(timeIntervalSinceReferenceDate: date) }
}

/// The data set: record `i` (1-based, the object ID every system stores it under) is a pure function of the
/// seed and `i`, so any system and any process can generate or check any record without keeping the set.
public struct DataSet: Sendable {
    public let seed: UInt64
    public let count: Int

    public init(seed: UInt64, count: Int) {
        self.seed = seed
        self.count = count
    }

    private static let words: [String] = [
        "lorem", "ipsum", "dolor", "sit", "amet", "swift", "store", "layout", "record", "batch", "page", "tree",
        "model", "version", "field", "value", "object", "entity", "cursor", "commit", "migrate", "index", "post",
        "section", "colour", "title", "body", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "alpha",
        "beta", "gamma", "delta", "kilo", "lima", "mike", "oscar", "papa", "tango", "zulu", "river", "stone",
    ]
    private static let wordBytes: [[UInt8]] = words.map { Array($0.utf8) }
    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Record `i` (1...count).
    public func record(_ i: Int) -> PostRecord {
        var rng = SplitMix64(seed: seed ^ (UInt64(i) &* 0xD1B5_4A32_D192_ED03))
        let a = rng.next(), b = rng.next()
        var u = withUnsafeBytes(of: (a, b)) { raw -> uuid_t in
            var t: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &t) { $0.copyMemory(from: raw) }
            return t
        }
        u.6 = (u.6 & 0x0F) | 0x40  // version 4
        u.8 = (u.8 & 0x3F) | 0x80  // RFC 4122 variant
        // Dates within about ten years after 2015-01-01, with millisecond precision.
        let date = 441_763_200.0 + Double(rng.next(below: 315_360_000_000)) / 1000
        let c = rng.next()
        var color = [UInt8](repeating: UInt8(ascii: "#"), count: 7)
        for k in 0..<6 { color[k + 1] = Self.hex[Int((c >> (4 * UInt64(k))) & 0xF)] }
        let target = 56 + Int(rng.next(below: 11))
        var text = [UInt8]()
        text.reserveCapacity(target + 8)
        while text.count < target {
            if !text.isEmpty { text.append(UInt8(ascii: " ")) }
            text.append(contentsOf: Self.wordBytes[Int(rng.next(below: UInt64(Self.wordBytes.count)))])
        }
        let content = String(decoding: text[0..<target], as: UTF8.self)
        let views = Int32(truncatingIfNeeded: rng.next(below: 1_000_000))
        return PostRecord(uuid: UUID(uuid: u), date: date, color: String(decoding: color, as: UTF8.self),
                          content: content, views: views)
    }

    /// Records `range` (a batch), generated before a batch's timed work starts.
    public func batch(_ range: ClosedRange<Int>) -> [PostRecord] { range.map(record) }

    /// The batches of the data set, `size` records each.
    public func batches(of size: Int) -> [ClosedRange<Int>] {
        stride(from: 1, through: count, by: size).map { $0...min(count, $0 + size - 1) }
    }

    /// The title the custom split gives the section made from a post: the first four characters and "...".
    public static func sectionTitle(_ content: String) -> String { String(content.prefix(4)) + "..." }

    /// The IDs the `get` scenario fetches, uniform in 1...count, from their own stream of the seed.
    public func randomIDs(_ n: Int, _ body: (UInt64) throws -> Void) rethrows {
        var rng = SplitMix64(seed: seed ^ 0x6765_7473)
        for _ in 0..<n { try body(1 + rng.next(below: UInt64(count))) }
    }
}

/// Mixes what a scan read into one number, so that no read can be optimised away and the systems can be
/// compared: every system folds the same fields of the same records.
public struct Fold: Sendable {
    public var value: UInt64 = 0
    public init() {}

    @inline(__always) public mutating func add(_ x: UInt64) { value = (value &+ x) &* 0x100_0000_01B3 }
    @inline(__always) public mutating func add(_ d: Double) { add(d.bitPattern) }
    @inline(__always) public mutating func add(_ i: Int32) { add(UInt64(UInt32(bitPattern: i))) }
    @inline(__always) public mutating func add(_ i: Int64) { add(UInt64(bitPattern: i)) }
    @inline(__always) public mutating func add(uuid u: uuid_t) {
        withUnsafeBytes(of: u) { add($0.loadUnaligned(as: UInt64.self) ^ $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
    }
    /// Folds a text's length and the sum of its bytes: every byte is read.
    @inline(__always) public mutating func add(text bytes: UnsafeRawBufferPointer) {
        var sum: UInt64 = 0
        for b in bytes { sum &+= UInt64(b) }
        add(UInt64(bytes.count) << 32 | sum)
    }
    public mutating func add(text s: String) {
        var s = s
        s.withUTF8 { add(text: UnsafeRawBufferPointer($0)) }
    }
}
