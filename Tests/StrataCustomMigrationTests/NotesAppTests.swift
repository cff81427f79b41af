import Foundation
import Strata
import StrataTestKit
import StrataTutorials
import Testing

/// The notes tutorial: add an attribute; replace an attribute with an entity linked by a to-one; turn the
/// to-one into a to-many keeping the links.
@Suite struct NotesAppTests {
    static let count = 10_000

    @Test(arguments: ["v1", "v2", "v3"])
    func migratesToV4(from version: String) throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let schema = try #require(NotesApp.plan.schema(version))
        let url = try kit.makeStore(version: schema) { try NotesApp.fill($0, version: version, count: Self.count) }
        let run = try kit.migrate(url, plan: NotesApp.plan)
        try run.after.read { new throws in
            #expect(try new.count("Note") == Self.count)
            #expect(try new.count("Category") == NotesApp.categoryNames.count)
        }
        // Every note, found by its title, holds what `fill` gave it (the test's input, not the store before).
        var checked = 0
        try run.after.read { new throws in
            var notes: [String: DynamicObject] = [:]
            try new.objects("Note").forEach { note in if let title = note["title"].stringValue { notes[title] = note } }
            for i in 0..<Self.count {
                let input = NotesApp.note(i)
                let after = try #require(notes[input.title], "\(input.title) is missing")
                #expect(after["body"] == .string(input.body))
                // v1 had no `pinned`: the default (false); later versions wrote it.
                #expect(after["pinned"] == .bool(version == "v1" ? false : input.pinned))
                let categories = try new.relatedObjects(after, "categories")
                #expect(categories.map { $0["name"] } == [.string(input.category)])
                checked += 1
            }
        }
        #expect(checked == Self.count)
        // The to-many now takes more links, and the inverse follows.
        try run.after.write { context in
            let note = try #require(try context.objects("Note").first())
            let other = try #require(try context.objects("Category").where("name", equals: "travel").first())
            try context.link(note, "categories", to: other)
            #expect(try context.related(note, "categories").count == 2)
            #expect(try context.related(other, "notes").contains(note.id))
        }
        #expect(try run.after.verify().isClean)
    }

    @Test func toOneBecomesToManyAsMetadataOnly() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let url = try kit.makeStore(version: NotesApp.v3) { try NotesApp.fill($0, version: "v3", count: 100) }
        let explanation = try Store.explainMigration(at: url, schema: NotesApp.v4, plan: NotesApp.plan)
        let step = try #require(explanation.steps.first)
        #expect(step.rewritesRecords == false)
        #expect(step.recordsTouched == 0)
        #expect(step.mapping?.entity("Note")?.relationships.first { $0.name == "categories" }?.becameToMany == true)
    }
}
