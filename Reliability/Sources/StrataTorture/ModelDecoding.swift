@_spi(Testing) import Strata
import Foundation
import StrataTortureKit

/// Malformed records through the decoder the `@Entity` macro generates (the fixture's entity declared as a
/// macro model), each checked against the store's own decoder (`DecoderEntryPoints.RecordFixture.modelOutcome`).
enum ModelDecoding {
    struct Tally: Codable {
        var inputs = 0
        var rejected = 0
        var accepted = 0
        /// Valid seed records the generated decoder read exactly as the store's decoder does.
        var validAccepted = 0
        var validSeeds = 0
        /// Records under another object ID (their checksum covers the key): every one must be refused.
        var wrongIDRefused = 0
        var wrongIDInputs = 0
        var oracleViolations = 0
        var problems: [String] = []
    }

    /// `decode-models`: the seed records as stored, under a wrong object ID, truncated, with bits flipped and
    /// bytes set, both as stored and with the checksum recomputed. Prints `MODELDECODE <json tally>`.
    static func run(_ o: Options) throws -> Int32 {
        guard let fixture = DecoderEntryPoints.RecordFixture.shared else { throw TortureError("no fixture") }
        var t = Tally()
        func check(_ category: String, _ id: UInt64, _ bytes: [UInt8]) -> DecoderEntryPoints.Outcome {
            let outcome = bytes.withUnsafeBytes { fixture.modelOutcome(FixtureModel.Wide.self, $0, id: id) }
            t.inputs += 1
            switch outcome {
            case .rejected: t.rejected += 1
            case .accepted: t.accepted += 1
            case .oracleViolation(let why):
                t.oracleViolations += 1
                if t.problems.count < 20 { t.problems.append("\(category): \(why)") }
            }
            return outcome
        }
        func both(_ category: String, _ id: UInt64, _ bytes: [UInt8]) {
            _ = check(category + " (as stored)", id, bytes)
            _ = check(category + " (resealed)", id, DecoderEntryPoints.resealed(bytes, entityTag: fixture.entityTag, id: id))
        }
        for (id, record, _) in try Decoding.seedRecords(fixture) {
            t.validSeeds += 1
            if case .accepted = check("valid", id, record) { t.validAccepted += 1 }
            t.wrongIDInputs += 1
            if case .rejected = check("wrong object ID", id &+ 1, record) { t.wrongIDRefused += 1 }
            let n = record.count
            for len in 0..<n { both("truncation", id, Array(record.prefix(len))) }
            for bit in 0..<(min(n, 64) * 8) { var b = record; b[bit / 8] ^= 1 << UInt8(bit % 8); both("bit flip", id, b) }
            for i in 0..<(n - 4) {
                for v: UInt8 in [0x00, 0xFF, 0x80] where record[i] != v { var b = record; b[i] = v; both("byte set", id, b) }
            }
        }
        let json = try JSONEncoder().encode(t)
        emit("MODELDECODE " + String(decoding: json, as: UTF8.self))
        return t.oracleViolations == 0 ? 0 : 4
    }
}
