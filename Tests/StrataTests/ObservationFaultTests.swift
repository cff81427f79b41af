import Dispatch
import Foundation
@_spi(Testing) @testable import Strata
import StrataTestSupport
import Testing

/// Observation tests aimed at faults the broader ones in `ObservationTests` let through: each was written
/// against a one-line change of the product code that left the rest of the suite green (the change is named
/// on each test). Commits that reach an observer through the change log — as another process's do — are made
/// in process, deterministically: by committing while the hub's watcher is paused (what `suspend()` does), or
/// by writing a change-log entry in a raw transaction the hub is not told of. Nothing waits on time: every
/// wait is on a condition.
@Suite struct ObservationFaultTests {
    static func store(_ watching: FileWatching = .polling) throws -> Store {
        try Store.temporary(schema: try ObservationTests.schema(), configuration: ObservationTests.configuration(watching))
    }

    /// Waits (up to 60 s) until the store's hub has an observation registered: a change-set observation
    /// registers when iteration starts, and reports nothing from before.
    static func waitUntilObserved(_ store: Store) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if store.environment.observations.isObserved { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        // The last look: this task itself may have waited past the deadline for a thread.
        return store.environment.observations.isObserved
    }

    /// A change-set observation of posts whose consumer waits at `gate` after each set it takes (so that commits
    /// meanwhile merge into one pending set), registered before this returns.
    static func busyConsumer(of store: Store, sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> (gate: Gate, sets: ObservedValues<ChangeSet>, task: Task<Void, Never>) {
        let gate = Gate()
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post"), after: { _ in await gate.wait() })
        #expect(await waitUntilObserved(store), sourceLocation: sourceLocation)
        return (gate, sets, task)
    }

    /// A commit the hub is not told of, as another process's: a raw transaction that writes `changes` as its
    /// change-log entry (and nothing else).
    static func foreignCommit(_ store: Store, _ changes: [String: EntityChanges]) throws {
        var entities: [UInt32: EntityChanges] = [:]
        for (name, e) in changes { entities[try store.model.entity(name).tag] = e }
        try store.environment.write { txn in
            try ChangeLog.append(CommitChanges(transactionID: txn.id, entities: entities), in: txn)
        }
    }

    /// A commit the hub is not told of whose change-log entry is damaged (its checksum does not match): the
    /// watcher can only report unknown changes.
    static func foreignCommitWithDamagedEntry(_ store: Store) throws {
        try store.environment.write { txn in
            let dbi = try #require(try txn.openDatabase(ChangeLog.databaseName, flags: 0, create: true))
            let damaged: [UInt8] = [0xde, 0xad, 0xbe, 0xef, 1, 0]
            try ChangeLog.key(txn.id).withUnsafeBytes { k in
                try damaged.withUnsafeBytes { v in _ = try txn.put(dbi, key: k, value: v) }
            }
        }
    }

    // MARK: The watcher

    /// Bugs: `ObservationHub.catchUp` delivering `commits.suffix(1)`; `ChangeLog.entries` seeking `after + 2`;
    /// the watcher marking commits seen before reading them.
    @Test(arguments: FileWatching.allCases) func theWatcherDeliversEveryCommitItFindsInTheChangeLog(watching: FileWatching) async throws {
        let store = try Self.store(watching)
        defer { store.close() }
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post"))
        defer { task.cancel() }
        #expect(await Self.waitUntilObserved(store))
        // While the watcher is paused (as when the store is suspended), commits are not dispatched as they
        // commit: the watcher's first look after it resumes finds all three in the change log.
        let hub = store.environment.observations
        hub.pauseWatching()
        var ids: [ObjectID] = []
        for n in 0..<3 { ids.append(try await store.write { try $0.insert("Post", ["title": .string("p\(n)")]).id }) }
        hub.resumeWatching(environment: store.environment)
        // Delivered in order: once the last is in, so is every other.
        #expect(await sets.waitUntil { $0.flatMap(\.inserted).contains(ids[2]) }, "\(sets.all)")
        #expect(Set(sets.all.flatMap(\.inserted)) == Set(ids), "\(sets.all)")
        #expect(sets.all.allSatisfy { $0.isComplete })
    }

    /// Bug: `ObservationHub.committed` not recording the commit as local, so the watcher dispatches it again
    /// when it reads the change log. (The duplicate shows only when the consumer took the first delivery before
    /// the watcher read the log — otherwise the two merge into one pending change set — so this test, like
    /// `ObservationTests.changesMadeWhileTheConsumerIsBusyAreMerged`, catches that bug often, not always; it
    /// never fails without it.)
    @Test func aCommitOfThisProcessIsDeliveredOnceNotAgainByTheWatcher() async throws {
        let store = try Self.store()
        defer { store.close() }
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post"))
        defer { task.cancel() }
        #expect(await Self.waitUntilObserved(store))
        let local = try await store.write { try $0.insert("Post", ["title": "local"]) }
        #expect(await sets.waitUntil { $0.flatMap(\.inserted).contains(local.id) })
        // A later commit only the watcher can find: once it is delivered, the watcher has read past the local one.
        let marker: UInt64 = 1_000_000
        try Self.foreignCommit(store, ["Post": EntityChanges(inserted: [marker])])
        #expect(await sets.waitUntil { $0.flatMap(\.inserted).contains(ObjectID(rawValue: marker)) }, "\(sets.all)")
        #expect(sets.all.flatMap(\.inserted).filter { $0 == local.id }.count == 1, "delivered twice: \(sets.all)")
    }

    // MARK: Unknown changes

    /// Bug: `ChangeSubscriber.receive` ignoring `commit.isUnknown` (not clearing `isComplete`).
    @Test func aChangeSetObserverIsToldToReloadWhenTheChangesAreUnknown() async throws {
        let store = try Self.store()
        defer { store.close() }
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post"))
        defer { task.cancel() }
        #expect(await Self.waitUntilObserved(store))
        try Self.foreignCommitWithDamagedEntry(store)
        #expect(await sets.waitUntil { $0.contains { !$0.isComplete } }, "\(sets.all)")
        #expect(sets.all.first == ChangeSet(entity: "Post", isComplete: false))
    }

    /// Bug: `QuerySubscriber.receive` ignoring `commit.isUnknown` (a commit listing no entity then wakes nobody).
    @Test func aQueryIsFetchedAgainWhenTheChangesAreUnknown() async throws {
        let store = try Self.store()
        defer { store.close() }
        let fetches = Counter()
        let values = ObservedValues<Int>()
        let task = values.record(store.observe { context in
            _ = try context.count("Audit")
            return fetches.increment()
        })
        defer { task.cancel() }
        #expect(await values.waitUntil { $0 == [1] })
        try Self.foreignCommitWithDamagedEntry(store)
        #expect(await values.waitUntil { $0 == [1, 2] }, "\(values.all)")
    }

    /// Bug: `PendingChanges.merge` ignoring an entity's `isComplete` (a transaction of more than 10,000 objects):
    /// the merged set is then empty and nothing is delivered.
    @Test func anIncompleteEntityChangeReachesTheObserverAsReload() async throws {
        let store = try Self.store()
        defer { store.close() }
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post"))
        defer { task.cancel() }
        #expect(await Self.waitUntilObserved(store))
        try Self.foreignCommit(store, ["Post": EntityChanges(properties: .all, isComplete: false)])
        #expect(await sets.waitUntil { !$0.isEmpty }, "\(sets.all)")
        #expect(sets.all.first == ChangeSet(entity: "Post", isComplete: false))
    }

    /// Bug: `ChangeLog.entries` reporting the log as continuous however far behind the observer is: the
    /// entries pruned meanwhile are then silently missing, with no reload signal.
    @Test func anObserverFurtherBehindThanTheLogHoldsIsToldToReload() async throws {
        // Over a thousand commits: on a memory file system where there is one (each commit syncs).
        let memory = FileManager.default.isWritableFile(atPath: "/dev/shm")
            ? URL(fileURLWithPath: "/dev/shm/strata-observe-gap-\(UUID().uuidString)") : nil
        defer { if let memory { try? FileManager.default.removeItem(at: memory) } }
        let store = try memory.map { try Store.open(at: $0, schema: try ObservationTests.schema(), configuration: ObservationTests.configuration(.polling)) }
            ?? Self.store()
        defer { store.close() }
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post"))
        defer { task.cancel() }
        #expect(await Self.waitUntilObserved(store))
        let hub = store.environment.observations
        hub.pauseWatching()
        let commits = Int(ChangeLog.retainedCommits) + 8
        // Commits that touch no entity the observer watches (raw ones: quicker than as many writes of objects).
        for _ in 0..<commits { try Self.foreignCommit(store, [:]) }
        hub.resumeWatching(environment: store.environment)
        #expect(await sets.waitUntil { $0.contains { !$0.isComplete } }, "\(sets.all)")
    }

    // MARK: Queries

    /// Bug: `QuerySubscriber.receive` waking only when every entity a commit touched is one the query read
    /// (`allSatisfy` for `contains`).
    @Test func aCommitTouchingAnEntityTheQueryReadAndAnotherWakesIt() async throws {
        let store = try Self.store()
        defer { store.close() }
        let values = ObservedValues<Int>()
        let task = values.record(store.observe { try $0.count("Post") })
        defer { task.cancel() }
        #expect(await values.waitUntil { $0 == [0] })
        try await store.write { context in
            let author = try context.insert("Author", ["name": "a"])
            let post = try context.insert("Post", ["title": "p"])
            try context.link(post, "author", to: author)
        }
        #expect(await values.waitUntil { $0.last == 1 }, "\(values.all)")
        try await store.write { context in
            _ = try context.insert("Post", ["title": "q"])
            _ = try context.insert("Audit", ["note": "n"])
        }
        #expect(await values.waitUntil { $0.last == 2 }, "\(values.all)")
    }

    /// Bug: the query subscriber keeping its last region while it fetches (not cleared before the fetch): a
    /// commit during a fetch, to an entity that fetch reads for the first time, is then missed.
    @Test func aCommitDuringAFetchToAnEntityItReadsForTheFirstTimeIsNotMissed() async throws {
        let store = try Self.store()
        defer { store.close() }
        let triggered = Counter()
        let values = ObservedValues<[Int]>()
        let task = values.record(store.observe { context -> [Int] in
            let posts = try context.count("Post")
            guard posts > 0 else { return [posts] }
            if triggered.increment() == 1 {
                // Another thread commits to Audit while this fetch runs, before it reads Audit: its snapshot
                // does not see that commit, so the observation must fetch again.
                let done = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    _ = try? store.write { try $0.insert("Audit", ["note": "during the fetch"]) }
                    done.signal()
                }
                _ = done.wait(timeout: .now() + 30)
            }
            return [posts, try context.count("Audit")]
        })
        defer { task.cancel() }
        #expect(await values.waitUntil { $0 == [[0]] })
        try await store.write { _ = try $0.insert("Post", ["title": "p"]) }
        #expect(await values.waitUntil { $0.last == [1, 1] }, "\(values.all)")
    }

