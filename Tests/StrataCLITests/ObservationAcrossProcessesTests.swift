import Foundation
@_spi(Testing) import Strata
import StrataTestSupport
import Testing

/// Observations see commits made by another process: the `strata` tool importing into a store this
/// process observes — noticed by the platform's file notification, and by the portable poll (what platforms
/// without one use).
@Suite(.serialized) struct ObservationAcrossProcessesTests {
    /// Opens the store `s.store` in `dir` in this process and observes its tags: their count, and change sets.
    static func observeTags(in dir: TempDir, watching: FileWatching) throws -> (Store, ObservedValues<Int>, ObservedValues<ChangeSet>, [Task<Void, Never>]) {
        var configuration = StoreConfiguration()
        configuration.fileWatching = watching
        let store = try Store.openRecorded(at: URL(fileURLWithPath: dir.path("s.store")), configuration: configuration)
        let counts = ObservedValues<Int>()
        let sets = ObservedValues<ChangeSet>()
        let tasks = [counts.record(store.observe { try $0.count("Tag") }), sets.record(try store.changes(of: "Tag"))]
        return (store, counts, sets, tasks)
    }

    @Test(arguments: FileWatching.allCases) func commitsByAnotherProcessReachQueryAndChangeObservations(watching: FileWatching) async throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try dir.write("objects.jsonl", Fixtures.objects)
        try #require(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        try #require(try dir.strata("import", "s.store", "objects.jsonl").status == 0)

        let (store, counts, sets, tasks) = try Self.observeTags(in: dir, watching: watching)
        defer { tasks.forEach { $0.cancel() }; store.close() }
        #expect(await counts.waitUntil { $0 == [2] })

        try dir.write("more.jsonl", """
            {"entity":"Tag","id":22,"attributes":{"name":"observed"}}
            {"entity":"Tag","id":23,"attributes":{"name":"elsewhere"}}
            """ + "\n")
        let imported = try dir.strata("import", "s.store", "more.jsonl")
        try #require(imported.status == 0, "\(imported)")
        #expect(await counts.waitUntil { $0.last == 4 }, "counts: \(counts.all)")
        #expect(await sets.waitUntil { Set($0.flatMap(\.inserted)).count == 2 })
        #expect(Set(sets.all.flatMap(\.inserted).map(\.rawValue)) == [22, 23])
        #expect(sets.all.allSatisfy { $0.isComplete })

        // A commit by the other process that touches only Author wakes neither observation.
        let before = (counts.all.count, sets.all.count)
        try dir.write("author.jsonl", #"{"entity":"Author","id":50,"attributes":{"name":"Cy"}}"# + "\n")
        try #require(try dir.strata("import", "s.store", "author.jsonl").status == 0)
        try await Task.sleep(for: .milliseconds(300))
        #expect(counts.all.count == before.0 && sets.all.count == before.1)
    }

    /// An importing process killed mid-way (SIGKILL, several times): the observer's last value is the store's
    /// count, every inserted ID it was told of exists (a batch killed before its commit is never reported), and
    /// observing goes on.
    @Test(arguments: FileWatching.allCases) func aWriterKilledMidImportLeavesObserversOnTheStoresState(watching: FileWatching) async throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try #require(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        let (store, counts, sets, tasks) = try Self.observeTags(in: dir, watching: watching)
        defer { tasks.forEach { $0.cancel() }; store.close() }
        #expect(await counts.waitUntil { $0 == [0] })

        var next = 1
        for round in 0..<3 {
            let lines = (next..<(next + 200_000)).map { #"{"entity":"Tag","attributes":{"name":"t\#($0)"}}"# }
            next += 200_000
            try dir.write("big.jsonl", lines.joined(separator: "\n") + "\n")
            let before = try await store.read { try $0.count("Tag") }
            let running = try CLI.start(["import", "s.store", "big.jsonl", "--batch-size", "500"], in: dir)
            #expect(await counts.waitUntil { ($0.last ?? 0) > before }, "round \(round): no batch was observed")
            running.signal(SIGKILL)
            let result = running.wait()
            #expect(result.status == 128 + SIGKILL, "round \(round): \(result)")
            // A writer killed after its commit's meta page was written but before LMDB published the commit
            // to readers leaves that commit durable yet invisible until the next write transaction (LMDB's
            // clean-up after a dead lock owner publishes it). An empty write makes the store's durable state
            // the one readers see, as any next write in the app would.
            try await store.write { _ in }
            let total = try await store.read { try $0.count("Tag") }
            #expect(total > before && total < before + 200_000, "round \(round): killed mid-import, \(total) tags")
            #expect(await counts.waitUntil { $0.last == total },
                    "round \(round): last value \(String(describing: counts.all.last)) of \(total); the observation \(counts.end.map { "ended: " + $0 } ?? "goes on")")
        }
        // A write after the kills. An importer killed inside its commit — its meta page written, the lock file's
        // transaction ID not yet — leaves a batch that is durable but not yet visible to readers; LMDB's next
        // writer, taking over the dead owner's lock, publishes it and writes on top of it. So what the store
        // holds after this write is read in the write itself, not added to a count read before it.
        let total = try await store.write { context in
            _ = try context.insert("Tag", ["name": "after the kills"])
            return try context.count("Tag")
        }
        #expect(await counts.waitUntil { $0.last == total },
                "last values \(counts.all.suffix(3)) of \(total); the observation \(counts.end.map { "ended: " + $0 } ?? "goes on")")
        // Every tag the store holds was reported inserted by a complete change set, and nothing else.
        #expect(await sets.waitUntil { Set($0.flatMap(\.inserted)).count >= total },
                "change sets listed \(Set(sets.all.flatMap(\.inserted)).count) inserted tags, the store holds \(total)")
        let reported = Set(sets.all.flatMap(\.inserted))
        #expect(sets.all.allSatisfy { $0.isComplete })
        #expect(reported.count == total, "change sets listed \(reported.count) inserted tags, the store holds \(total)")
        let missing = try await store.read { context in try reported.filter { try context.object($0, of: "Tag") == nil } }
        #expect(missing.isEmpty, "reported as inserted but not in the store: \(missing.prefix(5))")
    }
}
