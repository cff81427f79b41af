import Foundation
import StrataModels
import StrataTestSupport
import Testing

enum Journal {
    enum V1: SchemaVersion {
        static let versionIdentifier = "v1"
        static let models: [any EntityModel.Type] = [Note.self]
        @Entity struct Note {
            var title: String
            var body: String
            var words: Int32
        }
    }

    /// Metadata-only from v1: a rename, an added default, an added optional.
    enum V2: SchemaVersion {
        static let versionIdentifier = "v2"
        static let models: [any EntityModel.Type] = [Note.self]
        @Entity struct Note {
            @Field(originalName: "title") var headline: String
            var body: String
            var words: Int32
            var pinned: Bool = false
            var mood: String?
        }
    }

    /// From v3: `mood` made required with a default (nulls read the default).
    enum V4: SchemaVersion {
        static let versionIdentifier = "v4"
        static let models: [any EntityModel.Type] = [Note.self]
        @Entity struct Note {
            var headline: String
            var body: String
            var words: Int64
            var pinned: Bool = false
            var mood: String = "calm"
        }
    }

    /// From v2: `words` widened (a projection too).
    enum V3: SchemaVersion {
        static let versionIdentifier = "v3"
        static let models: [any EntityModel.Type] = [Note.self]
        @Entity struct Note {
            var headline: String
            var body: String
            var words: Int64
            var pinned: Bool = false
            var mood: String?
        }
    }
}

/// Records written by an older layout read through a newer model type give the projected values, exactly as
/// the dynamic API reads them.
@Suite struct ProjectionTests {
    @Test("after a metadata-only migration, old records read through the new type; new records mix with them")
    func metadataOnly() throws {
        let dir = try TemporaryDirectory()
        let v1 = try Store.open(at: dir.store, schema: try Schema(Journal.V1.self))
        let oldIDs = try v1.write { ctx in
            try (0..<200).map { try ctx.insert(Journal.V1.Note(title: "title \($0)", body: "body \($0)", words: Int32($0))) }
        }
        v1.close()
        let plan = try MigrationPlan(versions: [Journal.V1.self, Journal.V2.self])
        let store = try Store.open(at: dir.store, schema: try Schema(Journal.V2.self), plan: plan)
        defer { store.close() }
        let info = try store.info()
        #expect(info.entities.first?.layoutCount == 2, "the old records kept their layout: \(info.entities)")
        let newID = try store.write { try $0.insert(Journal.V2.Note(headline: "new", body: "b", words: 1, pinned: true, mood: "ok")) }
        try store.read { ctx in
            for (i, id) in oldIDs.enumerated() {
                let note = try #require(try ctx.fetch(Journal.V2.Note.self, id: id))
                #expect(note.headline == "title \(i)" && note.body == "body \(i)" && note.words == Int32(i))
                #expect(note.pinned == false && note.mood == nil)
                let object = try #require(try ctx.object(id, of: "Note"))
                #expect(object["headline"] == .string(note.headline) && object["pinned"] == .bool(false) && object["mood"] == .null)
            }
            let fresh = try #require(try ctx.fetch(Journal.V2.Note.self, id: newID))
            #expect(fresh.headline == "new" && fresh.pinned && fresh.mood == "ok")
            #expect(try ctx.objects(Journal.V2.Note.self).filter(\.pinned == false).count() == oldIDs.count)
            #expect(try ctx.objects(Journal.V2.Note.self).filter(\.mood == nil).ids() == oldIDs)
        }
        // An old record updated through the new type is written in the current layout, with its values.
        var first = try #require(try store.read { try $0.fetch(Journal.V2.Note.self, id: oldIDs[0]) })
        first.pinned = true
        try store.write { try $0.update(first) }
        let updated = try store.read { try $0.fetch(Journal.V2.Note.self, id: oldIDs[0]) }
        #expect(updated?.pinned == true && updated?.headline == "title 0")
    }

    @Test("after a rewrite, every record reads through the widened type")
    func rewrite() throws {
        let dir = try TemporaryDirectory()
        let v1 = try Store.open(at: dir.store, schema: try Schema(Journal.V1.self))
        let ids = try v1.write { ctx in
            try (0..<50).map { try ctx.insert(Journal.V1.Note(title: "t\($0)", body: "", words: Int32.max - Int32($0))) }
        }
        v1.close()
        let plan = try MigrationPlan(versions: [Journal.V1.self, Journal.V2.self, Journal.V3.self])
        let store = try Store.open(at: dir.store, schema: try Schema(Journal.V3.self), plan: plan)
        defer { store.close() }
        try store.read { ctx in
            for (i, id) in ids.enumerated() {
                let note = try #require(try ctx.fetch(Journal.V3.Note.self, id: id))
                #expect(note.words == Int64(Int32.max) - Int64(i) && note.headline == "t\(i)")
            }
        }
    }

    @Test("a layout that widens, defaults a null and keeps a field reads in place through the typed path, as the dynamic path reads it, before and after the sweep")
    func everyKindOfProjection() throws {
        let dir = try TemporaryDirectory()
        let v2 = try Store.open(at: dir.store, schema: try Schema(Journal.V2.self), plan: try MigrationPlan(versions: [Journal.V1.self, Journal.V2.self]))
        let ids = try v2.write { ctx in
            try (0..<100).map { i in
                try ctx.insert(Journal.V2.Note(headline: "h\(i)", body: "b\(i)", words: Int32.max - Int32(i), pinned: i % 3 == 0,
                                               mood: i.isMultiple(of: 2) ? nil : "mood \(i)"))
            }
        }
        v2.close()
        let plan = try MigrationPlan(versions: [Journal.V1.self, Journal.V2.self, Journal.V3.self, Journal.V4.self])
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        let store = try Store.open(at: dir.store, schema: try Schema(Journal.V4.self), plan: plan, configuration: configuration)
        defer { store.close() }
        #expect(try store.maintenanceStatus().oldLayoutRecords == ids.count, "every record kept its v2 layout")
        func check(_ label: String) throws {
            try store.read { ctx in
                for (i, id) in ids.enumerated() {
                    let note = try #require(try ctx.fetch(Journal.V4.Note.self, id: id))
                    let expectedMood = i.isMultiple(of: 2) ? "calm" : "mood \(i)"
                    #expect(note.headline == "h\(i)" && note.body == "b\(i)" && note.words == Int64(Int32.max) - Int64(i)
                            && note.pinned == (i % 3 == 0) && note.mood == expectedMood, "\(label): \(note)")
                    let object = try #require(try ctx.object(id, of: "Note"))
                    #expect(object["words"] == .int64(note.words) && object["mood"] == .string(note.mood), "\(label): \(object)")
                }
                #expect(try ctx.objects(Journal.V4.Note.self).filter(\.mood == "calm").count() == ids.count / 2, "\(label)")
            }
        }
        try check("old layout")
        _ = try store.performMaintenance(batchSize: 7)
        #expect(try store.maintenanceStatus().isComplete)
        try check("after the sweep")
    }
}
