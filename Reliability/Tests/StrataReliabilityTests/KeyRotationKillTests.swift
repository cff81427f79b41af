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
        /// The longest piece of a plain value an encryption may leave in free space: LMDB copies a page's pointers and
        /// its entries each rounded to 8-byte words (`mdb_page_copy`), carrying up to 7 bytes of the old page's free
        /// space on each side of the gap between them — 15 when the gap is that small.
        static let longestPlainPiece = 15

        /// A store of `count` items created with the old key, or with `key` "none" without one (a pristine copy per
        /// trial).
        static func pristine(_ workspace: Workspace, key: String = "old", count: Int = KeyRotation.count) throws -> URL {
            let url = workspace.url("base")
            let made = try Child.run(["create", url.path, "--count", "\(count)", "--batch", "500",
                                      "--seed", "\(Tier.seed)", "--no-check"] + (key == "none" ? [] : ["--key", key]))
            try #require(made.exitCode == 0, "\(made)")
            try? FileManager.default.removeItem(at: url.appendingPathComponent("lock.mdb"))
            return url
        }

        static func arguments(_ store: URL, writes: Bool, resume: Bool = false, change: String = "rotate", count: Int = KeyRotation.count) -> [String] {
            ["rotate", store.path, "--count", "\(count)", "--batch", "\(batch)", "--seed", "\(Tier.seed)", "--change", change]
                + (writes ? ["--writes", "\(KeyRotation.writes)", "--write-batch", "\(writeBatch)"] : [])
                + (resume ? ["--resume"] : [])
        }

        /// The last number of the lines starting with `prefix`.
        static func lastNumber(_ result: ChildResult, _ prefix: String) -> Int? {
            result.line(prefix).flatMap { Int($0.dropFirst(prefix.count)) }
        }

        /// Runs the trials of one test: an uninterrupted run to learn the commits and the time the key change (a
        /// rotation, encrypting, decrypting) takes, then one trial per kill — after every `stride`-th commit, and at
        /// `randomKills` random instants.
        static func run(_ test: String, writes: Bool, randomKills: Int, change: String = "rotate", count: Int = KeyRotation.count,
                        stride: Int? = nil) throws {
            try #require(Products.available, "strata-torture must be built (swift build --build-tests)")
            let workspace = try Workspace((change == "rotate" ? "rotation" : change) + (writes ? "-writes-kills" : "-kills"))
            let base = try pristine(workspace, key: change == "encrypt" ? "none" : "old", count: count)
            @Sendable func arguments(_ store: URL, writes: Bool, resume: Bool = false) -> [String] {
                KeyRotation.arguments(store, writes: writes, resume: resume, change: change, count: count)
            }
            let refusal = ["rotate": "wrongEncryptionKey", "encrypt": "encryptionKeyRequired", "decrypt": "storeNotEncrypted"][change] ?? "-"
            let timed = try Child.run(arguments(try workspace.copy(base, to: "timing"), writes: writes))
            // Checked like a trial's (the kills still run when it fails: they tell how often a fault shows).
            #expect(timed.exitCode == 0, "the uninterrupted rotation: \(timed)")
            // An uninterrupted encryption leaves no plain value in the data file: at most pieces of 15 bytes beside a
            // page's entries or its pointers, which LMDB copies with a page rounded to 8-byte words (Encryption.md,
            // "Limits"). A page rewrite that failed would leave whole records.
            if change == "encrypt" {
                let pieces = lastNumber(timed, "PLAINTEXT ") ?? -1
                let longest = lastNumber(timed, "PLAINLONGEST ") ?? .max
                #expect(pieces >= 0 && longest <= KeyRotation.longestPlainPiece, "\(timed)")
                Figures.add("\(test), uninterrupted: \(pieces) pieces of plain titles left, the longest \(longest) bytes") { _ in }
            }
            let plainLeft = Atomic<Int>(0)
            let total = try #require(lastNumber(timed, "BEGUN "), "\(timed)")
            #expect(total >= count, "only \(total) values under the old key")
            let commits = timed.lines(prefix: "COMMIT ").count
            #expect(timed.lines(prefix: "SWEPT ").count >= count / batch, "the sweep ran in \(timed.lines(prefix: "SWEPT ").count) batches")
            if writes { #expect(lastNumber(timed, "WRITES ") == KeyRotation.writes, "\(timed)") }
            let span = try #require(timed.timeOfLast("SWEEP "), "\(timed)")

            var random = SeededGenerator(seed: Tier.seed &+ (writes ? 27 : 26) &+ UInt64(change.count))
            typealias Kill = ReliabilitySuite.Maintenance.Kill
            // After every commit (with the app writing, whose commits interleave with the sweep's differently in every
            // run, after every other one in the CI tier), and at random instants.
            let stride = stride ?? (writes ? Tier.current.pick(ci: 2, full: 1) : 1)
            let kills: [Kill] = Swift.stride(from: 0, to: commits, by: stride).map { .point("txn.afterCommit:\($0):kill") }
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
                    if !writes, change != "encrypt", let before = lastNumber(first, "SWEPT "), let after = lastNumber(result, "SWEEP "), before + after > total {
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
                if result.line("OLDKEY ") != "OLDKEY \(refusal)" {
                    outcome.problems.append("the retired key (or none) after the \(change): \(result.line("OLDKEY ") ?? "-")")
                }
                if let left = lastNumber(result, "PLAINTEXT "), left > 0 { plainLeft.add(1, ordering: .relaxed) }
                outcome.result = checkResult(result)
                if outcome.result?.isClean != true { outcome.problems.append("after the rotation: \(String(describing: outcome.result))") }
                outcome.problems = outcome.problems.map { "[\(label)] \($0)" }
                outcomes.withLock { $0.append(outcome) }
                try? FileManager.default.removeItem(at: store)
            }
            #expect(randomKilled.load(ordering: .relaxed) >= randomKills / 2,
                    "only \(randomKilled.load(ordering: .relaxed)) of \(randomKills) random kills landed")
            record("\(test) (\(kills.count) trials)", outcomes.withLock { $0 })
            if change == "encrypt" {
                // A known limit (Encryption.md): after a kill, a few bytes of a plain value can survive in a page's
                // free space. Counted, not failed.
                Figures.add("\(test): \(plainLeft.load(ordering: .relaxed)) of \(kills.count) resumed encryptions left a plain title in free space") { _ in }
            }
        }

        @Test("key rotation killed after every commit and at random instants: resumed with both keys, every object intact, the old key refused")
        func rotationUnderKills() throws {
            try KeyRotation.run("key rotations killed", writes: false, randomKills: Tier.current.pick(ci: 20, full: 300))
        }

        @Test("key rotation killed while the app inserts and updates: the writes a prefix of those committed, every object intact")
        func rotationUnderKillsWhileWriting() throws {
            try KeyRotation.run("key rotations killed while writing", writes: true, randomKills: Tier.current.pick(ci: 16, full: 300))
        }

        /// Power loss during a rotation (the reliability plan's area 2 for issue 26): the rotating child runs under the
        /// fault shim in snapshot mode, which writes crash images at every sync point of `data.mdb`; on each image a
        /// resumed rotation must find the last acknowledged commit or the next one, finish, and check every object
        /// with both keys and with the new key alone, the old key then refused.
        @Test("power loss at every sync point of a key rotation: each crash image resumes and finishes the rotation")
        func rotationUnderPowerLoss() throws {
            try KeyRotation.powerLoss(change: "rotate")
        }

        /// Power loss during a key change (`change`: rotate, encrypt, decrypt): see ``rotationUnderPowerLoss()``.
        static func powerLoss(change: String, count: Int = 500 * ReliabilitySuite.PowerLoss.scale) throws {
            try #require(Products.shimAvailable, "the fault shim libStrataFaultShim.so must be built: run swift build --build-tests first")
            let batch = 50
            let variants = Tier.current.pick(ci: 6, full: 12)
            let workspace = try Workspace((change == "rotate" ? "rotation" : change) + "-power")
            let tracked = workspace.url("tracked"), out = workspace.url("images")
            try FileManager.default.createDirectory(at: tracked, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let store = tracked.appendingPathComponent("store")
            let made = try Child.run(["create", store.path, "--count", "\(count)", "--batch", "500",
                                      "--seed", "\(Tier.seed)", "--no-check"] + (change == "encrypt" ? [] : ["--key", "old"]))
            try #require(made.exitCode == 0, "\(made)")
            try? FileManager.default.removeItem(at: store.appendingPathComponent("lock.mdb"))
            let run = try Child.run(["rotate", store.path, "--count", "\(count)", "--batch", "\(batch)", "--seed", "\(Tier.seed)",
                                     "--change", change, "--ack"],
                                    environment: ["LD_PRELOAD": Products.shim, "STRATA_SHIM_DIR": tracked.path, "STRATA_SHIM_MODE": "snapshot",
                                                  "STRATA_SHIM_OUT": out.path, "STRATA_SHIM_VARIANTS": "\(variants)",
                                                  "STRATA_SHIM_SEED": "\(Tier.seed)"],
                                    timeout: 300)
            #expect(run.exitCode == 0, "the rotation under the shim failed: \(run)")
            let log = workspace.url("log.txt")
            try run.lines.joined(separator: "\n").write(to: log, atomically: true, encoding: .utf8)
            let expected = run.lines(prefix: "IMAGE ").count
            // Every commit of the rotation (its first transaction and each sweep batch) passed a sync point with images.
            let syncPoints = Set(run.lines(prefix: "IMAGE ").compactMap { $0.split(separator: " ").dropFirst().first }).count
            let commits = run.lines(prefix: "COMMIT ").count
            #expect(commits >= count / batch + 1 && syncPoints >= commits, "\(syncPoints) sync points with images for \(commits) commits")

            var outcomes: [String] = []
            var signals = 0
            var start = 0
            while start < expected {
                let check = try Child.run(["check-rotation-images", out.path, "--log", log.path, "--store-rel", "store",
                                           "--work", workspace.path("check"), "--count", "\(count)", "--batch", "\(batch)",
                                           "--seed", "\(Tier.seed)", "--change", change, "--start", "\(start)"], timeout: 900)
                outcomes += check.lines(prefix: "IMG ")
                if check.line("DONE") != nil { break }
                signals += 1
                let begun = check.lines(prefix: "BEGIN ").last.flatMap { Int($0.dropFirst(6)) } ?? start
                outcomes.append("IMG \(begun) CRASH \(check)")
                start = begun + 1
            }
            let failures = outcomes.filter { !$0.contains(" OK ") }
            for f in failures.prefix(20) { Issue.record("\(change) power loss: \(f)") }
            #expect(outcomes.count == expected, "\(outcomes.count) images checked of \(expected)")
            let next = outcomes.filter { $0.contains("match=next") }.count
            Figures.add("power loss, \(change == "rotate" ? "key rotation" : change + "ing"): \(expected) images (\(next) at the next commit)") { c in
                c.powerLossImages += outcomes.count - failures.count
                c.recordsLost += failures.count
                c.childSignals += signals
            }
        }
    }
}
