import Foundation
@_spi(Testing) import Strata
import StrataTestSupport
import Testing

/// Observing queries and change sets: first values, coalescing, precise wake-ups, change sets merged across
/// commits, concurrent writers, cancellation, closing, and migrations by another handle. (Other processes'
/// commits: `StrataCLITests.ObservationAcrossProcessesTests`.) Every test runs with both ways of noticing other
/// commits: the platform's file notification and the portable poll that Apple platforms share with any other.
@Suite struct ObservationTests {
    static func configuration(_ watching: FileWatching) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.fileWatching = watching
        return configuration
    }

    static func schema(version: String = "v1", extra: Bool = false) throws -> Schema {
        try Schema(version) {
            Entity("Post") {
                Attribute("title", .string)
                Attribute("views", .int64).defaultValue(.int64(0))
                if extra { Attribute("subtitle", .string).optional() }
                Relationship("author", to: "Author", inverse: "posts")
            }
            Entity("Author") {
                Attribute("name", .string)
                Relationship("posts", to: "Post", inverse: "author", toMany: true)
            }
            Entity("Audit") {
                Attribute("note", .string)
            }
        }
    }

    // MARK: Queries

    @Test(arguments: FileWatching.allCases) func aQueryObservationDeliversItsValueThenAValueAfterEachCommit(watching: FileWatching) async throws {
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(watching))
        defer { store.close() }
        let values = ObservedValues<Int>()
        let task = values.record(store.observe { try $0.count("Post") })
        defer { task.cancel() }
        #expect(await values.waitUntil { $0 == [0] })
        for n in 1...3 {
            try await store.write { _ = try $0.insert("Post", ["title": "p\(n)"]) }
            #expect(await values.waitUntil { $0.last == n }, "after commit \(n): \(values.all)")
        }
        #expect(values.all == [0, 1, 2, 3])
    }

    @Test(arguments: FileWatching.allCases) func aBurstOfCommitsCoalescesAndTheLastValueIsTheStoresFinalState(watching: FileWatching) async throws {
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(watching))
        defer { store.close() }
        let gate = Gate()
        let values = ObservedValues<Int>()
        // The consumer takes a value, then waits at the gate: commits meanwhile pile up.
        let task = values.record(store.observe { try $0.count("Post") }, after: { _ in await gate.wait() })
        defer { task.cancel() }
        #expect(await values.waitUntil { $0 == [0] })
        for n in 1...200 {
            try await store.write { _ = try $0.insert("Post", ["title": "p\(n)"]) }
        }
        await gate.open()
        #expect(await values.waitUntil { $0.last == 200 })
        try await Task.sleep(for: .milliseconds(300))
        let seen = values.all
        #expect(seen.count <= 3, "200 commits while the consumer was busy coalesce: \(seen)")
        #expect(seen.last == 200, "no value older than the last commit arrives after it: \(seen)")
    }

    @Test(arguments: FileWatching.allCases) func commitsToEntitiesAQueryDidNotReadWakeNobody(watching: FileWatching) async throws {
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(watching))
        defer { store.close() }
        let fetches = Counter()
        let values = ObservedValues<Int>()
        let task = values.record(store.observe { context in
            _ = fetches.increment()
            return try context.count("Audit")
        })
        defer { task.cancel() }
        #expect(await values.waitUntil { $0 == [0] })
        for n in 0..<20 {
            try await store.write { context in
                let author = try context.insert("Author", ["name": "a\(n)"])
                let post = try context.insert("Post", ["title": "p\(n)"])
                try context.link(post, "author", to: author)
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(fetches.increment() == 2, "commits to Post and Author re-ran a query that reads only Audit")
        try await store.write { _ = try $0.insert("Audit", ["note": "n"]) }
        #expect(await values.waitUntil { $0 == [0, 1] })
        #expect(fetches.increment() == 4, "one more fetch (and this count)")
    }

    @Test(arguments: FileWatching.allCases) func typedAndDynamicQueriesSeeTheSameCommits(watching: FileWatching) async throws {
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(watching))
        defer { store.close() }
        let titles = ObservedValues<[String]>()
        let task = titles.record(store.observe { context in
            try context.objects("Post").sorted(by: "title").fetch().map { $0["title"].stringValue ?? "" }
        })
        defer { task.cancel() }
        #expect(await titles.waitUntil { $0 == [[]] })
        try await store.write { context in
            _ = try context.insert("Post", ["title": "b"])
            _ = try context.insert("Post", ["title": "a"])
        }
        #expect(await titles.waitUntil { $0.last == ["a", "b"] })
        let post = try #require(try await store.read { try $0.objects("Post").where("title", equals: "b").first() })
        try await store.write { context in
            var changed = post
            changed["title"] = "c"
            try context.update(changed)
        }
        #expect(await titles.waitUntil { $0.last == ["a", "c"] })
    }

    // MARK: Change sets

    @Test(arguments: FileWatching.allCases) func changeSetsListInsertedUpdatedAndDeletedObjects(watching: FileWatching) async throws {
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(watching))
        defer { store.close() }
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post"))
        defer { task.cancel() }
        #expect(await ObservationFaultTests.waitUntilObserved(store))  // it registers when iteration starts
        let (a, b) = try await store.write { context in
            (try context.insert("Post", ["title": "a"]), try context.insert("Post", ["title": "b"]))
        }
        #expect(await sets.waitUntil { $0.count == 1 })
        #expect(sets.all.last == ChangeSet(entity: "Post", inserted: [a.id, b.id], updated: [], deleted: [], isComplete: true))
        try await store.write { context in
            var changed = a
            changed["views"] = .int64(5)
            try context.update(changed)
            try context.delete(b)
        }
        #expect(await sets.waitUntil { $0.count == 2 })
        #expect(sets.all.last == ChangeSet(entity: "Post", inserted: [], updated: [a.id], deleted: [b.id], isComplete: true))
        try await store.write { _ = try $0.insert("Audit", ["note": "elsewhere"]) }
        let author = try await store.write { context in
            let author = try context.insert("Author", ["name": "ann"])
            try context.link(a, "author", to: author)
            return author
        }
        #expect(await sets.waitUntil { $0.count == 3 })
        #expect(sets.all.last?.updated == [a.id], "linking a post to an author updates the post")
        #expect(sets.all.count == 3, "the Audit commit was not reported")
        _ = author
    }

    @Test(arguments: FileWatching.allCases) func changesMadeWhileTheConsumerIsBusyAreMerged(watching: FileWatching) async throws {
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(watching))
        defer { store.close() }
        let gate = Gate()
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post"), after: { _ in await gate.wait() })
        defer { task.cancel() }
        #expect(await ObservationFaultTests.waitUntilObserved(store))  // it registers when iteration starts
        let kept = try await store.write { try $0.insert("Post", ["title": "kept"]) }
        #expect(await sets.waitUntil { $0.count == 1 })
        // While the consumer waits at the gate: a post comes and goes, the kept one changes twice.
        let gone = try await store.write { try $0.insert("Post", ["title": "gone"]) }
        try await store.write { try $0.delete(gone) }
        for v in 1...2 {
            try await store.write { context in
                var changed = kept
                changed["views"] = .int64(Int64(v))
                try context.update(changed)
            }
        }
        await gate.open()
        #expect(await sets.waitUntil { $0.count == 2 })
        #expect(sets.all.last == ChangeSet(entity: "Post", inserted: [], updated: [kept.id], deleted: [], isComplete: true))
    }

    @Test(arguments: FileWatching.allCases) func anObservationOfSomePropertiesIgnoresUpdatesOfOthers(watching: FileWatching) async throws {
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(watching))
        defer { store.close() }
        let post = try await store.write { try $0.insert("Post", ["title": "t"]) }
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post", properties: ["title"]))
        defer { task.cancel() }
        #expect(await ObservationFaultTests.waitUntilObserved(store))  // it registers when iteration starts
        var changed = post
        changed["views"] = .int64(9)
        try await store.write { [changed] in try $0.update(changed) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(sets.all.isEmpty, "an update of views reached an observation of title: \(sets.all)")
        changed["title"] = "new"
        try await store.write { [changed] in try $0.update(changed) }
        #expect(await sets.waitUntil { $0.count == 1 })
        #expect(sets.all.first?.updated == [post.id])
        #expect(throws: StoreError.self) { _ = try store.changes(of: "Post", properties: ["nope"]) }
        #expect(throws: StoreError.self) { _ = try store.changes(of: "Nope") }
    }

    // MARK: Concurrency, ending

    @Test(arguments: FileWatching.allCases) func noChangeIsMissedUnderConcurrentWriters(watching: FileWatching) async throws {
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(watching))
        defer { store.close() }
        let counts = ObservedValues<Int>()
        let countTask = counts.record(store.observe { try $0.count("Post") })
        let sets = ObservedValues<ChangeSet>()
        let setTask = sets.record(try store.changes(of: "Post"))
        defer { countTask.cancel(); setTask.cancel() }
        #expect(await counts.waitUntil { $0 == [0] })
        let writers = 4, commits = 100
        DispatchQueue.concurrentPerform(iterations: writers) { w in
            for n in 0..<commits {
                try? store.write { _ = try $0.insert("Post", ["title": "w\(w)-\(n)"]) }
            }
        }
        let total = try await store.read { try $0.count("Post") }
        #expect(total == writers * commits)
        #expect(await counts.waitUntil { $0.last == total }, "last value \(String(describing: counts.all.last)) of \(total)")
        #expect(await sets.waitUntil { Set($0.flatMap(\.inserted)).count == total })
        #expect(sets.all.allSatisfy { $0.isComplete && $0.updated.isEmpty && $0.deleted.isEmpty })
    }

    @Test(arguments: FileWatching.allCases) func cancellingTheTaskOrClosingTheStoreEndsTheObservation(watching: FileWatching) async throws {
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(watching))
        let values = ObservedValues<Int>()
        let task = values.record(store.observe { try $0.count("Post") })
        #expect(await values.waitUntil { $0 == [0] })
        task.cancel()
        #expect(await values.waitForEnd() == "finished")
        try await store.write { _ = try $0.insert("Post", ["title": "after"]) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(values.all == [0])

        let other = ObservedValues<Int>()
        let otherTask = other.record(store.observe { try $0.count("Post") })
        defer { otherTask.cancel() }
        #expect(await other.waitUntil { $0 == [1] })
        store.close()
        #expect(await other.waitForEnd() == "finished", "closing the handle ends its observations")
    }

    @Test(arguments: FileWatching.allCases) func aMigrationByAnotherHandleEndsTheObservationWithModelChanged(watching: FileWatching) async throws {
        let dir = try TemporaryDirectory("observe-migrate-\(watching)")
        let v1 = try Self.schema(version: "v1"), v2 = try Self.schema(version: "v2", extra: true)
        let store = try Store.open(at: dir.store, schema: v1, configuration: Self.configuration(watching))
        defer { store.close() }
        try await store.write { _ = try $0.insert("Post", ["title": "p"]) }
        let values = ObservedValues<Int>()
        let task = values.record(store.observe { try $0.count("Post") })
        defer { task.cancel() }
        #expect(await values.waitUntil { $0 == [1] })
        let migrated = try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2]),
                                      configuration: Self.configuration(watching))
        defer { migrated.close() }
        #expect(await values.waitForEnd() == "modelChanged")
        #expect(try await migrated.read { try $0.count("Post") } == 1)
    }
}

// MARK: Helpers

/// Holds a consumer until the test opens it.
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for w in waiters { w.resume() }
        waiters = []
    }
}
