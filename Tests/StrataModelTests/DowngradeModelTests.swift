import Foundation
import StrataModels
import StrataTestSupport
import Testing

/// An older app's model types on a store its newer version migrated (every change additive): typed reads,
/// updates that keep the newer attributes' values, inserts that get their defaults.
@Suite struct DowngradeModelTests {
    @Test func olderModelTypesReadAndWriteANewerStore() throws {
        let dir = try TemporaryDirectory()
        let v1 = try Store.open(at: dir.store, schema: try Schema(Journal.V1.self))
        let ids = try v1.write { ctx in
            try (0..<20).map { try ctx.insert(Journal.V1.Note(title: "title \($0)", body: "body \($0)", words: Int32($0))) }
        }
        v1.close()
        do {
            // The newer app (V2: a rename, a defaulted and an optional attribute) sets its attributes.
            let plan = try MigrationPlan(versions: [Journal.V1.self, Journal.V2.self])
            let v2 = try Store.open(at: dir.store, schema: try Schema(Journal.V2.self), plan: plan)
            defer { v2.close() }
            try v2.write { ctx in
                for (i, id) in ids.enumerated() {
                    var note = try #require(try ctx.fetch(Journal.V2.Note.self, id: id))
                    note.pinned = i % 2 == 0
                    note.mood = "mood \(i)"
                    try ctx.update(note)
                }
            }
        }
        // The older app, with its model types.
        let newID: ObjectID
        do {
            let old = try Store.open(at: dir.store, schema: try Schema(Journal.V1.self),
                                     plan: try MigrationPlan(versions: [Journal.V1.self]))
            defer { old.close() }
            #expect(old.downgradedFrom == "v2")
            newID = try old.write { ctx in
                for (i, id) in ids.enumerated() where i < 10 {
                    var note = try #require(try ctx.fetch(Journal.V1.Note.self, id: id))
                    #expect(note.title == "title \(i)" && note.words == Int32(i))
                    note.body = "edited by v1"
                    try ctx.update(note)
                }
                return try ctx.insert(Journal.V1.Note(title: "new", body: "from v1", words: 7))
            }
        }
        let plan = try MigrationPlan(versions: [Journal.V1.self, Journal.V2.self])
        let v2 = try Store.open(at: dir.store, schema: try Schema(Journal.V2.self), plan: plan)
        defer { v2.close() }
        try v2.read { ctx in
            for (i, id) in ids.enumerated() {
                let note = try #require(try ctx.fetch(Journal.V2.Note.self, id: id))
                #expect(note.headline == "title \(i)" && note.body == (i < 10 ? "edited by v1" : "body \(i)"))
                #expect(note.pinned == (i % 2 == 0) && note.mood == "mood \(i)", "note \(i) keeps the newer app's values")
            }
            let new = try #require(try ctx.fetch(Journal.V2.Note.self, id: newID))
            #expect(new.headline == "new" && new.pinned == false && new.mood == nil)
        }
        #expect(try v2.verify().isClean)
    }
}
