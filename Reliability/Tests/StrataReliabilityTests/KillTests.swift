import Foundation
import StrataTestKit
import StrataTortureKit
import Synchronization
import Testing

/// Area 1 of issue 7, and the crash tests of issues 3 and 4: a child process migrating a store is killed
/// with SIGKILL at every phase boundary and at seeded random instants; every relaunch resumes from the
/// journal at exactly the last acknowledged commit, finishes, and every object matches the oracle — none
/// lost, none transformed twice by a committed batch, no script's effect doubled.
extension ReliabilitySuite {
    @Suite struct Kills {
        static let plans = ["rewrite", "chain", "custom", "typed", "script", "declared"]

        /// The fault points a plan's migration passes, in order, with their per-name occurrence index.
        static func points(plan: String, store: URL, workspace: Workspace, count: Int, batch: Int) throws -> [(String, Int)] {
            let copy = try workspace.copy(store, to: "trace-\(plan)")
            let run = try Child.run(["migrate", copy.path, "--plan", plan, "--count", "\(count)", "--batch", "\(batch)",
                                     "--seed", "\(Tier.seed)", "--trace"])
            guard run.exitCode == 0 else { throw TortureError("trace run failed: \(run)") }
            var seen: [String: Int] = [:]
            var out: [(String, Int)] = []
            for line in run.lines where line.hasPrefix("POINT ") || line.hasPrefix("ACK ") {
                let name = line.hasPrefix("ACK ") ? "txn.afterCommit" : String(line.dropFirst(6))
                if line.hasPrefix("ACK 0 ") { continue }
                let index = seen[name, default: 0]
                seen[name] = index + 1
                out.append((name, index))
            }
            return out
        }

        @Test("kill at every phase boundary of a migration (exhaustive)", arguments: Kills.plans)
        func everyBoundary(plan: String) throws {
            try #require(Products.available, "strata-torture must be built (swift build --build-tests)")
            let count = Tier.current.pick(ci: 600, full: 2000), batch = 100
            let workspace = try Workspace("boundary-\(plan)")
            let pristine = try PristineStores.v1(count: count)
            let all = try Kills.points(plan: plan, store: pristine, workspace: workspace, count: count, batch: batch)
            // Every boundary between transactions, and a sample of the instants between two records.
            let puts = all.filter { $0.0 == "batch.afterPut" }
            let samples = Set([0, 1, batch - 1, batch, batch + 1, puts.count / 2, puts.count - 1])
            let chosen = all.filter { $0.0 != "batch.afterPut" || samples.contains($0.1) }
            #expect(chosen.count > 20, "too few fault points: \(chosen.map(\.0))")
            let trial = KillTrial(plan: plan, count: count, batch: batch)
            let outcomes = Mutex<[KillTrial.Outcome]>([])
            try concurrentForEach(Array(chosen.enumerated())) { (i, point) in
                let store = try workspace.copy(pristine, to: "t\(i)")
                let ledger = workspace.url("t\(i).ledger")
                var outcome = try trial.run(store: store, fault: "\(point.0):\(point.1):kill", ledger: ledger)
                if !outcome.killed { outcome.problems.append("\(point.0):\(point.1) was not reached") }
                outcome.problems = outcome.problems.map { "[\(point.0):\(point.1)] \($0)" }
                outcomes.withLock { $0.append(outcome) }
                try? FileManager.default.removeItem(at: store)
            }
            record("kills at every boundary of '\(plan)' (\(chosen.count) points)", outcomes.withLock { $0 })
        }

