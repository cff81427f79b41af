import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Retention: the history keeps what its configuration says (by count, age and size), prunes the rest from the
/// front in bounded transactions, and a token older than what is kept says so — `historyExpired`, with what to
/// do — instead of silently skipping transactions.
@Suite struct ChangeHistoryRetentionTests {
    static func store(_ retention: HistoryConfiguration) throws -> Store {
        var configuration = StoreConfiguration()
        configuration.history = .enabled(retention)
        configuration.backgroundMaintenance = false
        return try Store.temporary(schema: try HistoryFixtures.v1(), configuration: configuration)
    }

    static func commit(_ store: Store, _ n: Int) throws {
        for i in 0..<n { try store.write { _ = try $0.insert("Note", ["title": .string("n\(i)")]) } }
    }

    @Test func aCountLimitKeepsTheNewestTransactionsAndExpiresOlderTokens() throws {
        let store = try Self.store(HistoryConfiguration(maximumTransactions: 10, maximumAge: nil, maximumBytes: nil))
        defer { store.close() }
        let start = try store.currentHistoryToken()
        try Self.commit(store, 4)
        let early = try store.currentHistoryToken()
        try Self.commit(store, 21)
        let deleted = try store.pruneHistory()
        #expect(deleted == 15)
        #expect(try store.pruneHistory() == 0)
        let info = try store.historyInfo()
        #expect(info.transactions == 10)
        for token in [start, early] {
            do {
                _ = try store.fetchHistory(after: token)
                Issue.record("an expired token was accepted")
            } catch let error as StoreError {
                #expect(error.code == .historyExpired)
                #expect(error.description.contains("Resynchronize fully"))
            }
        }
        #expect { try store.fetchHistory(after: nil) } throws: { ($0 as? StoreError)?.code == .historyExpired }
        // The oldest token still kept reads the ten transactions after it.
        #expect(try store.fetchHistory(after: info.oldest).transactions.count == 10)
    }

