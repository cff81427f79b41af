import Foundation
import StrataTortureKit
import Testing

/// Areas 10 and 11 of issue 7. Limits: keys at and past LMDB's 511-byte limit, values from 0 bytes to
/// hundreds of MiB, strings with every kind of Unicode — exact round trips or typed errors. The record
/// decoder: tens of thousands of deterministic malformed inputs (truncations, deletions, bit flips, bad
/// lengths, varints, layouts, formats, trailing bytes) and damaged metadata, with and without their
/// checksums recomputed; and the fuzzer's regression folder `Fuzz/FailCases`. Both run in a child, so a
/// trap would show as a failed child, not a dead test process.
extension ReliabilitySuite {
    @Suite struct LimitsAndDecoders {
        @Test("keys past 511 bytes, values up to hundreds of MiB, every kind of Unicode")
        func limits() throws {
            try #require(Products.available)
            let workspace = try Workspace("limits")
            var arguments = ["limits", workspace.path("stores"), "--largest", "\(Tier.current.pick(ci: 256 << 20, full: 512 << 20))"]
            if Tier.current.isFull { arguments.append("--huge") }
            let run = try Child.run(arguments, timeout: 600)
            #expect(run.exitCode == 0, "\(run)")
            for line in run.lines(prefix: "LIMIT ") where !line.hasSuffix(" ok") { Issue.record("\(line)") }
            let cases = run.lines(prefix: "LIMIT ").count
            #expect(cases > 40)
            Figures.add("limits: \(cases) cases (key lengths, value sizes, Unicode strings), all exact round trips or typed errors") { _ in }
        }

        @Test("at least 8,000 deterministic malformed inputs through the decoders")
        func malformedInputs() throws {
            try #require(Products.available)
            let run = try Child.run(["decode-table", "-"], timeout: 600)
            #expect(run.exitCode == 0, "\(run)")
            let line = try #require(run.line("DECODE "))
            let tally = try JSONDecoder().decode(Tally.self, from: Data(line.dropFirst(7).utf8))
            #expect(tally.inputs >= 8_000)
            #expect(tally.oracleViolations == 0, "\(tally.problems)")
            // The decoders accept what is valid: every seed record decodes (as stored and resealed) to exactly
            // the values it was encoded from, every metadata kind as written — a decoder that refused
            // everything fails here.
            #expect(tally.valid >= 40 && tally.validDecoded == tally.valid, "\(tally.validDecoded) of \(tally.valid) valid inputs decoded as written: \(tally.problems)")
            // … and refuses what changed: with the checksum as stored, no changed byte and no record read under
            // another object ID gets through.
            #expect(tally.silentAccepts == 0, "\(tally.problems)")
            let wrongID = "wrong object ID (as stored)"
            #expect((tally.categories[wrongID] ?? 0) > 0 && tally.rejectedBy[wrongID] == tally.categories[wrongID],
                    "records under the wrong object ID: \(tally.rejectedBy[wrongID] ?? 0) of \(tally.categories[wrongID] ?? 0) refused")
            let malformed = tally.inputs - (tally.categories.filter { $0.key.hasPrefix("valid") || $0.key.hasSuffix(" valid") }.values.reduce(0, +))
            Figures.add("decoders: \(tally.inputs) inputs (\(tally.rejected) refused with typed errors, \(tally.accepted) decoded and round-tripped; \(tally.validDecoded) valid inputs decoded as written), 0 traps") { c in
                c.malformedInputs += malformed
            }
        }

        @Test("the fuzzer's regression inputs (Fuzz/FailCases) replay without a trap")
        func failCases() throws {
            try #require(Products.available)
            let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/FailCases")
            try #require(FileManager.default.fileExists(atPath: folder.path), "Fuzz/FailCases is missing")
            let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }
            let run = try Child.run(["decode-files", folder.path], timeout: 300)
            #expect(run.exitCode == 0, "\(run)")
            let line = try #require(run.line("DECODE "))
            let tally = try JSONDecoder().decode(Tally.self, from: Data(line.dropFirst(7).utf8))
            // Every file was replayed (each ends refused or round-tripped; none trapped).
            #expect(tally.inputs == files.count && !files.isEmpty, "\(tally.inputs) of \(files.count) files replayed")
            #expect(tally.rejected + tally.accepted == tally.inputs)
            #expect(tally.oracleViolations == 0, "\(tally.problems)")
            Figures.add("fuzz regression inputs: \(tally.inputs) replayed") { c in c.malformedInputs += tally.inputs }
        }

        struct Tally: Codable {
            var inputs = 0, rejected = 0, accepted = 0, oracleViolations = 0, silentAccepts = 0
            var valid = 0, validDecoded = 0
            var categories: [String: Int] = [:]
            var rejectedBy: [String: Int] = [:]
            var problems: [String] = []
        }
    }
}
