@_spi(Testing) import Strata
import Foundation
import StrataTortureKit
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Area 9 of issue 7: concurrency. Readers during a migration see one version only (8 and 200 of them); a
/// pinned snapshot keeps reading the old data; writers of one process never deadlock and lose nothing; a
/// second process opening mid-migration gets `migrationInProgress` (and takes over when the migrating
/// process dies); a second open of the same files in one process (also through a symlink, a hard link or
/// a renamed directory) shares the one LMDB environment; `fork()` is detected; stale readers of killed
/// processes are cleared.
/// A condition that threads wait on until it is set once (no sleeping, no polling).
final class Flag: @unchecked Sendable {
    private let condition = NSCondition()
    private var value = false
    func set() { condition.lock(); value = true; condition.broadcast(); condition.unlock() }
    /// Waits until the flag is set; false after `timeout` seconds without it (a deadlock guard, not a delay).
    @discardableResult
    func wait(timeout: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !value { if !condition.wait(until: deadline) { return value } }
        return true
    }
    var isSet: Bool { condition.lock(); defer { condition.unlock() }; return value }
}

extension ReliabilitySuite {
    @Suite struct Concurrency {
        struct ReadTally: Sendable {
            var v1 = 0, v3 = 0, mixed = 0, modelChanged = 0, inProgress = 0, other: [String] = []
        }

