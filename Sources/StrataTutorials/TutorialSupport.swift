import Foundation

/// A small deterministic random generator (SplitMix64), so fixtures are the same on every run.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    public mutating func uuid() -> UUID {
        let a = next(), b = next()
        return UUID(uuid: (UInt8(truncatingIfNeeded: a), UInt8(truncatingIfNeeded: a >> 8), UInt8(truncatingIfNeeded: a >> 16),
                           UInt8(truncatingIfNeeded: a >> 24), UInt8(truncatingIfNeeded: a >> 32), UInt8(truncatingIfNeeded: a >> 40),
                           UInt8(truncatingIfNeeded: (a >> 48) & 0x0F | 0x40), UInt8(truncatingIfNeeded: a >> 56),
                           UInt8(truncatingIfNeeded: (b & 0x3F) | 0x80), UInt8(truncatingIfNeeded: b >> 8), UInt8(truncatingIfNeeded: b >> 16),
                           UInt8(truncatingIfNeeded: b >> 24), UInt8(truncatingIfNeeded: b >> 32), UInt8(truncatingIfNeeded: b >> 40),
                           UInt8(truncatingIfNeeded: b >> 48), UInt8(truncatingIfNeeded: b >> 56)))
    }
}

enum TutorialText {
    static let words = ["strata", "store", "migrate", "layer", "record", "model", "version", "batch", "swift", "object",
                        "graph", "entity", "index", "commit", "reader", "writer", "schema", "crash", "resume", "hash"]

    static func sentence(_ random: inout SeededGenerator, bytes: Int) -> String {
        var out = ""
        while out.utf8.count < bytes {
            if !out.isEmpty { out += " " }
            out += words[Int(random.next() % UInt64(words.count))]
        }
        return String(out.prefix(bytes))
    }
}
