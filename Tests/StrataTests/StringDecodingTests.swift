import Foundation
@testable import Strata
import Testing

/// Stored strings are decoded by a fast path (ASCII recognised eight bytes at a time, other text decoded by
/// the repairing decoder and kept only when nothing was repaired): it must accept exactly the valid UTF-8 the
/// standard library's validating decoder accepts, and give the same strings.
@Suite struct StringDecodingTests {
    static func decode(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { String(validatingUTF8Bytes: $0) }
    }

    static func reference(_ bytes: [UInt8]) -> String? {
        String(validating: bytes, as: UTF8.self)
    }

    @Test("valid text of every width decodes to the same string")
    func validText() {
        for text in ["", "a", "exactly8", "ascii longer than eight bytes", "é", "naïve café", "日本語のテキスト",
                     "emoji 😀 in the middle", String(repeating: "x", count: 17) + "ß"] {
            #expect(Self.decode(Array(text.utf8)) == text)
        }
    }

    @Test("invalid sequences are refused, including repairs that keep the byte count")
    func invalidSequences() {
        let cases: [[UInt8]] = [
            [0xFF], [0x80], [0xC3], [0xC0, 0xAF],                 // bad lead, lone continuation, truncated, overlong
            [0xF0, 0x9F, 0x98],                                   // a truncated 4-byte sequence: repaired to one U+FFFD, 3 bytes too
            [0xED, 0xA0, 0x80],                                   // a UTF-16 surrogate
            Array("twelve bytes".utf8) + [0xE2, 0x82],            // ASCII words, then a truncated sequence
            Array("abc".utf8) + [0xEF, 0xBF, 0xBD, 0xFF],         // a real U+FFFD followed by an invalid byte
        ]
        for bytes in cases {
            #expect(Self.decode(bytes) == nil, "\(bytes) was accepted")
        }
        // A real U+FFFD is valid text.
        #expect(Self.decode([0xEF, 0xBF, 0xBD]) == "\u{FFFD}")
    }

    @Test("random byte strings: the same verdict and the same string as the standard library's validating decoder")
    func randomBytesAgreeWithTheStandardLibrary() {
        var rng = SplitMix(seed: 0x5EED)
        // Bytes drawn mostly from the interesting ranges: ASCII, continuation bytes, lead bytes.
        let alphabet: [UInt8] = Array(0x61...0x66) + [0x80, 0x9F, 0xA0, 0xBF, 0xC2, 0xC3, 0xDF, 0xE0, 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
        var accepted = 0
        for _ in 0..<20_000 {
            let n = Int(rng.next() % 12)
            let bytes = (0..<n).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
            let expected = Self.reference(bytes)
            #expect(Self.decode(bytes) == expected, "\(bytes)")
            if expected != nil { accepted += 1 }
        }
        #expect(accepted > 1_000, "the generator should produce valid text too")
    }
}

/// A small deterministic generator (SplitMix64).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