    // MARK: Change sets merged across commits

    /// Bug: `PendingChanges.merge` not removing a deleted object from `updated`.
    @Test func anObjectUpdatedThenDeletedWhileTheConsumerIsBusyIsOnlyDeleted() async throws {
        let store = try Self.store()
        defer { store.close() }
        let (gate, sets, task) = try await Self.busyConsumer(of: store)
        defer { task.cancel() }
        let (post, other) = try await store.write { context in
            (try context.insert("Post", ["title": "p"]), try context.insert("Post", ["title": "o"]))
        }
        #expect(await sets.waitUntil { $0.count == 1 })
        // The consumer waits at the gate (it has the first set, or will have it before the gate opens).
        var changed = post
        changed["views"] = .int64(1)
        try await store.write { [changed] in try $0.update(changed) }
        try await store.write { try $0.delete(post) }
        var touched = other
        touched["views"] = .int64(2)
        try await store.write { [touched] in try $0.update(touched) }
        await gate.open()
        #expect(await sets.waitUntil { $0.count == 2 }, "\(sets.all)")
        #expect(sets.all.last == ChangeSet(entity: "Post", updated: [other.id], deleted: [post.id]), "\(sets.all)")
    }

    /// Bugs: `PendingChanges.merge` listing an object inserted and then updated as updated too; a pending
    /// change set replaced by each commit instead of merged (a burst reports only its last commit).
    @Test func changesOfSeveralCommitsWhileTheConsumerIsBusyAreMergedNotReplaced() async throws {
        let store = try Self.store()
        defer { store.close() }
        let (gate, sets, task) = try await Self.busyConsumer(of: store)
        defer { task.cancel() }
        let first = try await store.write { try $0.insert("Post", ["title": "first"]) }
        #expect(await sets.waitUntil { $0.count == 1 })
        var changed = first
        changed["views"] = .int64(1)
        try await store.write { [changed] in try $0.update(changed) }
        var added = try await store.write { try $0.insert("Post", ["title": "added"]) }
        added["views"] = .int64(3)
        try await store.write { [added] in try $0.update(added) }
        await gate.open()
        #expect(await sets.waitUntil { $0.count == 2 }, "\(sets.all)")
        #expect(sets.all.last == ChangeSet(entity: "Post", inserted: [added.id], updated: [first.id]), "\(sets.all)")
    }

