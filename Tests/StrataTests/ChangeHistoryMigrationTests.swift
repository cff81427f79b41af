import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The change history across migrations: a migration is a transaction of the history (from → to, what it did to
/// each entity), a consumer holding a token from before it gets it and then the changes after it, named by the
/// new model; a migration's scripts are recorded as commits; a custom stage that asks lists the objects it made
/// and dropped.
@Suite struct ChangeHistoryMigrationTests {
    /// v2 with a custom stage's result: notes with body "drop" are not carried over, a pinned note gets a `Tag`.
    static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Note") {
                Attribute("headline", .string)
                Attribute("body", .string).defaultValue("")
                Attribute("serverID", .string).optional().preservedOnDeletion()
                Attribute("pinned", .bool).defaultValue(false)
                Relationship("folder", to: "Folder", inverse: "notes")
            }
            Entity("Folder") {
                Attribute("name", .string).preservedOnDeletion()
                Relationship("notes", to: "Note", inverse: "folder", toMany: true, deleteRule: .cascade)
            }
            Entity("Tag") { Attribute("label", .string) }
        }
    }

    static func splitStage(recording: Bool) -> MigrationStage {
        let stage = MigrationStage.custom(from: "v2", to: "v3", entityMappings: [
            .transform("Note", destinations: ["Tag"]) { note, context in
                if note["body"] == "drop" { return }
                _ = try context.insertInferred(for: note)
                if note["pinned"] == true { _ = try context.insert("Tag", ["label": note["headline"]]) }
            },
        ])
        return recording ? stage.recordingChangesInHistory() : stage
    }

    @Test func anInferredMigrationIsATransactionAndLaterChangesNameTheNewProperties() throws {
        let dir = try TemporaryDirectory("history-migration")
        var token: HistoryToken
        var note = ObjectID(rawValue: 0)
        do {
            let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
            defer { store.close() }
            note = try store.write { try $0.insert("Note", ["title": "first"]).id }
            token = try store.currentHistoryToken()
            try store.write { ctx in
                var n = try #require(try ctx.object(note, of: "Note"))
                n["title"] = "renamed soon"
                try ctx.update(n)
            }
        }
        let plan = try MigrationPlan(schemas: [try HistoryFixtures.v1(), try HistoryFixtures.v2()])
        let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v2(), plan: plan)
        defer { store.close() }
        try store.write { ctx in
            var n = try #require(try ctx.object(note, of: "Note"))
            n["headline"] = "after"
            n["pinned"] = true
            try ctx.update(n)
        }
        let transactions = try store.fetchHistory(after: token).transactions
        try #require(transactions.count == 3)
        #expect(transactions[0].modelVersion == "v1")
        #expect(transactions[0].changes(of: "Note")?.updated.first?.properties == ["title"])
        let migration = try #require(transactions[1].migration)
        #expect(migration.sourceVersion == "v1" && migration.destinationVersion == "v2")
        #expect(migration.steps == ["Note": .inferred, "Folder": .inferred])
        #expect(transactions[1].author == "strata.migration" && transactions[1].modelVersion == "v2")
        #expect(transactions[1].changes.isEmpty, "an inferred step lists no object")
        #expect(transactions[2].modelVersion == "v2")
        #expect(transactions[2].changes(of: "Note")?.updated == [HistoryUpdate(id: note, properties: ["headline", "pinned"])])
    }

    @Test(arguments: [true, false])
    func aCustomStageListsWhatItMadeAndDroppedWhenItAsks(recording: Bool) throws {
        let dir = try TemporaryDirectory("history-custom")
        var token: HistoryToken
        var kept: [ObjectID] = []
        var dropped = ObjectID(rawValue: 0)
        let plan = try MigrationPlan(schemas: [try HistoryFixtures.v1(), try HistoryFixtures.v2(), try Self.v3()],
                                     stages: [Self.splitStage(recording: recording)])
        do {
            let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v2(), configuration: HistoryFixtures.enabled)
            defer { store.close() }
            try store.write { ctx in
                kept.append(try ctx.insert("Note", ["headline": "a", "pinned": true]).id)
                kept.append(try ctx.insert("Note", ["headline": "b"]).id)
                dropped = try ctx.insert("Note", ["headline": "c", "body": "drop", "serverID": "srv-c"]).id
            }
            token = try store.currentHistoryToken()
        }
        let store = try Store.open(at: dir.store, schema: try Self.v3(), plan: plan)
        defer { store.close() }
        let transactions = try store.fetchHistory(after: token).transactions
        try #require(transactions.count == 1)
        let migration = try #require(transactions[0].migration)
        #expect(migration.steps == ["Note": .custom, "Folder": .inferred, "Tag": .custom])
        let notes = try #require(transactions[0].changes(of: "Note"))
        let tags = try #require(transactions[0].changes(of: "Tag"))
        if recording {
            #expect(notes.isComplete && tags.isComplete)
            #expect(notes.inserted.isEmpty)
            #expect(notes.updated.map(\.id) == kept)
            #expect(notes.updated.first?.properties == ["headline", "body", "serverID", "pinned", "folder"])
            #expect(notes.deleted == [HistoryDeletion(id: dropped, tombstone: ["serverID": "srv-c"])])
            let tag = try store.read { try $0.objects("Tag").fetch().map(\.id) }
            #expect(tags.inserted == tag && tag.count == 1)
        } else {
            #expect(!notes.isComplete && notes.count == 0)
            #expect(!tags.isComplete)
        }
        #expect(transactions[0].changes(of: "Folder") == nil)
    }

    @Test func aStagesScriptsAreRecordedAsCommitsAroundTheMigration() throws {
        let dir = try TemporaryDirectory("history-scripts")
        var token: HistoryToken
        do {
            let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
            defer { store.close() }
            try store.write { _ = try $0.insert("Note", ["title": "x"]) }
            token = try store.currentHistoryToken()
        }
        let stage = MigrationStage.custom(from: "v1", to: "v2", willMigrate: { ctx in
            _ = try ctx.insert("Folder", ["name": "before"])
        }, didMigrate: { ctx in
            _ = try ctx.insert("Note", ["headline": "welcome", "pinned": true])
        })
        let plan = try MigrationPlan(schemas: [try HistoryFixtures.v1(), try HistoryFixtures.v2()], stages: [stage])
        let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v2(), plan: plan)
        defer { store.close() }
        let transactions = try store.fetchHistory(after: token).transactions
        #expect(transactions.map(\.author) == ["strata.migration", "strata.migration", "strata.migration"])
        #expect(transactions.map(\.modelVersion) == ["v1", "v2", "v2"])
        #expect(transactions.map { $0.migration != nil } == [false, true, false])
        #expect(transactions[0].changes(of: "Folder")?.inserted.count == 1)
        #expect(transactions[2].changes(of: "Note")?.inserted.count == 1)
    }

    @Test func anOlderModelWritingToANewerStoreNamesItsOwnProperties() throws {
        let dir = try TemporaryDirectory("history-downgrade")
        let plan = try MigrationPlan(schemas: [try HistoryFixtures.v1(), try HistoryFixtures.v2()])
        var note = ObjectID(rawValue: 0)
        do {
            let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v2(), plan: plan, configuration: HistoryFixtures.enabled)
            defer { store.close() }
            note = try store.write { try $0.insert("Note", ["headline": "new app", "pinned": true]).id }
        }
        let token: HistoryToken
        do {
            let older = try Store.open(at: dir.store, schema: try HistoryFixtures.v1())
            defer { older.close() }
            #expect(older.downgradedFrom == "v2")
            token = try older.currentHistoryToken()
            try older.write(author: "old app") { ctx in
                var n = try #require(try ctx.object(note, of: "Note"))
                n["body"] = "written by v1"
                try ctx.update(n)
            }
            // Observers of the store's own model number properties otherwise: they are told "every property".
            let last = older.environment.lastTransactionID
            try older.environment.read { txn in
                let logged = try ChangeLog.entries(after: last - 1, through: last, in: txn).entries
                #expect(logged.first?.entities.values.first?.updated.first?.properties == .all)
            }
        }
        let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v2(), plan: plan)
        defer { store.close() }
        let transaction = try #require(try store.fetchHistory(after: token).transactions.first)
        #expect(transaction.author == "old app" && transaction.modelVersion == "v1")
        #expect(transaction.changes(of: "Note")?.updated == [HistoryUpdate(id: note, properties: ["body"])])
    }

    @Test func theFeedFollowsNewCommitsAndGoesOnThroughAMigration() async throws {
        let dir = try TemporaryDirectory("history-feed")
        let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
        let first = try await store.write { try $0.insert("Note", ["title": "one"]).id }
        var feed = store.history(after: nil).makeAsyncIterator()
        let t1 = try await feed.next()
        #expect(t1?.changes(of: "Note")?.inserted == [first])
        // A commit after the feed caught up: it wakes the feed.
        let second = try await store.write { try $0.insert("Note", ["title": "two"]).id }
        let t2 = try await feed.next()
        #expect(t2?.changes(of: "Note")?.inserted == [second])
        // Another handle migrates the store (this handle's model is now out of date): the feed goes on.
        let plan = try MigrationPlan(schemas: [try HistoryFixtures.v1(), try HistoryFixtures.v2()])
        let migrated = try Store.open(at: dir.store, schema: try HistoryFixtures.v2(), plan: plan)
        let third = try await migrated.write { try $0.insert("Note", ["headline": "three", "pinned": true]).id }
        let t3 = try await feed.next()
        #expect(t3?.migration?.destinationVersion == "v2")
        let t4 = try await feed.next()
        #expect(t4?.changes(of: "Note")?.inserted == [third] && t4?.modelVersion == "v2")
        #expect { try store.read { try $0.count("Note") } } throws: { ($0 as? StoreError)?.code == .modelChanged }
        migrated.close()
        store.close()
        let ended = try await feed.next()
        #expect(ended == nil, "the feed ends when its handle closes")
    }
}