        /// Runs `readers` threads reading every item through the public API while the store migrates v1 → v3 in
        /// this process; each read must be entirely v1 or entirely v3.
        func readersDuringMigration(readers: Int, fullCheck: Bool) throws {
            let count = 2000
            let workspace = try Workspace("readers\(readers)")
            let url = try workspace.copy(try PristineStores.v1(count: count), to: "store")
            let oracle = SeededContents(seed: Tier.seed)
            let v1 = try Store.open(at: url, schema: try TortureModels.v1())
            let plan = try TortureModels.plan("rewrite")
            let stop = Atomic<Bool>(false)
            let tally = Mutex(ReadTally())
            let group = DispatchGroup()
            let atV3 = Atomic<Int>(0)

            @Sendable func classify(_ context: ReadContext, version: String) throws -> Bool {
                var n = 0
                var consistent = true
                try context.objects("Item").forEach { item in
                    n += 1
                    let serial = Int(item["serial"].int64Value ?? -1)
                    if fullCheck {
                        let want = oracle.expectedValues(serial, version: version)
                        if want.contains(where: { item[$0.key] != $0.value }) { consistent = false }
                    } else if version == "v1" ? item["title"].isNull || item["score"].int64Value == nil : item["name"].isNull {
                        consistent = false
                    }
                    if case .int16 = item["score"] { if version != "v1" { consistent = false } }
                    if case .int64 = item["score"] { if version != "v3" { consistent = false } }
                    // A Codable value read in the other version's shape is a mixed read too.
                    if case .codable(let json) = item["spot"], String(decoding: json, as: UTF8.self).contains("\"north\"") != (version != "v1") {
                        consistent = false
                    }
                }
                return consistent && n == count
            }

            // Each reader's first read holds its snapshot until the migration has committed a batch: the
            // migration starts once every reader holds one, and the first batch's progress report releases them.
            let holding = DispatchGroup()
            let batchCommitted = Flag()
            let overlapped = Atomic<Int>(0)
            for _ in 0..<readers {
                group.enter()
                holding.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    var held = false
                    defer { if !held { holding.leave() } }
                    do {
                        let (before, after, committed) = try v1.read { context in
                            let before = try classify(context, version: "v1")
                            held = true
                            holding.leave()
                            let committed = batchCommitted.wait()
                            return (before, try classify(context, version: "v1"), committed)
                        }
                        tally.withLock { t in if before && after { t.v1 += 1 } else { t.mixed += 1 } }
                        if before && after && committed { overlapped.add(1, ordering: .relaxed) }
                    } catch {
                        tally.withLock { $0.other.append("held read: \(error)") }
                    }
                    var handle: Store? = v1
                    var version = "v1"
                    var reachedV3 = false
                    while !stop.load(ordering: .relaxed) {
                        do {
                            guard let h = handle else {
                                handle = try Store.open(at: url, schema: plan.currentSchema, plan: plan)
                                version = "v3"
                                continue
                            }
                            let ok = try h.read { try classify($0, version: version) }
                            if version == "v3" && !reachedV3 { reachedV3 = true; atV3.add(1, ordering: .relaxed) }
                            tally.withLock { t in
                                if !ok { t.mixed += 1 } else if version == "v1" { t.v1 += 1 } else { t.v3 += 1 }
                            }
                        } catch let error as StoreError where error.code == .modelChanged {
                            tally.withLock { $0.modelChanged += 1 }
                            handle = nil
                        } catch let error as StoreError where error.code == .migrationInProgress {
                            tally.withLock { $0.inProgress += 1 }
                            usleep(2_000)
                        } catch {
                            tally.withLock { $0.other.append("\(error)") }
                            usleep(2_000)
                        }
                    }
                    if version == "v3" { handle?.close() }
                }
            }
            // A pinned snapshot, taken before the migration and read again after it.
            let pinned = DispatchSemaphore(value: 0)
            let migrated = DispatchSemaphore(value: 0)
            let snapshot = Mutex<(before: [Int64], after: [Int64])>(([], []))
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    try v1.read { context in
                        let before = try context.objects("Item").fetch().compactMap { $0["score"].int64Value }
                        pinned.signal()
                        migrated.wait()
                        let after = try context.objects("Item").fetch().compactMap { $0["score"].int64Value }
                        snapshot.withLock { $0 = (before, after) }
                    }
                } catch {
                    pinned.signal()
                    snapshot.withLock { $0 = ([-1], []) }
                }
            }
            pinned.wait()
            holding.wait()
            var configuration = TortureModels.configuration(plan: "rewrite")
            configuration.migration.batchSize = 100
            configuration.migration.progress = { p in if p.phase == .instances { batchCommitted.set() } }
            do {
                try Store.migrate(at: url, plan: plan, configuration: configuration)
            } catch {
                batchCommitted.set()
                migrated.signal()
                throw error
            }
            batchCommitted.set()
            migrated.signal()
            // Every reader goes on until it has read the migrated store at least once.
            let deadline = Date().addingTimeInterval(120)
            while atV3.load(ordering: .relaxed) < readers && Date() < deadline { usleep(10_000) }
            stop.store(true, ordering: .relaxed)
            group.wait()
            v1.close()
            let t = tally.withLock { $0 }
            let s = snapshot.withLock { $0 }
            #expect(t.mixed == 0, "\(t.mixed) reads mixed versions")
            #expect(t.other.isEmpty, "\(t.other.prefix(3))")
            #expect(t.v1 > 0 && atV3.load(ordering: .relaxed) == readers, "reads at v1: \(t.v1), at v3: \(t.v3); readers that reached v3: \(atV3.load(ordering: .relaxed))")
            #expect(s.before.count == count && s.before == s.after, "the pinned snapshot changed: \(s.before.count) → \(s.after.count)")
            // Every reader read v1 whole in a snapshot that a committed batch of the migration overlapped.
            #expect(overlapped.load(ordering: .relaxed) == readers, "\(overlapped.load(ordering: .relaxed)) of \(readers) held reads overlapped a batch")
            Figures.add("\(readers) readers during a migration: \(t.v1) reads at v1 (\(overlapped.load(ordering: .relaxed)) of them held across a committed batch), \(t.v3) at v3, \(t.modelChanged) told the model changed; pinned snapshot unchanged") { c in
                c.mixedReads += t.mixed
            }
        }

        @Test("8 readers during a migration see one version only; a pinned snapshot reads the old data")
        func eightReaders() throws {
            try readersDuringMigration(readers: 8, fullCheck: true)
        }

        @Test("200 readers during a migration")
        func twoHundredReaders() throws {
            try readersDuringMigration(readers: 200, fullCheck: false)
        }

        @Test("16 writers in one process, with and without a migration: no deadlock, nothing lost",
              .timeLimit(.minutes(3)))
        func writers() throws {
            let workspace = try Workspace("writers")
            let url = try workspace.copy(try PristineStores.v1(count: 500), to: "store")
            let store = try Store.open(at: url, schema: try TortureModels.v1())
            let perWriter = Tier.current.pick(ci: 150, full: 1000)
            let committed = Mutex<[String]>([])
            let refused = Atomic<Int>(0)
            let writers = 16
            func writeAll(_ phase: String, while migrating: Bool) {
                let group = DispatchGroup()
                for w in 0..<writers {
                    group.enter()
                    Thread.detachNewThread {
                        defer { group.leave() }
                        for i in 0..<perWriter {
                            let kind = "\(phase)-\(w)-\(i)"
                            do {
                                try store.write { context in _ = try context.insert("Marker", ["kind": .string(kind)]) }
                                committed.withLock { $0.append(kind) }
                            } catch let error as StoreError where error.code == .migrationInProgress {
                                refused.add(1, ordering: .relaxed)
                            } catch let error as StoreError where error.code == .modelChanged {
                                refused.add(1, ordering: .relaxed)
                                return
                            } catch {
                                Issue.record("writer \(w): \(error)")
                                return
                            }
                        }
                    }
                }
                if migrating {
                    var configuration = TortureModels.configuration(plan: "rewrite")
                    configuration.migration.batchSize = 50
                    usleep(20_000)
                    do { try Store.migrate(at: url, plan: try TortureModels.plan("rewrite"), configuration: configuration) } catch {
                        Issue.record("migration: \(error)")
                    }
                }
                group.wait()
            }
            writeAll("plain", while: false)
            // Async writers too: transactions run on the store's writer queue, never across an await.
            try runAsyncWriters(store, count: 200)
            writeAll("during", while: true)
            store.close()
            let v3 = try Store.open(at: url, schema: try TortureModels.v3(), plan: try TortureModels.plan("rewrite"), configuration: TortureModels.configuration(plan: "rewrite"))
            let kinds = Set(try v3.read { try $0.objects("Marker").fetch().compactMap { $0["kind"].stringValue } })
            let expected = Set(committed.withLock { $0 })
            #expect(expected.isSubset(of: kinds), "\(expected.subtracting(kinds).count) committed writes lost")
            #expect(kinds.filter { $0.hasPrefix("plain") }.count == writers * perWriter)
            #expect(kinds.filter { $0.hasPrefix("async") }.count == 200)
            #expect(try v3.verify().isClean)
            v3.close()
            Figures.add("16 writers in one process: \(expected.count) writes committed, \(refused.load(ordering: .relaxed)) refused during the migration (typed)") { c in
                c.recordsLost += expected.subtracting(kinds).count
            }
        }

        func runAsyncWriters(_ store: Store, count: Int) throws {
            let done = DispatchSemaphore(value: 0)
            let failure = Mutex<String?>(nil)
            Task {
                do {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for i in 0..<count {
                            group.addTask {
                                try await store.write { context in _ = try context.insert("Marker", ["kind": .string("async-\(i)")]) }
                            }
                        }
                        try await group.waitForAll()
                    }
                } catch {
                    failure.withLock { $0 = "\(error)" }
                }
                done.signal()
            }
            done.wait()
            if let f = failure.withLock({ $0 }) { Issue.record("async writers: \(f)") }
        }

        @Test("a second process opening the store mid-migration", .timeLimit(.minutes(3)))
        func secondProcess() throws {
            try #require(Products.available)
            let workspace = try Workspace("second")
            let count = 600
            let url = try workspace.copy(try PristineStores.v1(count: count), to: "store")
            let before = try Store.open(at: url, schema: try TortureModels.v1())
            // A child migrates slowly; this process watches.
            let child = try Child(["migrate", url.path, "--plan", "rewrite", "--count", "\(count)", "--batch", "50", "--seed", "\(Tier.seed)"],
                                  environment: ["STRATA_FAULT": "batch.afterCommit:*:sleep:100"])
            #expect(child.waitForLine(timeout: 60) { $0.hasPrefix("ACK 3 ") } != nil)
            // Reads of a handle opened before go on at v1; its writes are refused.
            #expect(try before.read { try $0.count("Item") } == count)
            #expect(throws: StoreError.self) { try before.write { _ = try $0.insert("Marker", ["kind": "x"]) } }
            do {
                try before.write { _ = try $0.insert("Marker", ["kind": "x"]) }
            } catch let error as StoreError where error.code == .migrationInProgress {
            } catch {
                Issue.record("write during another process's migration: \(error)")
            }
            // Asked not to wait, an open with the new model is refused at once, naming the migrating process.
            var impatient = TortureModels.configuration(plan: "rewrite")
            impatient.migration.waitsForOtherProcesses = false
            do {
                let s = try Store.open(at: url, schema: try TortureModels.v3(), plan: try TortureModels.plan("rewrite"), configuration: impatient)
                s.close()
                Issue.record("opened with the new model, not waiting, during another process's migration")
            } catch let error as StoreError where error.code == .migrationInProgress {
                #expect(error.processID == child.pid, "owner \(String(describing: error.processID)), child \(child.pid)")
            } catch {
                Issue.record("open not waiting: \(error)")
            }
            // A new handle at the store's version opens and reads v1 whole; its writes are refused too.
            let reader = try Store.open(at: url, schema: try TortureModels.v1(), configuration: TortureModels.configuration(plan: "v1"))
            let readDuring = try SeededContents(seed: Tier.seed).check(reader, expected: 0..<count, runVerify: false)
            #expect(readDuring.isClean, "a v1 handle opened during the migration: \(readDuring)")
            #expect(throws: StoreError.self) { try reader.write { _ = try $0.insert("Marker", ["kind": "y"]) } }
            reader.close()
            // With the new model (waiting, the default): the open returns once the other process's migration is
            // done, at v3, every object there.
            let waited = try Store.open(at: url, schema: try TortureModels.v3(), plan: try TortureModels.plan("rewrite"),
                                        configuration: TortureModels.configuration(plan: "rewrite"))
            #expect(waited.schema.versionIdentifier == "v3")
            let afterWait = try SeededContents(seed: Tier.seed).check(waited, expected: 0..<count)
            #expect(afterWait.isClean, "opened after waiting: \(afterWait)")
            waited.close()
            let finished = child.wait(timeout: 120)
            #expect(finished.exitCode == 0 && checkResult(finished)?.isClean == true, "\(finished)")
            #expect(throws: StoreError.self) { _ = try before.read { try $0.count("Item") } }
            before.close()

            // The migrating process dies: the next process takes the migration over and finishes it.
            let url2 = try workspace.copy(try PristineStores.v1(count: count), to: "store2")
            let dying = try Child.run(["migrate", url2.path, "--plan", "rewrite", "--count", "\(count)", "--batch", "50", "--seed", "\(Tier.seed)"],
                                      environment: ["STRATA_FAULT": "batch.afterCommit:4:kill"])
            #expect(dying.signal == 9)
            let taken = try Store.open(at: url2, schema: try TortureModels.v3(), plan: try TortureModels.plan("rewrite"), configuration: TortureModels.configuration(plan: "rewrite"))
            let result = try SeededContents(seed: Tier.seed).check(taken, expected: 0..<count)
            #expect(result.isClean, "\(result)")
            taken.close()

            // Two processes start migrating at the same instant: one migrates; the other (waiting, the default)
            // waits for it and finds the store migrated — never runs the step again on what it read before the
            // lock. Both succeed and the store ends clean.
            let rounds = Tier.current.pick(ci: 4, full: 50)
            var kills = 1
            for r in 0..<rounds {
                let u = try workspace.copy(try PristineStores.v1(count: count), to: "race\(r)")
                let args = ["migrate", u.path, "--plan", r % 2 == 0 ? "rewrite" : "custom", "--count", "\(count)", "--batch", "100", "--seed", "\(Tier.seed)"]
                let a = try Child(args), b = try Child(args)
                let ra = a.wait(timeout: 120), rb = b.wait(timeout: 120)
                for run in [ra, rb] {
                    #expect(run.exitCode == 0 && checkResult(run)?.isClean == true, "\(run)")
                }
                let check = try Child.run(args)
                #expect(check.exitCode == 0 && checkResult(check)?.isClean == true, "\(check)")
            }
            kills += 0
            Figures.add("second processes during migrations (refused while migrating, takeover after a kill, \(rounds) simultaneous starts)") { c in
                c.kills += 1
            }
        }

        /// What this shows: a second `Store.open` of the same files in one process — by the same path, a
        /// symlink, a hard link, or after a rename — works, and the other handle goes on working after one of
        /// them closes (no `MDB_BAD_RSLOT`). Two handles on one shared environment see the same data by
        /// construction, so this test cannot see lost writes; `twoProcessesLoseNothing` can.
        @Test("the same store opened twice in one process: shared, also through a symlink, a hard link and a rename")
        func sameStoreTwice() throws {
            try #require(Products.available)
            let workspace = try Workspace("twice")
            let url = try workspace.copy(try PristineStores.v1(count: 300), to: "store")
            let v1 = try TortureModels.v1()
            let link = workspace.url("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
            let hard = workspace.url("hard")
            try FileManager.default.createDirectory(at: hard, withIntermediateDirectories: true)
            try FileManager.default.linkItem(at: url.appendingPathComponent("data.mdb"), to: hard.appendingPathComponent("data.mdb"))
            for alias in [url, link, hard] {
                let a = try Store.open(at: url, schema: v1)
                let b = try Store.open(at: alias, schema: v1)
                try b.write { _ = try $0.insert("Marker", ["kind": .string("via \(alias.lastPathComponent)")]) }
                a.close()
                // The other handle goes on working after the first closed (no MDB_BAD_RSLOT).
                #expect(try b.read { try $0.count("Item") } == 300)
                try b.write { _ = try $0.insert("Marker", ["kind": "after close"]) }
                let c = try Store.open(at: url, schema: v1)
                #expect(try c.read { try $0.count("Marker") } == b.read { try $0.count("Marker") })
                b.close()
                c.close()
            }
            // Renamed while open: opening the new path shares the environment.
            let a = try Store.open(at: url, schema: v1)
            let moved = workspace.url("moved")
            try FileManager.default.moveItem(at: url, to: moved)
            let b = try Store.open(at: moved, schema: v1)
            a.close()
            try b.write { _ = try $0.insert("Marker", ["kind": "moved"]) }
            #expect(try b.verify().isClean)
            b.close()
            // A read-only handle first, then a writable one on the same files: refused, not a second environment.
            let ro = try Store.open(at: moved, schema: v1, configuration: { var c = StoreConfiguration(); c.readOnly = true; return c }())
            #expect(throws: StoreError.self) { _ = try Store.open(at: moved, schema: v1) }
            ro.close()
            let final = try Store.open(at: moved, schema: v1)
            #expect(try final.verify().isClean)
            final.close()
        }

        /// Lost writes across processes: this process opens the store twice (by its path and through a
        /// symlink) and closes the first handle — with two LMDB environments that would drop this process's
        /// locks on `lock.mdb`, and the next process would take the lock file for unused and reset its writer
        /// lock. A child then opens the store and appends while this process holds a write transaction: the
        /// child must not commit until it ends. Then both write, interleaved, until the child is done; every
        /// write of both must be there afterwards, with every object intact.
        @Test("two processes writing one store, one through two handles of which one was closed: no write lost",
              .timeLimit(.minutes(3)))
        func twoProcessesLoseNothing() throws {
            try #require(Products.available)
            let workspace = try Workspace("two-processes")
            let count = 300, appended = 300
            let url = try workspace.copy(try PristineStores.v1(count: count), to: "store")
            let link = workspace.url("link")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: url)
            let v1 = try TortureModels.v1()
            let first = try Store.open(at: url, schema: v1)
            let second = try Store.open(at: link, schema: v1)
            first.close()
            // The child appends items, one transaction each (ACK after each), while this process holds a
            // write transaction: the child's first commit must wait for it (waited for 2 s, then committed).
            let child = try Child(["write-load", link.path, "--from", "\(count)", "--count", "\(appended)", "--batch", "1", "--seed", "\(Tier.seed)"])
            let committedMeanwhile = try second.write { context -> Bool in
                _ = try context.insert("Marker", ["kind": "held"])
                return child.waitForLine(timeout: 2) { $0.hasPrefix("ACK ") } != nil
            }
            #expect(!committedMeanwhile, "the child committed while this process held its write transaction")
            // Then both write, interleaved, until the child is done.
            let written = Mutex<(kinds: [String], failure: String?)>((["held"], nil))
            let childDone = Atomic<Bool>(false)
            let writerDone = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                defer { writerDone.signal() }
                var n = 0
                while !childDone.load(ordering: .acquiring) && n < 20_000 {
                    let kind = "parent-\(n)"
                    do {
                        try second.write { _ = try $0.insert("Marker", ["kind": .string(kind)]) }
                        written.withLock { $0.kinds.append(kind) }
                        n += 1
                    } catch {
                        written.withLock { $0.failure = "\(error)" }
                        return
                    }
                }
            }
            let end = child.wait(timeout: 120)
            childDone.store(true, ordering: .releasing)
            writerDone.wait()
            let (kinds, failure) = written.withLock { $0 }
            let childCommits = acknowledgements(end).count
            #expect(failure == nil, "this process's write failed: \(failure ?? "")")
            #expect(end.exitCode == 0 && end.line("RESULT ") != nil, "\(end)")
            #expect(kinds.count >= 10 && childCommits >= 10, "\(kinds.count) writes here, \(childCommits) by the child")
            second.close()
            // A new handle finds every item of both (equal to the oracle), every marker, and a clean store.
            let store = try Store.open(at: url, schema: v1)
            defer { store.close() }
            let result = try SeededContents(seed: Tier.seed).check(store, expected: 0..<(count + appended),
                                                                   expectedMarkers: Dictionary(uniqueKeysWithValues: kinds.map { ($0, 1) }))
            #expect(result.isClean, "\(result.description.prefix(600))")
            let markersFound = try store.read { try $0.count("Marker") }
            #expect(markersFound == kinds.count, "\(kinds.count - markersFound) of this process's \(kinds.count) commits lost")
            Figures.add("two processes writing one store (\(kinds.count) + \(childCommits) commits interleaved)") { c in
                c.recordsLost += result.lost + max(0, kinds.count - markersFound)
                c.silentWrongValues += result.wrongValues
            }
        }

        @Test("fork() after open is detected; the parent keeps working")
        func fork() throws {
            try #require(Products.available)
            let workspace = try Workspace("fork")
            let url = try workspace.copy(try PristineStores.v1(count: 200), to: "store")
            let run = try Child.run(["fork-check", url.path])
            #expect(run.exitCode == 0, "\(run)")
            #expect(run.line("RESULT ") == "RESULT child=0 parent=ok", "\(run)")
        }

        @Test("stale readers of killed processes are cleared; MDB_READERS_FULL never reaches the caller")
        func staleReaders() throws {
            try #require(Products.available)
            let workspace = try Workspace("stale")
            let url = try workspace.copy(try PristineStores.v1(count: 200), to: "store")
            var configuration = StoreConfiguration()
            configuration.maximumReaders = 16
            // This process keeps the store open, so the lock file (and its reader table of 16 slots) stays.
            let store = try Store.open(at: url, schema: try TortureModels.v1(), configuration: configuration)
            let holders = Tier.current.pick(ci: 40, full: 200)
            let ready = Atomic<Int>(0)
            try concurrentForEach(Array(0..<holders), width: 2) { i in
                let child = try Child(["hold-read", url.path, "--max-readers", "16"])
                if child.waitForLine(timeout: 60, { $0.hasPrefix("READY") }) != nil { ready.add(1, ordering: .relaxed) }
                child.killNow()
                let end = child.wait(timeout: 30)
                if end.line("ERR ") != nil { Issue.record("reader \(i): \(end)") }
            }
            // More readers than slots were killed holding one: each slot was freed for the next by the check
            // Strata runs on MDB_READERS_FULL.
            #expect(ready.load(ordering: .relaxed) == holders)
            for i in 0..<200 { try store.write { _ = try $0.insert("Marker", ["kind": .string("w\(i)")]) } }
            #expect(try store.read { try $0.count("Marker") } == 200)
            let cleared = try ReliabilityProbe.clearStaleReaders(at: url)
            #expect(cleared <= 16)
            store.close()
            Figures.add("stale readers: \(holders) reader processes killed holding a snapshot, 16 reader slots, none refused") { c in
                c.kills += holders
            }
        }
    }
}
