import Foundation
import StrataTestKit
import StrataTortureKit
import Synchronization
import Testing

/// The reliability plan's item 24, adapted to Strata (which never swaps a store's data file in place):
/// a backup is written into a temporary directory beside its destination and renamed into place, and
/// `performMaintenance()` rewrites records in batches. Both are killed at their fault points and
/// at random instants; the source store, and the backup when it exists, must hold every object.
extension ReliabilitySuite {
    @Suite struct Maintenance {
        /// How a trial's first child dies: at a fault point (`STRATA_FAULT`), or by SIGKILL after a delay.
        enum Kill: Sendable {
            case point(String)
            case after(Double)

            var label: String {
                switch self {
                case .point(let fault): fault
                case .after(let delay): "+\(String(format: "%.4f", delay))s"
                }
            }

            /// Runs the child and kills it this way.
            func run(_ arguments: [String]) throws -> ChildResult {
                switch self {
                case .point(let fault): try Child.run(arguments, environment: ["STRATA_FAULT": fault])
                case .after(let delay): try Child.run(arguments, killAfter: delay)
                }
            }
        }

        /// Items in the store being backed up: enough that the copy takes a measurable time to land kills in.
        static let backupCount = 20_000

        @Test("backup killed at every step and at random instants: the source intact, the backup absent or complete")
        func backupUnderKills() throws {
            try #require(Products.available, "strata-torture must be built (swift build --build-tests)")
            let count = Maintenance.backupCount
            let workspace = try Workspace("backup-kills")
            let pristine = try PristineStores.v1(count: count)
            @Sendable func arguments(_ store: URL, _ destination: URL) -> [String] {
                ["maintain", store.path, "--op", "backup", "--dest", destination.path, "--plan", "v1",
                 "--count", "\(count)", "--seed", "\(Tier.seed)"]
            }
            // How long the copy itself takes here, to spread the random kills over it.
            let timing = try workspace.copy(pristine, to: "timing")
            let timed = try Child.run(arguments(timing, workspace.url("timing-backup")))
            try #require(timed.exitCode == 0, "\(timed)")
            let copySeconds = try #require(timed.line("BACKED ").flatMap { Double($0.dropFirst(7)) })

            var random = SeededGenerator(seed: Tier.seed &+ 24)
            let randomKills = Tier.current.pick(ci: 10, full: 40)
            let kills: [Kill] = ["backup.afterCopy", "backup.beforePublish", "backup.afterPublish"].map { .point("\($0):0:kill") }
                + (0..<randomKills).map { _ in .after(Double(random.next() % 10_000) / 10_000 * copySeconds * 1.2) }
            let outcomes = Mutex<[KillTrial.Outcome]>([])
            let randomKilled = Atomic<Int>(0)
            try concurrentForEach(Array(kills.enumerated())) { (i, kill) in
                let store = try workspace.copy(pristine, to: "s\(i)")
                let destination = workspace.url("s\(i)-backup")
                let label = kill.label
                let first = try kill.run(arguments(store, destination))
                var outcome = KillTrial.Outcome(killed: first.signal == 9)
                if case .point = kill, !outcome.killed { outcome.problems.append("the fault point was not reached: \(first)") }
                if case .after = kill, outcome.killed { randomKilled.add(1, ordering: .relaxed) }
                if !outcome.killed && first.exitCode != 0 { outcome.problems.append("the backup failed: \(first)") }
                let published = FileManager.default.fileExists(atPath: destination.path)
                if label.hasPrefix("backup.afterCopy") || label.hasPrefix("backup.beforePublish") {
                    if published { outcome.problems.append("a backup killed before its rename is at the destination") }
                }
                if label.hasPrefix("backup.afterPublish") && !published {
                    outcome.problems.append("a backup killed after its rename is missing")
                }
                // The source store: every object, verify() clean.
                let source = try Child.run(["open", store.path, "--plan", "v1", "--count", "\(count)", "--seed", "\(Tier.seed)"])
                if source.line("OK ")?.contains("clean=1") != true { outcome.problems.append("source after the kill: \(source)") }
                // The backup, when it exists, is complete.
                if published {
                    let copy = try Child.run(["open", destination.path, "--plan", "v1", "--count", "\(count)", "--seed", "\(Tier.seed)"])
                    if copy.line("OK ")?.contains("clean=1") != true { outcome.problems.append("published backup: \(copy)") }
                } else {
                    // Backing up again succeeds and removes what the killed process left beside the destination.
                    let again = try Child.run(arguments(store, destination))
                    if again.exitCode != 0 { outcome.problems.append("the next backup failed: \(again)") }
                    outcome.result = checkResult(again)
                    let leftovers = try FileManager.default.contentsOfDirectory(atPath: workspace.root.path)
                        .filter { $0.hasPrefix(".s\(i)-backup.strata-tmp-") }
                    if !leftovers.isEmpty { outcome.problems.append("temporary directories left beside the backup: \(leftovers)") }
                }
                outcome.problems = outcome.problems.map { "[\(label)] \($0)" }
                outcomes.withLock { $0.append(outcome) }
                try? FileManager.default.removeItem(at: store)
                try? FileManager.default.removeItem(at: destination)
            }
            // Random instants may land after the backup finished, but most must kill it.
            #expect(randomKilled.load(ordering: .relaxed) >= randomKills / 2, "only \(randomKilled.load(ordering: .relaxed)) of \(randomKills) random kills landed")
            record("backups killed (\(kills.count) trials)", outcomes.withLock { $0 })
        }