        @Test("kill at seeded random instants")
        func randomInstants() throws {
            try #require(Products.available)
            let count = 600, batch = 100
            let trials = Tier.current.pick(ci: 100, full: 600)
            let workspace = try Workspace("random")
            let pristine = try PristineStores.v1(count: count)
            // How long each plan's migration runs here (from the child's first line to its last commit, not
            // counting the check that follows), to spread the kills over it: the fastest of three runs, so that a
            // burst of load on the machine while timing does not spread the kills past the migrations' end.
            var durations: [String: Double] = [:]
            for plan in Kills.plans {
                for attempt in 0..<3 {
                    let copy = try workspace.copy(pristine, to: "timing-\(plan)-\(attempt)")
                    let run = try Child.run(KillTrial(plan: plan, count: count, batch: batch).arguments(copy))
                    let duration = try #require(run.timeOfLast("ACK "), "\(run)")
                    durations[plan] = min(durations[plan] ?? duration, duration)
                    try? FileManager.default.removeItem(at: copy)
                }
            }
            var random = SeededGenerator(seed: Tier.seed &+ 7)
            let cases: [(Int, String, Double)] = (0..<trials).map { i in
                let plan = Kills.plans[i % Kills.plans.count]
                return (i, plan, Double(random.next() % 10_000) / 10_000 * (durations[plan] ?? 1) * 0.9)
            }
            let outcomes = Mutex<[KillTrial.Outcome]>([])
            try concurrentForEach(cases) { (i, plan, delay) in
                let store = try workspace.copy(pristine, to: "r\(i)")
                var outcome = try KillTrial(plan: plan, count: count, batch: batch)
                    .run(store: store, killAfter: delay, ledger: workspace.url("r\(i).ledger"))
                outcome.problems = outcome.problems.map { "[\(plan) +\(String(format: "%.3f", delay))s] \($0)" }
                outcomes.withLock { $0.append(outcome) }
                try? FileManager.default.removeItem(at: store)
            }
            // Kills that landed after the migration finished are not kills mid-work; they must still check out,
            // but most trials must really have killed a migration under way.
            let done = outcomes.withLock { $0 }
            let midWork = done.filter(\.midWork).count
            #expect(midWork >= trials * 3 / 4, "only \(midWork) of \(trials) children were killed mid-migration")
            record("\(trials) random instants, \(midWork) children killed mid-migration", done)
        }

        /// iOS's launch watchdog kills an app that migrates too long at launch. Here every launch is killed
        /// right after its first batch commits: the migration must still converge, one batch per launch.
        @Test("watchdog: killed after one batch per launch, the migration converges", arguments: ["rewrite", "custom"])
        func watchdog(plan: String) throws {
            try #require(Products.available)
            let count = 600, batch = 100
            let workspace = try Workspace("watchdog-\(plan)")
            let store = try workspace.copy(try PristineStores.v1(count: count), to: "store")
            let trial = KillTrial(plan: plan, count: count, batch: batch)
            var launches = 0, kills = 0
            var previous: (task: Int, batches: Int)? = nil
            var final: CheckResult? = nil
            while launches < 200 {
                launches += 1
                let run = try Child.run(trial.arguments(store), environment: ["STRATA_FAULT": "batch.afterCommit:0:kill"])
                let found = acknowledgements(run).first?.1 ?? "none"
                if let p = journalProgress(found), let before = previous {
                    #expect(p.task > before.task || p.batches > before.batches, "launch \(launches) made no progress: \(found)")
                }
                previous = journalProgress(found)
                if run.signal == 9 { kills += 1; continue }
                #expect(run.exitCode == 0, "\(run)")
                final = checkResult(run)
                break
            }
            let result = try #require(final)
            #expect(result.isClean, "\(result)")
            #expect(launches < 120, "\(launches) launches")
            // Every launch but the last was killed after one batch: at least one per batch of the first task.
            #expect(kills >= count / batch, "only \(kills) launches were killed")
            Figures.add("watchdog '\(plan)': converged in \(launches) launches") { c in
                c.kills += kills
                c.recordsLost += result.lost
                c.silentWrongValues += result.wrongValues
            }
        }

