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
        var checked = 0
        try run.before.read { old in
            try run.after.read { new throws in
                try old.objects("Note").forEach { before in
                    let after = try #require(try new.object(before.id, of: "Note"))
                    #expect(after["title"] == before["title"])
                    #expect(after["body"] == before["body"])
                    #expect(after["pinned"] == (version == "v1" ? false : before["pinned"]))
                    let expectedCategory: Value = version == "v3"
                        ? try old.relatedObjects(before, "category").first?["name"] ?? .null
                        : before["category"]
                    let categories = try new.relatedObjects(after, "categories")
                    #expect(categories.map { $0["name"] } == [expectedCategory])
                    checked += 1
                }
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
