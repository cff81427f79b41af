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
            #expect(tally.silentAccepts == 0, "\(tally.problems)")
            #expect(tally.slowest < 1, "the slowest input took \(tally.slowest) s (\(tally.slowestCategory))")
            let malformed = tally.inputs - (tally.categories.filter { $0.key.hasPrefix("valid") || $0.key.hasSuffix(" valid") }.values.reduce(0, +))
            Figures.add("decoders: \(tally.inputs) inputs (\(tally.rejected) refused with typed errors, \(tally.accepted) decoded and round-tripped), slowest \(Int(tally.slowest * 1000)) ms, 0 traps") { c in
                c.malformedInputs += malformed
            }
        }

        @Test("the fuzzer's regression inputs (Fuzz/FailCases) replay without a trap")
        func failCases() throws {
            try #require(Products.available)
            let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fuzz/FailCases")
            try #require(FileManager.default.fileExists(atPath: folder.path), "Fuzz/FailCases is missing")
            let run = try Child.run(["decode-files", folder.path], timeout: 300)
            #expect(run.exitCode == 0, "\(run)")
            let line = try #require(run.line("DECODE "))
            let tally = try JSONDecoder().decode(Tally.self, from: Data(line.dropFirst(7).utf8))
            #expect(tally.inputs > 0)
            #expect(tally.oracleViolations == 0, "\(tally.problems)")
            #expect(tally.silentAccepts == 0, "\(tally.problems)")
            Figures.add("fuzz regression inputs: \(tally.inputs) replayed") { c in c.malformedInputs += tally.inputs }
        }

        struct Tally: Codable {
            var inputs = 0, rejected = 0, accepted = 0, oracleViolations = 0, silentAccepts = 0
            var slowest = 0.0
            var slowestCategory = ""
            var categories: [String: Int] = [:]
            var problems: [String] = []
        }
    }
}
