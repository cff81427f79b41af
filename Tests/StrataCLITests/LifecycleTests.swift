import Foundation
@_spi(Testing) import Strata
import StrataTestSupport
import Testing

/// Suspending a store for the background (what iOS requires of a process with files in a shared container):
/// another process — `strata locks` — finds every lock of the store free after `suspend()`, reads and writes
/// are refused with `suspended`, and after `resume()` everything works again, observers and the background
/// sweep included, with nothing lost.
@Suite(.serialized) struct LifecycleTests {
    static func v1() throws -> Schema {
        try Schema("v1") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int16) } }
    }
    /// A widening of `x`: metadata only, so every record is left in v1's layout for the sweep to rewrite.
    static func v2() throws -> Schema {
        try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int32) } }
    }

    /// A store at v2 with `count` records still in v1's layout, opened with background maintenance (the sweep)
    /// and the given file watching.
    static func storeWithPendingSweep(in dir: TempDir, count: Int, watching: FileWatching) throws -> Store {
        let url = URL(fileURLWithPath: dir.path("s.store"))
        var quiet = StoreConfiguration()
        quiet.backgroundMaintenance = false
        do {
            let store = try Store.open(at: url, schema: try v1(), configuration: quiet)
            defer { store.close() }
            try store.write { ctx in
                for i in 1...count { _ = try ctx.insert("Item", ["n": .int64(Int64(i)), "x": .int16(Int16(i % 30_000))]) }
            }
        }
        var configuration = StoreConfiguration()
        configuration.fileWatching = watching
        return try Store.open(at: url, schema: try v2(), plan: try MigrationPlan(schemas: [try v1(), try v2()]),
                              configuration: configuration)
    }

    /// What `strata locks --json` says of the store: `lockFile` and `migrationLock`, each "free", "missing",
    /// "held" or a process ID.
    static func locks(in dir: TempDir) throws -> [String: String] {
        let result = try dir.strata("locks", "s.store", "--json")
        guard result.status == 0, let data = result.stdout.data(using: .utf8),
              let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            Issue.record("strata locks failed: \(result)")
            return [:]
        }
        return object.mapValues { "\($0)" }
    }

    @Test(arguments: FileWatching.allCases)
    func suspendLetsGoOfEveryLockAndResumeBringsBackObserversAndTheSweep(watching: FileWatching) async throws {
        let dir = try TempDir()
        let count = 100_000
        let store = try Self.storeWithPendingSweep(in: dir, count: count, watching: watching)
        defer { store.close() }
        // The sweep has just started on 100,000 records: suspended in its middle, it lets go of the files too.
        #expect(try store.maintenanceStatus().oldLayoutRecords > 0)
        try store.suspend()
        let duringTheSweep = try Self.locks(in: dir)
        #expect(duringTheSweep["lockFile"] == "free", "suspended during the sweep: \(duringTheSweep)")
        try store.resume()

        let counts = ObservedValues<Int>()
        let task = counts.record(store.observe { try $0.count("Item") })
        defer { task.cancel() }
        #expect(await counts.waitUntil { $0.last == count })

        // Open, the store's lock file is locked by this process (which `strata locks`, another process, sees).
        let open = try Self.locks(in: dir)
        #expect(open["lockFile"] == "\(ProcessInfo.processInfo.processIdentifier)", "while open: \(open)")
        let text = try dir.strata("locks", "s.store")
        #expect(text.stdout.contains("held by process \(ProcessInfo.processInfo.processIdentifier)\n"), "\(text.stdout)")

        var durations: [Duration] = []
        let clock = ContinuousClock()
        for round in 1...100 {
            try await store.write { _ = try $0.insert("Item", ["n": .int64(Int64(count + round)), "x": .int32(7)]) }
            durations.append(try clock.measure { try store.suspend() })
            #expect(store.isSuspended)
            let probe = try Self.locks(in: dir)
            #expect(probe["lockFile"] == "free", "round \(round): lock.mdb after suspend: \(probe)")
            #expect(probe["migrationLock"] == "free" || probe["migrationLock"] == "missing", "round \(round): \(probe)")
            let refused = await #expect(throws: StoreError.self) { try await store.read { try $0.count("Item") } }
            #expect(refused?.code == .suspended, "round \(round): a read while suspended")
            let refusedWrite = await #expect(throws: StoreError.self) {
                try await store.write { _ = try $0.insert("Item", ["n": .int64(-1), "x": .int32(0)]) }
            }
            #expect(refusedWrite?.code == .suspended, "round \(round): a write while suspended")
            try store.resume()
            #expect(!store.isSuspended)
            #expect(await counts.waitUntil { $0.last == count + round }, "round \(round): observed \(String(describing: counts.all.last))")
        }
        let sorted = durations.sorted()
        #expect(sorted[sorted.count / 2] < .milliseconds(50), "median suspend \(sorted[sorted.count / 2]), slowest \(sorted.last!)")

        // The sweep, paused by every suspension, finishes; every record reads back, none lost or duplicated.
        let deadline = clock.now + .seconds(60)
        while try !store.maintenanceStatus().isComplete, clock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try store.maintenanceStatus().isComplete)
        let ns = try await store.read { try $0.objects("Item").fetch().compactMap { $0["n"].int64Value } }
        #expect(ns.count == count + 100)
        #expect(Set(ns) == Set((1...Int64(count + 100))))
        #expect(counts.end == nil, "the observation goes on: \(String(describing: counts.end))")
    }

    /// Commits another process makes while the store is suspended reach the observers after `resume()`.
    @Test(arguments: FileWatching.allCases)
    func commitsOfAnotherProcessWhileSuspendedAreObservedAfterResume(watching: FileWatching) async throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try #require(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        var configuration = StoreConfiguration()
        configuration.fileWatching = watching
        let store = try Store.openRecorded(at: URL(fileURLWithPath: dir.path("s.store")), configuration: configuration)
        defer { store.close() }
        let counts = ObservedValues<Int>()
        let task = counts.record(store.observe { try $0.count("Tag") })
        defer { task.cancel() }
        #expect(await counts.waitUntil { $0 == [0] })
        try store.suspend()
        try dir.write("tags.jsonl", #"{"entity":"Tag","attributes":{"name":"while suspended"}}"# + "\n")
        let imported = try dir.strata("import", "s.store", "tags.jsonl")
        try #require(imported.status == 0, "\(imported)")
        #expect(counts.all == [0], "nothing is delivered while suspended")
        try store.resume()
        #expect(await counts.waitUntil { $0.last == 1 }, "after resume: \(counts.all)")
    }

    /// Another process migrates the store while this one is suspended: it is not held up by this process's
    /// locks (it migrates to the end, taking and releasing `migration.lock`); on resume this handle, bound to
    /// the older model, reads nothing stale — its reads throw `modelChanged` and its observation ends with it —
    /// and a handle opened with the new model reads every object.
    @Test func aMigrationByAnotherProcessWhileSuspendedEndsThisHandlesModelOnResume() async throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try dir.write("v2.json", Fixtures.v2)
        try dir.write("objects.jsonl", Fixtures.objects)
        try #require(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        try #require(try dir.strata("import", "s.store", "objects.jsonl").status == 0)
        let url = URL(fileURLWithPath: dir.path("s.store"))
        let store = try Store.openRecorded(at: url)
        defer { store.close() }
        let before = try await store.read { try $0.count("Post") }
        let counts = ObservedValues<Int>()
        let task = counts.record(store.observe { try $0.count("Post") })
        defer { task.cancel() }
        #expect(await counts.waitUntil { $0 == [before] })

        try store.suspend()
        let migrated = try dir.strata("migrate", "s.store", "--to", "v2.json")
        try #require(migrated.status == 0, "the migration in another process: \(migrated)")
        #expect(try Self.locks(in: dir)["migrationLock"] != "held", "migration.lock is released after the migration")
        try store.resume()

        await #expect(throws: StoreError.self) { _ = try await store.read { try $0.count("Post") } }
        #expect(await counts.waitForEnd() == "modelChanged", "the observation of the older model ends with modelChanged")
        let reopened = try Store.openRecorded(at: url)
        defer { reopened.close() }
        #expect(try await reopened.read { try $0.count("Post") } == before, "every post is there at the new model")
    }

    /// Suspending twice, resuming twice, and closing a suspended store are harmless; a suspended store's other
    /// handles in the process are suspended with it (they share its files).
    @Test func suspensionIsIdempotentAndSharedByTheProcesssHandles() async throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try #require(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        let url = URL(fileURLWithPath: dir.path("s.store"))
        let first = try Store.openRecorded(at: url)
        let second = try Store.openRecorded(at: url)
        defer { second.close() }
        try first.suspend()
        try first.suspend()
        #expect(second.isSuspended)
        let refused = await #expect(throws: StoreError.self) { try await second.read { try $0.count("Tag") } }
        #expect(refused?.code == .suspended)
        try second.resume()
        try second.resume()
        #expect(try await first.read { try $0.count("Tag") } == 0)
        try first.suspend()
        first.close()
        #expect(second.isSuspended)
        try second.resume()
        #expect(try await second.read { try $0.count("Tag") } == 0)
    }

    /// Another process killed (SIGKILL) in the middle of an import while this one is suspended — holding
    /// LMDB's write lock, perhaps mid-commit: after `resume()` this process reads every batch the importer
    /// committed, writes again (LMDB recovers the dead writer's lock), and its observation follows.
    @Test func aWriterKilledWhileTheStoreIsSuspendedLosesNothingAndBlocksNothing() async throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try #require(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        let store = try Store.openRecorded(at: URL(fileURLWithPath: dir.path("s.store")))
        defer { store.close() }
        let counts = ObservedValues<Int>()
        let task = counts.record(store.observe { try $0.count("Tag") })
        defer { task.cancel() }
        #expect(await counts.waitUntil { $0 == [0] })
        try store.suspend()

        let lines = (1...200_000).map { #"{"entity":"Tag","attributes":{"name":"t\#($0)"}}"# }
        try dir.write("big.jsonl", lines.joined(separator: "\n") + "\n")
        let dataFile = dir.path("s.store") + "/data.mdb"
        let initialSize = try FileManager.default.attributesOfItem(atPath: dataFile)[.size] as? Int ?? 0
        let running = try CLI.start(["import", "s.store", "big.jsonl", "--batch-size", "500"], in: dir)
        // Batches are committed once the data file grows well past its first size.
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(60)
        while clock.now < deadline,
              (try FileManager.default.attributesOfItem(atPath: dataFile)[.size] as? Int ?? 0) < initialSize + (1 << 20) {
            try await Task.sleep(for: .milliseconds(5))
        }
        running.signal(SIGKILL)
        let result = running.wait()
        #expect(result.status == 128 + SIGKILL, "\(result)")

        try store.resume()
        try await store.write { _ = try $0.insert("Tag", ["name": "after the kill"]) }
        let total = try await store.read { try $0.count("Tag") }
        #expect(total > 1 && total < 200_001, "\(total) tags after the importer was killed")
        #expect(await counts.waitUntil { $0.last == total }, "observed \(counts.all.suffix(3)) of \(total)")
        let verified = try dir.strata("verify", "s.store")
        #expect(verified.status == 0, "\(verified)")
    }

    /// A history feed goes on across suspensions — one that starts reading while the store is suspended, and
    /// one whose read a suspension interrupts right after a commit woke it: every transaction arrives, once.
    @Test func aHistoryFeedGoesOnAcrossASuspension() async throws {
        let dir = try TempDir()
        var configuration = StoreConfiguration()
        configuration.history = .enabled(.unlimited)
        let schema = try Schema("v1") { Entity("Tag") { Attribute("name", .string) } }
        let store = try Store.open(at: URL(fileURLWithPath: dir.path("s.store")), schema: schema, configuration: configuration)
        defer { store.close() }
        try await store.write { _ = try $0.insert("Tag", ["name": "before"]) }
        try store.suspend()
        let feed = ObservedValues<HistoryTransaction>()
        let task = feed.record(store.history(after: nil))
        defer { task.cancel() }
        try await Task.sleep(for: .milliseconds(50))  // lets the feed meet the suspended store (no event to wait for)
        #expect(feed.all.isEmpty && feed.end == nil, "while suspended: \(feed.all.count), \(String(describing: feed.end))")
        try store.resume()
        #expect(await feed.waitUntil { $0.count == 1 })
        for round in 1...20 {
            try await store.write { _ = try $0.insert("Tag", ["name": "round \(round)"]) }
            try store.suspend()
            try store.resume()
            #expect(await feed.waitUntil { $0.count == round + 1 }, "round \(round): \(feed.all.count) transactions, \(String(describing: feed.end))")
        }
        #expect(Set(feed.all.map(\.token.description)).count == 21)
    }
}
