import Foundation
import StrataTortureKit
import Synchronization
import Testing

/// Area 4 of issue 7: `MDB_MAP_FULL` in a put and at commit (injected into the child's LMDB calls, and for
/// real with large values), with and without a snapshot pinned in the process, and processes that must
/// adopt a map another process grew (`MDB_MAP_RESIZED`). The batch is retried after growth, or a typed
/// error comes at the configured ceiling (or while a pinned snapshot keeps the map from moving) and the
/// migration resumes later.
extension ReliabilitySuite {
    @Suite struct MapFull {
        func migrate(_ workspace: Workspace, _ name: String, count: Int = 600, plan: String = "rewrite",
                     extra: [String] = []) throws -> ChildResult {
            let store = try workspace.copy(try PristineStores.v1(count: count), to: name)
            return try Child.run(["migrate", store.path, "--plan", plan, "--count", "\(count)", "--batch", "100",
                                  "--seed", "\(Tier.seed)"] + extra)
        }

        func mapSize(_ result: ChildResult) -> Int? {
            result.line("INFO ").flatMap { $0.split(separator: " ").first { $0.hasPrefix("map=") } }.flatMap { Int($0.dropFirst(4)) }
        }

        @Test("MDB_MAP_FULL from a put or from commit: the batch is retried after the map grows")
        func retriedAfterGrowth() throws {
            try #require(Products.available)
            let workspace = try Workspace("mapfull")
            var cases: [(String, String)] = []
            for after in [0, 1, 7, 99, 100, 150, 420, 1100] { cases.append(("put:MAP_FULL:\(after):1", "rewrite")) }
            cases.append(("put:MAP_FULL:30:3", "rewrite"))
            for after in [0, 2, 5, 11, 20] { cases.append(("commit:MAP_FULL:\(after):1", "rewrite")) }
            for after in [3, 250] { cases.append(("put:MAP_FULL:\(after):1", "custom")) }
            cases.append(("commit:MAP_FULL:4:1", "custom"))
            // At successive commits of the custom stage (600 items, batches of 100: its last instance batches, every
            // relationship batch, the switch), and of the typed stage's relationship pass: each batch runs again, its
            // objects asked for again of the thread that decoded them ahead, which must not hand over the ones after
            // them (the custom stage's relationship closure checks what it is handed; the oracle's link check sees
            // what the typed one would link wrong).
            for after in 5..<16 { cases.append(("commit:MAP_FULL:\(after):1", "custom")) }
            for after in 8..<15 { cases.append(("commit:MAP_FULL:\(after):1", "typed")) }
            cases.append(("put:MAP_FULL:250:1", "typed"))
            let results = Mutex<[(String, ChildResult)]>([])
            try concurrentForEach(Array(cases.enumerated())) { (i, c) in
                let run = try migrate(workspace, "m\(i)", plan: c.1, extra: ["--lmdb-fault", c.0, "--map-initial", "\(64 << 20)"])
                results.withLock { $0.append((c.0, run)) }
            }
            var survived = 0
            for (fault, run) in results.withLock({ $0 }) {
                #expect(run.exitCode == 0, "\(fault): \(run)")
                let result = checkResult(run)
                #expect(result?.isClean == true, "\(fault): \(String(describing: result))")
                // The map grew past where it started.
                #expect((mapSize(run) ?? 0) > 64 << 20, "\(fault): the map did not grow: \(run.line("INFO ") ?? "-")")
                if run.exitCode == 0 && result?.isClean == true { survived += 1 }
            }
            Figures.add("MDB_MAP_FULL injected in \(cases.count) migrations (put and commit): \(survived) retried after growth") { _ in }
        }

        @Test("MDB_MAP_FULL with a snapshot pinned in the process: typed error, snapshot intact, resumable")
        func pinnedSnapshot() throws {
            try #require(Products.available)
            let workspace = try Workspace("pinned")
            for (i, fault) in ["put:MAP_FULL:120:1", "commit:MAP_FULL:6:1"].enumerated() {
                let store = try workspace.copy(try PristineStores.v1(count: 600), to: "p\(i)")
                let run = try Child.run(["pinned-migrate", store.path, "--plan", "rewrite", "--count", "600", "--batch", "100",
                                         "--seed", "\(Tier.seed)", "--lmdb-fault", fault, "--map-wait", "0.3"])
                #expect(run.exitCode == 0, "\(run)")
                #expect(run.line("STOPPED ")?.contains("typed MigrationError.interrupted/mapGrowthBlocked") == true, "\(run.line("STOPPED ") ?? "-")")
                #expect(run.line("SNAPSHOT ")?.hasPrefix("SNAPSHOT same") == true, "\(run.line("SNAPSHOT ") ?? "-")")
                #expect(checkResult(run)?.isClean == true, "\(run)")
            }
        }

