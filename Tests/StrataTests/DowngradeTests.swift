import Foundation
import Strata
import StrataTestSupport
import Testing

/// An older app opens a store a newer app migrated, when every change since its model is additive: it reads
/// and writes its objects as it always did, the newer attributes' values survive its updates, the objects it
/// inserts get their defaults, the store's indexes stay complete — and the store is not migrated. A change
/// that is not additive keeps the older app out, the store untouched.
@Suite struct DowngradeTests {
    /// The same at every version.
    static func folder() -> Entity {
        Entity("Folder") {
            Attribute("name", .string)
            Relationship("notes", to: "Note", inverse: "folder", toMany: true, deleteRule: .cascade)
        }
    }

    static func v1() throws -> Schema {
        try Schema("v1") {
            Entity("Note") {
                Attribute("title", .string)
                Attribute("words", .int32)
                Relationship("folder", to: "Folder", inverse: "notes")
            }
            folder()
        }
    }
    /// Additive: a rename, an indexed attribute with a default, an optional attribute, a new entity.
    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Note") {
                Attribute("headline", .string).renamed(from: "title")
                Attribute("words", .int32)
                Attribute("pinned", .bool).defaultValue(false).indexed()
                Attribute("mood", .string).optional()
                Relationship("folder", to: "Folder", inverse: "notes")
            }
            folder()
            Entity("Tag") { Attribute("label", .string) }
        }
    }
    /// Not additive from v1 or v2: a widening (the older app could read a value it cannot hold).
    static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Note") {
                Attribute("headline", .string)
                Attribute("words", .int64)
                Attribute("pinned", .bool).defaultValue(false).indexed()
                Attribute("mood", .string).optional()
                Relationship("folder", to: "Folder", inverse: "notes")
            }
            folder()
            Entity("Tag") { Attribute("label", .string) }
        }
    }

    /// A store written at v1 (10 notes in a folder), migrated to v2, where the newer app pins the even notes,
    /// gives the odd ones a mood and adds a tag.
    static func makeV2Store(_ dir: TemporaryDirectory) throws {
        do {
            let store = try Store.open(at: dir.store, schema: try v1())
            defer { store.close() }
            try store.write { ctx in
                let folder = try ctx.insert("Folder", ["name": "inbox"])
                for i in 0..<10 {
                    let note = try ctx.insert("Note", ["title": .string("note \(i)"), "words": .int32(Int32(i))])
                    try ctx.link(note, "folder", to: folder)
                }
            }
        }
        let store = try Store.open(at: dir.store, schema: try v2(), plan: try MigrationPlan(schemas: [try v1(), try v2()]))
        defer { store.close() }
        try store.write { ctx in
            for var note in try ctx.objects("Note").fetch() {
                let i = try #require(note["words"].int64Value)
                if i % 2 == 0 { note["pinned"] = true } else { note["mood"] = .string("mood \(i)") }
                try ctx.update(note)
            }
            _ = try ctx.insert("Tag", ["label": "kept"])
        }
    }

    @Test func anOlderAppReadsAndWritesANewerStoreWhenEveryChangeIsAdditive() throws {
        let dir = try TemporaryDirectory("downgrade")
        try Self.makeV2Store(dir)
        let explanation = try Store.explainMigration(at: dir.store, schema: try Self.v2(), plan: try MigrationPlan(schemas: [try Self.v1(), try Self.v2()]))
        #expect(explanation.versionsThatCanOpen == ["v1"], "\(explanation)")
        #expect("\(explanation)".contains("Older versions that can still open the store at the app's version (every change since is additive): v1."))

        // An app that asks for strictness is refused, as before.
        var strict = StoreConfiguration()
        strict.opensNewerAdditiveStores = false
        #expect(throws: StoreError.storeNewerThanModel(store: "v2", app: "v1")) {
            try Store.open(at: dir.store, schema: try Self.v1(), configuration: strict)
        }
        do {
            // A read-only handle of the older model (a tool, an extension) reads too.
            var readOnly = StoreConfiguration()
            readOnly.readOnly = true
            let store = try Store.open(at: dir.store, schema: try Self.v1(), configuration: readOnly)
            defer { store.close() }
            #expect(store.downgradedFrom == "v2")
            #expect(try store.read { try $0.objects("Note").where("title", equals: "note 4").count() } == 1)
        }
        do {
            // The older app, with its own plan (which ends at v1).
            let store = try Store.open(at: dir.store, schema: try Self.v1(), plan: try MigrationPlan(schemas: [try Self.v1()]))
            defer { store.close() }
            #expect(store.downgradedFrom == "v2")
            try store.read { ctx in
                let notes = try ctx.objects("Note").fetch()
                #expect(notes.count == 10)
                for note in notes {
                    let i = try #require(note["words"].int64Value)
                    #expect(note["title"] == .string("note \(i)"), "the renamed attribute reads under its older name")
                    #expect(try ctx.relatedCount(note, "folder") == 1)
                }
            }
            try store.write { ctx in
                // Updates of a pinned note and of a note with a mood; a new note; a deleted note.
                for var note in try ctx.objects("Note").where("words", equals: .int32(2)).fetch() + ctx.objects("Note").where("words", equals: .int32(3)).fetch() {
                    note["title"] = .string("renamed by v1")
                    try ctx.update(note)
                }
                let folder = try #require(try ctx.objects("Folder").fetch().first)
                let new = try ctx.insert("Note", ["title": "written by v1", "words": .int32(100)])
                try ctx.link(new, "folder", to: folder)
                let nine = try #require(try ctx.objects("Note").where("words", equals: .int32(9)).fetch().first)
                try ctx.delete(nine)
            }
        }

        // The newer app: no migration ran, and everything it wrote is there.
        let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: try MigrationPlan(schemas: [try Self.v1(), try Self.v2()]))
        defer { store.close() }
        #expect(store.downgradedFrom == nil)
        #expect(try store.info().modelVersion == "v2")
        try store.read { ctx in
            let notes = try ctx.objects("Note").fetch()
            #expect(notes.count == 10)
            for note in notes {
                let i = try #require(note["words"].int64Value)
                switch i {
                case 100:
                    #expect(note["headline"] == "written by v1" && note["pinned"] == .bool(false) && note["mood"] == .null,
                            "an object the older app inserted has the newer attributes' defaults: \(note)")
                default:
                    #expect(note["headline"] == .string(i == 2 || i == 3 ? "renamed by v1" : "note \(i)"), "note \(i)")
                    #expect(note["pinned"] == .bool(i % 2 == 0), "note \(i) keeps what the newer app wrote")
                    #expect(note["mood"] == (i % 2 == 1 ? .string("mood \(i)") : .null), "note \(i) keeps what the newer app wrote")
                }
                #expect(try ctx.relatedCount(note, "folder") == 1)
            }
            // The index the newer model declares covers the older app's writes.
            let unpinned = try ctx.objects("Note").where("pinned", equals: false).fetch().compactMap { $0["words"].int64Value }
            #expect(Set(unpinned) == [1, 3, 5, 7, 100])
            #expect(try ctx.objects("Tag").count() == 1)
        }
        #expect(try store.verify().isClean)
    }

    @Test func anOlderAppIsRefusedWhenAChangeIsNotAdditive() throws {
        let dir = try TemporaryDirectory("downgrade-refused")
        try Self.makeV2Store(dir)
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), try Self.v3()])
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v3(), plan: plan)
            store.close()
        }
        let explanation = try Store.explainMigration(at: dir.store, schema: try Self.v3(), plan: plan)
        #expect(explanation.versionsThatCanOpen.isEmpty, "\(explanation)")
        for older in [try Self.v1(), try Self.v2()] {
            do {
                let store = try Store.open(at: dir.store, schema: older)
                store.close()
                Issue.record("\(older.versionIdentifier) opened a store with a widened attribute")
            } catch {
                #expect((error as? StoreError)?.code == .storeNewerThanModel)
                #expect("\(error)".contains("\(older.versionIdentifier) cannot open it as it is"), "\(error)")
                // v3 dropped the renaming identifier: from v1, `title` is gone and `headline` is new.
                let reason = older.versionIdentifier == "v2" ? "Note.words changed type" : "Note.headline is a new required attribute"
                #expect("\(error)".contains(reason), "\(error)")
            }
        }
        let store = try Store.open(at: dir.store, schema: try Self.v3(), plan: plan)
        defer { store.close() }
        #expect(try store.read { try $0.objects("Note").count() } == 10)
        #expect(try store.verify().isClean)
    }

    /// The two models number properties differently (v2 declares `words` first): a change the older app makes
    /// to `title` must reach the newer app's observer of `headline`, the same attribute.
    @Test func anObserverOfTheNewerModelSeesTheOlderAppsChanges() async throws {
        let dir = try TemporaryDirectory("downgrade-observe")
        let v1 = try Schema("v1") { Entity("Note") { Attribute("title", .string); Attribute("words", .int32) } }
        let v2 = try Schema("v2") {
            Entity("Note") {
                Attribute("words", .int32)
                Attribute("headline", .string).renamed(from: "title")
                Attribute("pinned", .bool).defaultValue(false)
            }
        }
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            _ = try await store.write { try $0.insert("Note", ["title": "first", "words": .int32(1)]) }
        }
        let newer = try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2]))
        defer { newer.close() }
        let older = try Store.open(at: dir.store, schema: v1)
        defer { older.close() }
        #expect(older.downgradedFrom == "v2")
        let sets = ObservedValues<ChangeSet>()
        let task = sets.record(try newer.changes(of: "Note", properties: ["headline"]))
        defer { task.cancel() }
        #expect(await ObservationFaultTests.waitUntilObserved(newer))  // it registers when iteration starts
        let note = try #require(try await older.read { try $0.objects("Note").fetch().first })
        var changed = note
        changed["title"] = "changed by v1"
        try await older.write { [changed] in try $0.update(changed) }
        #expect(await sets.waitUntil { $0.contains { $0.updated == [note.id] } }, "the observer of headline missed the change of title: \(sets.all)")
        let headline = try await newer.read { try $0.objects("Note").fetch().first?["headline"] }
        #expect(headline == "changed by v1")
    }

    /// The newer model indexes an attribute the older one declared plain, and makes another unique: the older
    /// app, bound to the store, maintains the index and enforces the constraint as the store's model declares
    /// them (bugs: `Downgrade.make` keeping the older model's `isIndexed` or `isUnique` for an attribute both
    /// models have).
    @Test func anOlderAppKeepsTheNewerModelsIndexesAndConstraintsOnAttributesBothDeclare() throws {
        let dir = try TemporaryDirectory("downgrade-index-flags")
        let v1 = try Schema("v1") { Entity("Note") { Attribute("title", .string); Attribute("words", .int32) } }
        let v2 = try Schema("v2") {
            Entity("Note") {
                Attribute("title", .string).unique()
                Attribute("words", .int32).indexed().versionHashModifier("indexed")
            }
        }
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            _ = try store.write { try $0.insert("Note", ["title": "a", "words": .int32(1)]) }
        }
        do {
            let store = try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2]))
            store.close()
        }
        do {
            let older = try Store.open(at: dir.store, schema: v1)
            defer { older.close() }
            #expect(older.downgradedFrom == "v2")
            try older.write { context in
                _ = try context.insert("Note", ["title": "b", "words": .int32(2)])
                var a = try #require(try context.objects("Note").where("title", equals: "a").first())
                a["words"] = .int32(3)
                try context.update(a)
            }
            #expect(throws: StoreError.self, "the older app inserted a duplicate of a unique title") {
                try older.write { _ = try $0.insert("Note", ["title": "b", "words": .int32(4)]) }
            }
        }
        let store = try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2]))
        defer { store.close() }
        #expect(store.downgradedFrom == nil)
        let (total, byWords) = try store.read { context -> (Int, [Int]) in
            (try context.objects("Note").count(),
             try [1, 2, 3, 4].map { try context.objects("Note").where("words", equals: .int32(Int32($0))).count() })
        }
        #expect(total == 2)
        #expect(byWords == [0, 1, 1, 0], "notes found through the index of words, for 1...4")
        #expect(try store.verify().isClean)
    }
}
