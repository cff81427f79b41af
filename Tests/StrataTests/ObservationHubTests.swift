import Foundation
@_spi(Testing) @testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// The observation hub's bookkeeping, driven step by step: a hub with no watcher thread, whose
/// ``ObservationHub/catchUp(environment:)`` the test calls itself, and a subscriber that records every
/// delivery as it comes (no merging, unlike an observation's change sets). So each test decides exactly
/// when the hub looks at the change log, and a commit delivered twice shows every time, not only when a
/// consumer happened to take the first delivery before the watcher read the log.
@Suite struct ObservationHubTests {
    /// Records the transaction IDs it receives, in order.
    final class Recorder: CommitSubscriber, @unchecked Sendable {
        let generation: UInt64
        private let received = Mutex<[UInt64]>([])
        private let ended = Mutex(false)
        init(generation: UInt64) { self.generation = generation }
        func receive(_ commit: CommitChanges) { received.withLock { $0.append(commit.transactionID) } }
        func end(_ error: StoreError?) { ended.withLock { $0 = true } }
        var transactions: [UInt64] { received.withLock { $0 } }
        var hasEnded: Bool { ended.withLock { $0 } }
    }

    /// A store, a hub of its environment that runs no watcher thread, and a recorder registered with it.
    struct Harness {
        let store: Store
        let hub = ObservationHub(runsWatcherThread: false)
        let recorder: Recorder

        init() throws {
            store = try Store.temporary(schema: try ObservationTests.schema())
            recorder = Recorder(generation: store.model.generation)
            _ = hub.register(recorder, store: ObjectIdentifier(store), meta: store.model.meta, environment: store.environment)
        }

        /// A commit with a change-log entry inserting `id` into Post: its transaction ID.
        func commit(inserting id: UInt64) throws -> UInt64 {
            let tag = try store.model.entity("Post").tag
            return try store.environment.write { txn in
                try ChangeLog.append(CommitChanges(transactionID: txn.id, entities: [tag: EntityChanges(inserted: [id])]), in: txn)
                return txn.id
            }
        }

        /// A commit of this process: committed, then told to the hub as ``Store/write(author:_:)`` does.
        func localCommit(inserting id: UInt64) throws -> UInt64 {
            let txid = try commit(inserting: id)
            let tag = try store.model.entity("Post").tag
            hub.committed(CommitChanges(transactionID: txid, entities: [tag: EntityChanges(inserted: [id])]))
            return txid
        }

        /// A commit the hub is not told of, as another process's.
        func foreignCommit(inserting id: UInt64) throws -> UInt64 { try commit(inserting: id) }

        func catchUp() -> ObservationHub.CatchUpResult { hub.catchUp(environment: store.environment) }
    }

    /// Bug: `ObservationHub.catchUp` not leaving out the commits of this process it already dispatched
    /// (`!s.localCommits.contains(…)` dropped): the watcher delivers them again when it reads the change log.
    @Test func aCommitOfThisProcessIsDeliveredOnceWhenTheWatcherReadsPastIt() throws {
        let h = try Harness()
        defer { h.store.close() }
        let local = try h.localCommit(inserting: 1)
        #expect(h.recorder.transactions == [local])
        let foreign = try h.foreignCommit(inserting: 2)
        #expect(h.catchUp() == .upToDate)
        #expect(h.recorder.transactions == [local, foreign], "every commit once, in order")
        // Local and foreign commits interleaved, the hub looking only at the end.
        let more = [try h.foreignCommit(inserting: 3), try h.localCommit(inserting: 4), try h.foreignCommit(inserting: 5),
                    try h.localCommit(inserting: 6)]
        #expect(h.catchUp() == .upToDate)
        #expect(h.recorder.transactions == [local, foreign, more[1], more[3], more[0], more[2]],
                "the local ones at their commit, the foreign ones when the hub looked: \(h.recorder.transactions)")
        #expect(Set(h.recorder.transactions).count == h.recorder.transactions.count)
    }

    /// Bug: `ObservationHub.catchUp` not forgetting the local commits it has read past
    /// (`s.localCommits = s.localCommits.filter { $0 > read.through }` dropped): the set grows by one for
    /// every commit of this process, for as long as the store is observed.
    @Test func theHubForgetsTheLocalCommitsItHasReadPast() throws {
        let h = try Harness()
        defer { h.store.close() }
        for round in 0..<200 {
            _ = try h.localCommit(inserting: UInt64(2 * round))
            _ = try h.foreignCommit(inserting: UInt64(2 * round + 1))
            #expect(h.catchUp() == .upToDate)
        }
        #expect(h.recorder.transactions.count == 400)
        #expect(h.hub.rememberedLocalCommits == 0, "\(h.hub.rememberedLocalCommits) local commits still remembered")
        // Only local commits since the last look: the hub remembers them until it looks, then none.
        for n in 0..<5 { _ = try h.localCommit(inserting: UInt64(1000 + n)) }
        #expect(h.hub.rememberedLocalCommits == 5)
        #expect(h.catchUp() == .upToDate)
        #expect(h.hub.rememberedLocalCommits == 0)
        #expect(h.recorder.transactions.count == 405, "the hub's look found nothing new to deliver")
    }

    /// Bug: `ObservationHub.catchUp` skipping the read when the commits since its last look are *some* of this
    /// process's (the `allLocal` check reduced to `localCommits.contains(last)`): the foreign commit before
    /// it is never delivered.
    @Test func aForeignCommitBeforeALocalOneIsDeliveredWhenTheHubLooks() throws {
        let h = try Harness()
        defer { h.store.close() }
        let foreign = try h.foreignCommit(inserting: 1)
        let local = try h.localCommit(inserting: 2)
        #expect(h.catchUp() == .upToDate)
        #expect(h.recorder.transactions == [local, foreign])
    }

    /// Bug: `ObservationHub.catchUp` delivering to subscribers of a handle whose model the store no longer has
    /// (the generation comparison dropped): after a migration the observation ends instead.
    @Test func aMigrationEndsTheObservationInsteadOfDeliveringToTheOldModel() throws {
        let dir = try TemporaryDirectory("hub-migration")
        let v1 = try ObservationTests.schema()
        let store = try Store.open(at: dir.store, schema: v1)
        let hub = ObservationHub(runsWatcherThread: false)
        let recorder = Recorder(generation: store.model.generation)
        _ = hub.register(recorder, store: ObjectIdentifier(store), meta: store.model.meta, environment: store.environment)
        let v2 = try ObservationTests.schema(version: "v2", extra: true)
        try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2])).close()
        #expect(hub.catchUp(environment: store.environment) == .noObservers)
        #expect(recorder.hasEnded)
        #expect(recorder.transactions.isEmpty, "\(recorder.transactions)")
        store.close()
    }

    /// Bug: `ObservationHub.committed` dispatching a commit the watcher already dispatched (`>=` for `>`
    /// against the last transaction seen): the watcher can read a local commit from the change log between its
    /// publication and the writer telling the hub, and it must then not arrive twice.
    @Test func aLocalCommitTheWatcherDispatchedFirstIsNotDeliveredAgain() throws {
        let h = try Harness()
        defer { h.store.close() }
        let txid = try h.commit(inserting: 1)
        #expect(h.catchUp() == .upToDate)
        #expect(h.recorder.transactions == [txid])
        let tag = try h.store.model.entity("Post").tag
        h.hub.committed(CommitChanges(transactionID: txid, entities: [tag: EntityChanges(inserted: [1])]))
        #expect(h.recorder.transactions == [txid], "delivered again: \(h.recorder.transactions)")
    }
}