        @Test("rewriting records into current layouts killed after every commit and at random instants")
        func layoutRewriteUnderKills() throws {
            try #require(Products.available, "strata-torture must be built (swift build --build-tests)")
            let count = 600, batch = 50
            let workspace = try Workspace("layout-kills")
            // A v2 store whose records are still in v1's layout (v1 → v2 is a metadata-only migration).
            let base = try workspace.copy(try PristineStores.v1(count: count), to: "base")
            let migrated = try Child.run(["migrate", base.path, "--plan", "light", "--count", "\(count)", "--seed", "\(Tier.seed)"])
            try #require(migrated.exitCode == 0, "\(migrated)")
            @Sendable func arguments(_ store: URL) -> [String] {
                ["maintain", store.path, "--op", "layouts", "--plan", "light", "--count", "\(count)",
                 "--batch", "\(batch)", "--seed", "\(Tier.seed)"]
            }
            let traced = try Child.run(arguments(try workspace.copy(base, to: "trace")))
            try #require(traced.exitCode == 0, "\(traced)")
            let commits = traced.acknowledgements.count - 1
            let total = try #require(traced.line("LAYOUTS ").flatMap { Int($0.split(separator: " ")[1]) })
            #expect(total >= count, "only \(total) records were in an old layout")
            #expect(commits >= count / batch, "only \(commits) commits")

            var random = SeededGenerator(seed: Tier.seed &+ 25)
            let randomKills = Tier.current.pick(ci: 10, full: 40)
            // Spread over the rewrite itself: from the child's first line to its last commit.
            let span = try #require(traced.timeOfLast("ACK "), "\(traced)")
            let kills: [Kill] = (0..<commits).map { .point("txn.afterCommit:\($0):kill") }
                + (0..<randomKills).map { _ in .after(Double(random.next() % 10_000) / 10_000 * span) }
            let outcomes = Mutex<[KillTrial.Outcome]>([])
            let randomKilled = Atomic<Int>(0)
            try concurrentForEach(Array(kills.enumerated())) { (i, kill) in
                let store = try workspace.copy(base, to: "l\(i)")
                let label = kill.label
                let first = try kill.run(arguments(store))
                var outcome = KillTrial.Outcome(killed: first.signal == 9)
                if case .point = kill, !outcome.killed { outcome.problems.append("the fault point was not reached: \(first)") }
                if case .after = kill, outcome.killed { randomKilled.add(1, ordering: .relaxed) }
                if !outcome.killed && first.exitCode != 0 { outcome.problems.append("the rewrite failed: \(first)") }
                // Run again: it finishes the rewrite, every record in its current layout, every object intact.
                let second = try Child.run(arguments(store))
                if second.exitCode != 0 { outcome.problems.append("the second run failed: \(second)") }
                if let layouts = second.line("LAYOUTS ")?.split(separator: " "), layouts.count == 3,
                   let rewritten = Int(layouts[1]) {
                    if layouts[2] != "0" { outcome.problems.append("entities still with old layouts: \(layouts[2])") }
                    if case .point = kill, rewritten >= total { outcome.problems.append("the second run redid all \(rewritten) records") }
                } else {
                    outcome.problems.append("no LAYOUTS line: \(second)")
                }
                outcome.result = checkResult(second)
                if outcome.result?.isClean != true { outcome.problems.append("after the second run: \(String(describing: outcome.result))") }
                outcome.problems = outcome.problems.map { "[\(label)] \($0)" }
                outcomes.withLock { $0.append(outcome) }
                try? FileManager.default.removeItem(at: store)
            }
            #expect(randomKilled.load(ordering: .relaxed) >= randomKills / 2, "only \(randomKilled.load(ordering: .relaxed)) of \(randomKills) random kills landed")
            record("layout rewrites killed (\(kills.count) trials)", outcomes.withLock { $0 })
        }
    }
}
