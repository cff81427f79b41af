import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The change log that carries commits' changes to other processes: bounded, exact, and safe to read when
/// damaged.
@Suite struct ChangeLogTests {
    static func schema() throws -> Schema {
        try Schema("v1") { Entity("Note") { Attribute("text", .string) } }
    }

    @Test func theLogKeepsTheLastCommitsAndSaysWhenOlderOnesAreGone() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        let first = store.environment.lastTransactionID
        var ids: [ObjectID] = []
        for n in 0..<1_500 {
            ids.append(try store.write { try $0.insert("Note", ["text": "n\(n)"]).id })
        }
        let last = store.environment.lastTransactionID
        try store.environment.read { txn in
            let all = try ChangeLog.entries(after: first, through: last, in: txn)
            #expect(!all.isContinuous, "1,500 commits: the oldest are pruned")
            #expect(all.entries.count <= Int(ChangeLog.retainedCommits) + ChangeLog.prunedPerCommit)
            #expect(all.entries.first.map { $0.transactionID + ChangeLog.retainedCommits >= last } == true)
            let recent = try ChangeLog.entries(after: last - 10, through: last, in: txn)
            #expect(recent.isContinuous)
            #expect(recent.entries.map(\.transactionID) == Array((last - 9)...last))
            let tag = store.model.entities[0].tag
            #expect(recent.entries.compactMap { $0.entities[tag]?.inserted.first } == ids.suffix(10).map(\.rawValue))
        }
    }

    @Test func aDamagedEntryReadsAsUnknownChangesAndRandomBytesNeverTrap() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        try store.write { _ = try $0.insert("Note", ["text": "a"]) }
        let last = store.environment.lastTransactionID
        try store.environment.write { txn in
            let dbi = try #require(try txn.openDatabase(ChangeLog.databaseName, flags: 0, create: false))
            let damaged: [UInt8] = [1, 2, 3, 4, 1, 9, 9]
            _ = try ChangeLog.key(last).withUnsafeBytes { k in try damaged.withUnsafeBytes { try txn.put(dbi, key: k, value: $0) } }
        }
        try store.environment.read { txn in
            let read = try ChangeLog.entries(after: last - 1, through: last, in: txn)
            #expect(read.entries.count == 1 && read.entries[0].isUnknown)
        }
        var random = SeededGenerator(seed: 5)
        let valid = ChangeLog.encode(CommitChanges(transactionID: 1, entities: [
            7: EntityChanges(inserted: [1, 2, 300], updated: [(id: 4, properties: PropertyMask(property: 2))], deleted: [9],
                             properties: PropertyMask(property: 2)),
        ]))
        #expect(try valid.withUnsafeBytes { try ChangeLog.decode($0, transactionID: 1) }.entities[7]?.inserted == [1, 2, 300])
        for _ in 0..<5_000 {
            var bytes = valid
            for _ in 0..<(1 + random.int(3)) { bytes[random.int(bytes.count)] = UInt8(random.int(256)) }
            if random.int(4) == 0 { bytes.removeLast(random.int(bytes.count)) }
            _ = try? bytes.withUnsafeBytes { try ChangeLog.decode($0, transactionID: 1) }
        }
    }
}

/// A compacted copy of a store (``Store/backup(to:compact:)``, `mdb_copy -c`) restarts LMDB's transaction IDs at 1,
/// but keeps the `changes` database, keyed by the old, larger IDs. Without care, a later transaction of the
/// restored store that logs nothing reaches one of those keys and observers receive changes nobody made.
@Suite struct CompactedCopyChangeLogTests {
    /// Opens a new store at `url`, commits 40 notes one by one (40 change-log entries), runs `body`, closes it.
    static func withFortyNotes(at url: URL, _ schema: Schema, _ body: (Store) throws -> Void) throws {
        let store = try Store.open(at: url, schema: schema)
        defer { store.close() }
        for n in 0..<40 { try store.write { _ = try $0.insert("Note", ["text": "n\(n)"]) } }
        try body(store)
    }

    @Test func aRestoredCompactedCopyDeliversNoChangesFromBeforeTheCopy() throws {
        let dir = try TemporaryDirectory("compacted-log")
        let schema = try ChangeLogTests.schema()
        try Self.withFortyNotes(at: dir.store, schema) { try $0.backup(to: dir.path("copy"), compact: true) }
        let store = try Store.open(at: dir.path("copy"), schema: schema)
        defer { store.close() }
        // Transactions that change no object log nothing: each brings the IDs closer to the old keys.
        for _ in 0..<20 {
            try store.write { context in
                let note = try context.insert("Note", ["text": "gone"])
                try context.delete(note)
            }
        }
        let last = store.environment.lastTransactionID
        try store.environment.read { txn in
            let read = try ChangeLog.entries(after: 0, through: last, in: txn)
            #expect(read.entries.isEmpty, "phantom change sets from before the copy: \(read.entries.map(\.transactionID))")
        }
    }

    /// A compacted copy made without Strata (`mdb_copy -c`: LMDB's copy alone, the change log as it was) is put in
    /// place of a store: the first open of the process empties the log it kept.
    @Test func aCompactedCopyMadeByLMDBAloneHasItsLogEmptiedAtOpen() throws {
        let dir = try TemporaryDirectory("compacted-by-lmdb")
        let schema = try ChangeLogTests.schema()
        try Self.withFortyNotes(at: dir.store, schema) { store in
            try FileManager.default.createDirectory(at: dir.path("copy"), withIntermediateDirectories: false)
            try store.environment.copy(toEmptyDirectory: dir.path("copy").path, compact: true)
        }
        let store = try Store.open(at: dir.path("copy"), schema: schema)
        defer { store.close() }
        #expect(try store.read { try $0.count("Note") } == 40)
        try store.environment.read { txn in
            let read = try ChangeLog.entries(after: 0, through: UInt64.max, in: txn)
            #expect(read.entries.isEmpty, "the copy's log kept entries of the old IDs: \(read.entries.map(\.transactionID))")
        }
    }
}