        /// The watchdog with a time budget: each launch gets a random 0.5–1 s before SIGKILL, while records are
        /// slowed down (2 ms each); every launch must make progress — commit work that the next launch finds
        /// — and the migration finish.
        @Test("watchdog with a random time budget per launch")
        func watchdogBudget() throws {
            try #require(Products.available)
            let count = 600, batch = 50
            let seeds = Tier.current.pick(ci: 3, full: 20)
            let workspace = try Workspace("budget")
            var kills = 0
            var lost = 0, wrong = 0
            for s in 0..<seeds {
                let store = try workspace.copy(try PristineStores.v1(count: count), to: "store\(s)")
                var random = SeededGenerator(seed: Tier.seed &+ UInt64(s) &* 101)
                let plan = s % 2 == 0 ? "rewrite" : "script"
                let trial = KillTrial(plan: plan, count: count, batch: batch)
                var done = false
                var launches = 0, killed = 0
                var previous: (launch: Int, last: String)? = nil
                while !done && launches < 300 {
                    launches += 1
                    let budget = 0.5 + Double(random.next() % 500) / 1000
                    let run = try Child.run(trial.arguments(store), environment: ["STRATA_FAULT": "batch.afterPut:*:sleep:2"], killAfter: budget)
                    let acks = acknowledgements(run)
                    let found = acks.first?.1 ?? "none"
                    // The previous launch's work is all here: this one opens exactly where it stopped (or one
                    // commit further, killed between a commit and its acknowledgement).
                    if let p = previous, found != p.last, (transactionID(found) ?? -1) != (transactionID(p.last) ?? -2) + 1 {
                        Issue.record("seed \(s), launch \(launches) opened at \(found), launch \(p.launch) acknowledged \(p.last)")
                    }
                    if run.signal == 9 {
                        kills += 1
                        if !migrationFinished(acks.last?.1 ?? "none", plan: plan) { killed += 1 }
                        // Progress at every launch: it committed something before it was killed.
                        #expect(acks.count >= 2, "seed \(s), launch \(launches) was killed after \(String(format: "%.2f", budget)) s without committing anything: \(run)")
                        previous = (launches, acks.last?.1 ?? "none")
                        continue
                    }
                    #expect(run.exitCode == 0, "\(run)")
                    let result = try #require(checkResult(run))
                    #expect(result.isClean, "\(result)")
                    lost += result.lost
                    wrong += result.wrongValues
                    done = true
                }
                #expect(done, "seed \(s) did not converge in \(launches) launches")
                #expect(killed >= 1, "seed \(s): no launch was killed mid-migration")
            }
            Figures.add("watchdog with time budgets (\(seeds) seeds)") { c in
                c.kills += kills
                c.recordsLost += lost
                c.silentWrongValues += wrong
            }
        }

        /// Issue 3's crash test: a store of 100,000 objects, migrated by a child killed with SIGKILL at 50 seeded
        /// random instants; after each kill a fresh process reopens it, the migration completes, and every
        /// object is checked against the oracle.
        @Test("issue 3: 100,000 objects, 50 kills at random instants")
        func hundredThousand() throws {
            try #require(Products.available)
            let count = 100_000, batch = 10_000
            let kills = 50
            let workspace = try Workspace("100k")
            let pristine = try PristineStores.v1(count: count, batch: batch)
            let timing = try Child.run(KillTrial(plan: "rewrite", count: count, batch: batch).arguments(try workspace.copy(pristine, to: "timing")),
                                       environment: ["STRATA_FAULT": "switch.afterCommit:0:exit"])
            let span = max(0.3, timing.duration)
            var random = SeededGenerator(seed: Tier.seed &+ 100_000)
            let cases: [(Int, Double)] = (0..<kills).map { ($0, Double(random.next() % 10_000) / 10_000 * span * 0.85) }
            let outcomes = Mutex<[KillTrial.Outcome]>([])
            try concurrentForEach(cases) { (i, delay) in
                let store = try workspace.copy(pristine, to: "k\(i)")
                // Every object is checked against the oracle after every kill; `verify()` (indexes, links)
                // runs after one kill in five, to keep the test inside CI's budget.
                var outcome = try KillTrial(plan: "rewrite", count: count, batch: batch, skipVerify: i % 5 != 0)
                    .run(store: store, killAfter: delay)
                outcome.problems = outcome.problems.map { "[kill \(i) at +\(String(format: "%.3f", delay))s] \($0)" }
                outcomes.withLock { $0.append(outcome) }
                try? FileManager.default.removeItem(at: store)
            }
            let done = outcomes.withLock { $0 }
            #expect(done.filter(\.midWork).count >= kills * 8 / 10, "only \(done.filter(\.midWork).count) of \(kills) children were killed mid-migration")
            record("issue 3: 100,000 objects, \(kills) random kills", done)
        }

        /// Issue 4: a kill in the middle of a custom stage — the stage completes on reopen, no object is
        /// duplicated, no script's effect is doubled. (Also covered at every boundary above; this one kills
        /// inside each pass of the stages at several records; `declared` is a declared mapping's streaming copy.)
        @Test("issue 4: kill in the middle of a custom stage", arguments: ["custom", "typed", "script", "declared"])
        func customStage(plan: String) throws {
            try #require(Products.available)
            let count = 600, batch = 100
            let workspace = try Workspace("stage-\(plan)")
            let pristine = try PristineStores.v1(count: count)
            let all = try Kills.points(plan: plan, store: pristine, workspace: workspace, count: count, batch: batch)
            // Every record boundary of the first two batches of each task, and the scripts' transactions.
            let puts = all.filter { $0.0 == "batch.afterPut" }.map(\.1)
            let chosen = Array(Set(puts.filter { $0 % 37 == 5 } + [0, 99, 100, 101, 250, puts.count - 1])).sorted()
            let outcomes = Mutex<[KillTrial.Outcome]>([])
            try concurrentForEach(chosen) { index in
                let store = try workspace.copy(pristine, to: "p\(index)")
                var outcome = try KillTrial(plan: plan, count: count, batch: batch)
                    .run(store: store, fault: "batch.afterPut:\(index):kill", ledger: workspace.url("p\(index).ledger"))
                if !outcome.midWork { outcome.problems.append("the child was not killed inside the stage") }
                outcome.problems = outcome.problems.map { "[afterPut \(index)] \($0)" }
                outcomes.withLock { $0.append(outcome) }
                try? FileManager.default.removeItem(at: store)
            }
            record("issue 4: kills inside the '\(plan)' stage (\(chosen.count) points)", outcomes.withLock { $0 })
        }
    }
}