    /// A store whose history outgrew its retention while no handle pruned it is pruned by the next handle that
    /// opens it with background maintenance (the default), without any commit of its own.
    @Test func aHandleOpenedOnAHistoryOverItsLimitsPrunesItInTheBackground() throws {
        let dir = try TemporaryDirectory("history-over-limits")
        var configuration = StoreConfiguration()
        configuration.history = .enabled(HistoryConfiguration(maximumTransactions: 10, maximumAge: nil, maximumBytes: nil))
        configuration.backgroundMaintenance = false
        do {
            let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1(), configuration: configuration)
            defer { store.close() }
            try Self.commit(store, 30)
            #expect(try store.historyInfo().transactions == 30)
        }
        let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1())
        defer { store.close() }
        // Background work: waited for (a generous bound, not a speed requirement).
        var transactions = try store.historyInfo().transactions
        for _ in 0..<3000 where transactions > 10 {
            Thread.sleep(forTimeInterval: 0.01)
            transactions = try store.historyInfo().transactions
        }
        #expect(transactions == 10)
    }

    @Test func deletingBeforeATokenKeepsItValidAndExpiresOlderOnes() throws {
        let store = try Self.store(.unlimited)
        defer { store.close() }
        try Self.commit(store, 5)
        let all = try HistoryFixtures.all(store)
        try store.deleteHistory(before: all[2].token)
        #expect(try store.fetchHistory(after: all[2].token).transactions.map(\.token) == all[3...].map(\.token))
        #expect(try store.fetchHistory(after: all[1].token).transactions.count == 3, "the token's own transaction is kept")
        #expect { try store.fetchHistory(after: all[0].token) } throws: { ($0 as? StoreError)?.code == .historyExpired }
        // Deleting before the newest token: nothing left to read, and the newest token stays valid.
        let newest = try store.currentHistoryToken()
        try store.deleteHistory(before: newest)
        #expect(try store.fetchHistory(after: newest).transactions.isEmpty)
        try Self.commit(store, 1)
        #expect(try store.fetchHistory(after: newest).transactions.count == 1)
    }

    @Test func anAgeLimitPrunesTransactionsOlderThanItByCommitTime() throws {
        let store = try Self.store(HistoryConfiguration(maximumTransactions: nil, maximumAge: .seconds(3600), maximumBytes: nil))
        defer { store.close() }
        try Self.commit(store, 3)
        let all = try HistoryFixtures.all(store)
        // Now: nothing is an hour old.
        #expect(try store.pruneHistory() == 0)
        // Two hours from now: all three are.
        let later = HistoryRecording.now() + 2 * 3_600_000
        let outcome = try HistoryPruning.batch(environment: store.environment, meta: store.model.meta, now: later)
        #expect(outcome.deleted == 3 && outcome.isFinished)
        #expect { try store.fetchHistory(after: all[1].token) } throws: { ($0 as? StoreError)?.code == .historyExpired }
        #expect(try store.fetchHistory(after: all[2].token).transactions.isEmpty)
    }

    @Test func aSizeLimitPrunesUntilTheEntriesFit() throws {
        let store = try Self.store(HistoryConfiguration(maximumTransactions: nil, maximumAge: nil, maximumBytes: 64 << 10))
        defer { store.close() }
        // IDs interleaved between two entities make short runs: several KiB per transaction.
        for _ in 0..<40 {
            try store.write { ctx in for i in 0..<2_000 { _ = try ctx.insert("Note", ["title": .string("n\(i)")]); if i % 2 == 0 { _ = try ctx.insert("Folder", ["name": "f"]) } } }
        }
        try store.pruneHistory()
        let info = try store.historyInfo()
        #expect(info.bytes <= 2 * (64 << 10))
        #expect(info.transactions < 40 && info.transactions > 0)
    }

    @Test func pruningRunsInBoundedBatches() throws {
        let store = try Self.store(HistoryConfiguration(maximumTransactions: 1, maximumAge: nil, maximumBytes: nil))
        defer { store.close() }
        try Self.commit(store, HistoryPruning.entriesPerBatch + 200)
        let first = try HistoryPruning.batch(environment: store.environment, meta: store.model.meta)
        #expect(first.deleted <= HistoryPruning.entriesPerBatch)
        #expect(try store.pruneHistory() + first.deleted == HistoryPruning.entriesPerBatch + 199)
    }

    @Test func turningHistoryOffDeletesItAndExpiresEveryTokenEvenWhenTurnedOnAgain() throws {
        let dir = try TemporaryDirectory("history-toggle")
        let schema = try HistoryFixtures.v1()
        var token: HistoryToken
        do {
            let store = try Store.open(at: dir.store, schema: schema, configuration: HistoryFixtures.enabled)
            defer { store.close() }
            try Self.commit(store, 3)
            token = try store.currentHistoryToken()
        }
        var off = StoreConfiguration()
        off.history = .disabled
        do {
            let store = try Store.open(at: dir.store, schema: schema, configuration: off)
            defer { store.close() }
            #expect(try store.info().formatVersion == 1)
            #expect { try store.fetchHistory(after: token) } throws: { ($0 as? StoreError)?.code == .historyDisabled }
            // Written while history is off: in no history.
            try Self.commit(store, 2)
        }
        let store = try Store.open(at: dir.store, schema: schema, configuration: HistoryFixtures.enabled)
        defer { store.close() }
        #expect(try store.info().formatVersion == 2)
        #expect { try store.fetchHistory(after: token) } throws: { ($0 as? StoreError)?.code == .historyExpired }
        #expect(token.storeIdentifier == (try store.currentHistoryToken()).storeIdentifier)
        let restart = try store.currentHistoryToken()
        try Self.commit(store, 1)
        #expect(try store.fetchHistory(after: restart).transactions.count == 1)
    }
}