    /// Bug: `PendingChanges.merge` listing every updated object for an observation of some properties (its
    /// `properties` filter dropped): within one commit, an object whose other properties changed is not listed.
    @Test func anObservationOfSomePropertiesListsOnlyObjectsWhoseObservedPropertiesChanged() async throws {
        let store = try Self.store()
        defer { store.close() }
        let (titled, b) = try await store.write { context in
            (try context.insert("Post", ["title": "a"]), try context.insert("Post", ["title": "b"]))
        }
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try store.changes(of: "Post", properties: ["title"]))
        defer { task.cancel() }
        #expect(await Self.waitUntilObserved(store))
        var retitled = titled
        retitled["title"] = "A"
        var viewed = b
        viewed["views"] = .int64(7)
        try await store.write { [retitled, viewed] context in
            try context.update(retitled)
            try context.update(viewed)
        }
        #expect(await sets.waitUntil { $0.count == 1 })
        #expect(sets.all.first == ChangeSet(entity: "Post", updated: [titled.id]), "\(sets.all)")
    }

    // MARK: Changes that cancel out

    /// Bug: `ChangeObservation.Iterator.next` returning a merged change set that is empty (the
    /// `if !changes.isEmpty` check dropped): a post inserted and deleted while the consumer was busy would reach
    /// it as an empty change set. Deterministic: both commits are merged before the handle closes, and a closed
    /// handle's observation still hands over what was pending before it ends.
    @Test func changesThatCancelOutWhileTheConsumerIsBusyAreNotDelivered() async throws {
        let store = try Self.store()
        let (gate, sets, task) = try await Self.busyConsumer(of: store)
        defer { task.cancel() }
        let first = try await store.write { try $0.insert("Post", ["title": "first"]) }
        #expect(await sets.waitUntil { $0.count == 1 })
        // While the consumer waits at the gate: a post comes and goes.
        let gone = try await store.write { try $0.insert("Post", ["title": "gone"]) }
        try await store.write { try $0.delete(gone) }
        store.close()
        await gate.open()
        #expect(await sets.waitForEnd() == "finished")
        #expect(sets.all == [ChangeSet(entity: "Post", inserted: [first.id])], "\(sets.all)")
    }

    /// Bug: `Mailbox.next` waiting for a payload when the observation already ended (the `s.ended` check dropped):
    /// a handle closed while the consumer was busy would leave it waiting forever instead of ending its loop.
    @Test func aHandleClosedWhileTheConsumerIsBusyEndsTheObservation() async throws {
        let store = try Self.store()
        let (gate, sets, task) = try await Self.busyConsumer(of: store)
        defer { task.cancel() }
        _ = try await store.write { try $0.insert("Post", ["title": "first"]) }
        #expect(await sets.waitUntil { $0.count == 1 })
        store.close()
        await gate.open()
        #expect(await sets.waitForEnd() == "finished")
        #expect(sets.all.count == 1, "\(sets.all)")
    }

    // MARK: A store replaced by an older copy

    /// Bug: `ObservationHub.catchUp` not announcing unknown changes when the store's transaction IDs went back
    /// (the file was replaced by an older copy, a restored backup, while the app was suspended): observers would
    /// keep showing objects the store no longer has.
    @Test func aStoreReplacedByAnOlderCopyWhileSuspendedTellsObserversToReload() async throws {
        let dir = try TemporaryDirectory("observe-replaced")
        let store = try Store.open(at: dir.store, schema: try ObservationTests.schema(), configuration: ObservationTests.configuration(.polling))
        defer { store.close() }
        _ = try await store.write { try $0.insert("Post", ["title": "kept"]) }
        let backup = dir.path("backup")
        try store.backup(to: backup, compact: false)
        for n in 0..<5 { _ = try await store.write { try $0.insert("Post", ["title": .string("later \(n)")]) } }
        let sets = ObservedValues<ChangeSet>()
        let setTask = sets.record(try store.changes(of: "Post"))
        defer { setTask.cancel() }
        let counts = ObservedValues<Int>()
        let countTask = counts.record(store.observe { try $0.count("Post") })
        defer { countTask.cancel() }
        #expect(await counts.waitUntil { $0 == [6] })
        #expect(await Self.waitUntilObserved(store))
        try store.suspend()
        // The older copy replaces the data file while the store's files are closed.
        let data = dir.store.appendingPathComponent("data.mdb")
        try FileManager.default.removeItem(at: data)
        try FileManager.default.copyItem(at: backup.appendingPathComponent("data.mdb"), to: data)
        try store.resume()
        #expect(await counts.waitUntil { $0.last == 1 }, "\(counts.all)")
        #expect(await sets.waitUntil { $0.contains { !$0.isComplete } }, "\(sets.all)")
    }
}

