import Foundation
import StrataTestKit
import StrataTortureKit
import Synchronization
import Testing

/// Rotating an encrypted store's key (issue 26) under kills: a child begins the rotation of a store of `count` items
/// (created with the old key) and runs the re-sealing sweep in batches — in the second test while another thread of
/// the app inserts and updates items — and dies after each of its commits (`txn.afterCommit`) or by SIGKILL at random
/// instants. A fresh child then opens the store with both keys, resumes, finishes, and checks every object against
/// the oracle (the seeded contents, and the app's writes derived from their transaction's number) with both keys and
/// with the new key alone; the old key alone must then be refused.
extension ReliabilitySuite {
    @Suite struct KeyRotation {
        static let count = 1_000
        static let batch = 50
        /// The app's write transactions in the second test, and the items each inserts and updates.
        static let writes = 16
        static let writeBatch = 25

        /// A store of `count` items created with the old key (a pristine copy per trial).
        static func pristine(_ workspace: Workspace) throws -> URL {
            let url = workspace.url("base")
            let made = try Child.run(["create", url.path, "--key", "old", "--count", "\(count)", "--batch", "500",
                                      "--seed", "\(Tier.seed)", "--no-check"])
            try #require(made.exitCode == 0, "\(made)")
            try? FileManager.default.removeItem(at: url.appendingPathComponent("lock.mdb"))
            return url
        }

        static func arguments(_ store: URL, writes: Bool, resume: Bool = false) -> [String] {
            ["rotate", store.path, "--count", "\(count)", "--batch", "\(batch)", "--seed", "\(Tier.seed)"]
                + (writes ? ["--writes", "\(KeyRotation.writes)", "--write-batch", "\(writeBatch)"] : [])
                + (resume ? ["--resume"] : [])
        }

        /// The last number of the lines starting with `prefix`.
        static func lastNumber(_ result: ChildResult, _ prefix: String) -> Int? {
            result.line(prefix).flatMap { Int($0.dropFirst(prefix.count)) }
        }

        /// Runs the trials of one test: an uninterrupted run to learn the commits and the time the rotation takes,
        /// then one trial per kill.
        static func run(_ test: String, writes: Bool, randomKills: Int) throws {
            try #require(Products.available, "strata-torture must be built (swift build --build-tests)")
            let workspace = try Workspace(writes ? "rotation-writes-kills" : "rotation-kills")
            let base = try pristine(workspace)
            let timed = try Child.run(arguments(try workspace.copy(base, to: "timing"), writes: writes))
            // Checked like a trial's (the kills still run when it fails: they tell how often a fault shows).
            #expect(timed.exitCode == 0, "the uninterrupted rotation: \(timed)")
            let total = try #require(lastNumber(timed, "BEGUN "), "\(timed)")
            #expect(total >= count, "only \(total) values under the old key")
            let commits = timed.lines(prefix: "COMMIT ").count
            #expect(timed.lines(prefix: "SWEPT ").count >= count / batch, "the sweep ran in \(timed.lines(prefix: "SWEPT ").count) batches")
            if writes { #expect(lastNumber(timed, "WRITES ") == KeyRotation.writes, "\(timed)") }
            let span = try #require(timed.timeOfLast("SWEEP "), "\(timed)")

            var random = SeededGenerator(seed: Tier.seed &+ (writes ? 27 : 26))
            typealias Kill = ReliabilitySuite.Maintenance.Kill
            let kills: [Kill] = (0..<commits).map { .point("txn.afterCommit:\($0):kill") }
                + (0..<randomKills).map { _ in .after(Double(random.next() % 10_000) / 10_000 * span) }
            let outcomes = Mutex<[KillTrial.Outcome]>([])
            let randomKilled = Atomic<Int>(0)
            try concurrentForEach(Array(kills.enumerated())) { (i, kill) in
                let store = try workspace.copy(base, to: "r\(i)")
                let label = kill.label
                let first = try kill.run(arguments(store, writes: writes))
                var outcome = KillTrial.Outcome(killed: first.signal == 9)
                // With the app writing, the commits of its writes and of the sweep interleave differently in every run.
                if case .point = kill, !outcome.killed, !writes { outcome.problems.append("the fault point was not reached: \(first)") }
                if case .after = kill, outcome.killed { randomKilled.add(1, ordering: .relaxed) }
                if !outcome.killed && first.exitCode != 0 { outcome.problems.append("the first child failed: \(first)") }
                if let signal = first.signal, signal != 9 { outcome.problems.append("the first child died by signal \(signal)") }
                outcome.acknowledged = first.lines(prefix: "COMMIT ").count
                outcome.midWork = outcome.killed && first.line("STATUS ") == nil

                let result: ChildResult
                if outcome.killed {
                    // Reopened with both keys: resumes the sweep where its last batch committed, and finishes.
                    result = try Child.run(arguments(store, writes: writes, resume: true))
                    if result.exitCode != 0 { outcome.problems.append("the resuming child failed: \(result)") }
                    if first.line("BEGUN ") != nil && result.line("RESUMING ") == nil {
                        outcome.problems.append("the rotation acknowledged by the killed child began again: \(result)")
                    }
                    if !writes, let before = lastNumber(first, "SWEPT "), let after = lastNumber(result, "SWEEP "), before + after > total {
                        outcome.problems.append("\(before) values re-sealed before the kill and \(after) after, of \(total)")
                    }
                    if writes {
                        // The app's write transactions found are exactly those acknowledged, or one more (killed
                        // between its commit and its acknowledgement).
                        let acknowledged = first.lines(prefix: "WROTE ").count
                        let found = lastNumber(result, "WRITES ") ?? -1
                        if found != acknowledged && found != acknowledged + 1 {
                            outcome.problems.append("\(found) write transactions found, \(acknowledged) acknowledged")
                        }
                    }
                } else {
                    result = first
                }
                if result.line("STATUS ") != "STATUS done" { outcome.problems.append("the rotation did not finish: \(result.line("STATUS ") ?? "-")") }
                if result.line("OLDKEY ") != "OLDKEY wrongEncryptionKey" {
                    outcome.problems.append("the old key alone after the rotation: \(result.line("OLDKEY ") ?? "-")")
                }
                outcome.result = checkResult(result)
                if outcome.result?.isClean != true { outcome.problems.append("after the rotation: \(String(describing: outcome.result))") }
                outcome.problems = outcome.problems.map { "[\(label)] \($0)" }
                outcomes.withLock { $0.append(outcome) }
                try? FileManager.default.removeItem(at: store)
            }
            #expect(randomKilled.load(ordering: .relaxed) >= randomKills / 2,
                    "only \(randomKilled.load(ordering: .relaxed)) of \(randomKills) random kills landed")
            record("\(test) (\(kills.count) trials)", outcomes.withLock { $0 })
        }

        @Test("key rotation killed after every commit and at random instants: resumed with both keys, every object intact, the old key refused")
        func rotationUnderKills() throws {
            try KeyRotation.run("key rotations killed", writes: false, randomKills: Tier.current.pick(ci: 30, full: 300))
        }

        @Test("key rotation killed while the app inserts and updates: the writes a prefix of those committed, every object intact")
        func rotationUnderKillsWhileWriting() throws {
            try KeyRotation.run("key rotations killed while writing", writes: true, randomKills: Tier.current.pick(ci: 20, full: 300))
        }
    }
}