        @Test("the map's ceiling: a typed error, acknowledged work intact, resumed with a higher ceiling")
        func ceiling() throws {
            try #require(Products.available)
            let workspace = try Workspace("ceiling")
            // A migration that needs more than the ceiling (1 MiB) allows.
            let store = try workspace.copy(try PristineStores.v1(count: 5000), to: "store")
            let stopped = try Child.run(["migrate", store.path, "--plan", "rewrite", "--count", "5000", "--batch", "500",
                                         "--seed", "\(Tier.seed)", "--map-max", "1"])
            #expect(stopped.exitCode == 2, "\(stopped)")
            #expect(stopped.line("ERR ")?.contains("typed MigrationError.interrupted/mapFull") == true, "\(stopped.line("ERR ") ?? "-")")
            let probe = try Child.run(["probe", store.path])
            #expect(probe.line("SIG ")?.contains("m=1") == true, "the journal should remain for a resume: \(probe)")
            let resumed = try Child.run(["migrate", store.path, "--plan", "rewrite", "--count", "5000", "--batch", "500", "--seed", "\(Tier.seed)"])
            #expect(resumed.exitCode == 0 && checkResult(resumed)?.isClean == true, "\(resumed)")

            // Writes past the ceiling: the batches acknowledged before are all there.
            let small = try workspace.copy(try PristineStores.v1(count: 600), to: "small")
            let full = try Child.run(["write-load", small.path, "--from", "600", "--count", "200", "--batch", "10",
                                      "--blob-size", "65536", "--map-max", "4194304", "--seed", "\(Tier.seed)"])
            #expect(full.exitCode == 2 && full.line("ERR ")?.contains("StoreError.mapFull") == true, "\(full)")
            let acked = full.acknowledgements.count
            let check = try Child.run(["probe", small.path])
            let items = check.line("SIG ").flatMap { recordCount($0) }
            #expect(items == 600 + acked * 10, "\(items ?? -1) items after \(acked) acknowledged batches")
            Figures.add("map ceiling: typed errors, resumed") { _ in }
        }

        @Test("a second process adopts a map another process grew (MDB_MAP_RESIZED)")
        func secondProcessAdopts() throws {
            try #require(Products.available)
            let workspace = try Workspace("resized")
            let store = try workspace.copy(try PristineStores.v1(count: 200), to: "store")
            let reader = try Child(["late-reader", store.path, "--map-initial", "1", "--seed", "\(Tier.seed)"])
            let ready = reader.waitForLine(timeout: 60) { $0.hasPrefix("READY") }
            #expect(ready != nil)
            // 80 MiB of blobs: far beyond the reader's map of about 64 MiB.
            let writer = try Child.run(["write-load", store.path, "--from", "200", "--count", "80", "--batch", "4",
                                        "--blob-size", "\(1 << 20)", "--map-initial", "1", "--seed", "\(Tier.seed)"], timeout: 300)
            #expect(writer.exitCode == 0, "\(writer)")
            reader.closeInput()
            let result = reader.wait(timeout: 120)
            #expect(result.exitCode == 0, "\(result)")
            #expect(result.line("RESULT")?.contains("items=280 clean=1") == true, "\(result.line("RESULT") ?? "-")")
        }

        @Test("two processes growing the map at once")
        func twoProcessesGrow() throws {
            try #require(Products.available)
            let rounds = Tier.current.pick(ci: 2, full: 20)
            let workspace = try Workspace("grow2")
            for r in 0..<rounds {
                let store = try workspace.copy(try PristineStores.v1(count: 100), to: "s\(r)")
                let a = try Child(["write-load", store.path, "--from", "100", "--count", "45", "--batch", "3",
                                   "--blob-size", "\(1 << 20)", "--map-initial", "1", "--seed", "\(Tier.seed)"])
                let b = try Child(["write-load", store.path, "--from", "145", "--count", "45", "--batch", "3",
                                   "--blob-size", "\(1 << 20)", "--map-initial", "1", "--seed", "\(Tier.seed)"])
                let ra = a.wait(timeout: 300), rb = b.wait(timeout: 300)
                #expect(ra.exitCode == 0 && rb.exitCode == 0, "\(ra) / \(rb)")
                let open = try Child.run(["open", store.path, "--plan", "v1", "--count", "190", "--ignore", "blob", "--seed", "\(Tier.seed)"], timeout: 120)
                #expect(open.line("OK ")?.contains("items=190 unreadable=0 wrong=0 lost=0 verify=0 clean=1") == true, "\(open)")
                try? FileManager.default.removeItem(at: store)
            }
        }
    }
}