/// A custom stage whose policy or script throws at object k rolls the step back: `MigrationError.stageFailed`
/// naming the object, the store intact at its source version (every object equal to the oracle at v1; what
/// `willMigrate` committed stays, as the stage's documented effect on the source store), and a later run
/// with a working stage migrates from scratch. A stage that *traps* at object k is a crash: the next launch
/// resumes from the journal.
extension ReliabilitySuite {
    @Suite struct StageFailures {
        @Test("a policy or script that throws at object k rolls the step back", arguments: ["custom", "typed", "script"])
        func throwing(plan: String) throws {
            try #require(Products.available)
            let count = 600, batch = 100
            let workspace = try Workspace("throw-\(plan)")
            let pristine = try PristineStores.v1(count: count)
            for k in [0, 1, batch - 1, batch, batch + 1, count / 2, count - 1] {
                let store = try workspace.copy(pristine, to: "k\(k)")
                let base = ["migrate", store.path, "--count", "\(count)", "--batch", "\(batch)", "--seed", "\(Tier.seed)"]
                let failed = try Child.run(base + ["--plan", plan, "--throw-at", "\(k)"])
                #expect(failed.exitCode == 2, "k=\(k): \(failed)")
                #expect(failed.line("ERR ")?.contains("typed MigrationError.stageFailed") == true, "k=\(k): \(failed.line("ERR ") ?? "-")")
                #expect(failed.line("ERR ")?.contains("injected failure at serial \(k)") == true, "k=\(k): \(failed.line("ERR ") ?? "-")")
                // Intact at v1: no journal, every object as before; willMigrate's committed marker stays.
                let probe = try Child.run(["probe", store.path])
                #expect(probe.line("SIG ")?.contains("v=v1 ") == true && probe.line("SIG ")?.contains(" m=0 ") == true, "k=\(k): \(probe)")
                let atV1 = try Child.run(base + ["--plan", "v1", "--markers", "will:1"])
                #expect(atV1.exitCode == 0 && checkResult(atV1)?.isClean == true, "k=\(k): \(atV1)")
                // Fixed stage: migrates from scratch (willMigrate runs again: the step restarted).
                let fixed = try Child.run(base + ["--plan", plan, "--markers", "will:2,did:1"])
                #expect(fixed.exitCode == 0 && checkResult(fixed)?.isClean == true, "k=\(k): \(fixed)")
            }
        }

        @Test("a stage that traps at object k: a crash, resumed on the next launch", arguments: ["custom", "typed", "script"])
        func trapping(plan: String) throws {
            try #require(Products.available)
            let count = 600, batch = 100
            let workspace = try Workspace("trap-\(plan)")
            let pristine = try PristineStores.v1(count: count)
            var crashes = 0
            for k in [0, 1, batch - 1, batch, batch + 1, count / 2, count - 1] {
                let store = try workspace.copy(pristine, to: "k\(k)")
                let base = ["migrate", store.path, "--plan", plan, "--count", "\(count)", "--batch", "\(batch)", "--seed", "\(Tier.seed)"]
                let crashed = try Child.run(base + ["--trap-at", "\(k)"])
                #expect(crashed.signal != nil, "k=\(k): \(crashed)")
                let last = acknowledgements(crashed).last?.1 ?? "none"
                let resumed = try Child.run(base)
                #expect(acknowledgements(resumed).first?.1 == last, "k=\(k): reopened elsewhere than the last commit")
                #expect(resumed.exitCode == 0 && checkResult(resumed)?.isClean == true, "k=\(k): \(resumed)")
                if crashed.signal != nil && resumed.exitCode == 0 { crashes += 1 }
            }
            Figures.add("stage '\(plan)' trapping at object k: \(crashes) crashes resumed") { c in c.kills += crashes }
        }
    }
}
