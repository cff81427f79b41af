import Foundation
import Strata
import StrataTestSupport
import Testing

/// `Store.explainMigration`: every step, each entity's mapping, the records each step touches, and whether
/// it rewrites records or changes metadata only — as data and as text — without writing anything.
@Suite struct MigrationExplainTests {
    static func makeStore(_ url: URL) throws {
        let store = try Store.open(at: url, schema: try JournalChain.v1())
        defer { store.close() }
        // 400 entries, 10 folders, 16 labels.
        try JournalChain.fill(store, version: "v1", entries: 400, seed: 4, oracle: Oracle(schema: store.schema))
    }

    @Test func explainsEveryStep() throws {
        let dir = try TemporaryDirectory("explain")
        try Self.makeStore(dir.store)
        let before = try StoreFileBytes.dataFile(of: dir.store)
        let explanation = try Store.explainMigration(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan())
        #expect(try StoreFileBytes.dataFile(of: dir.store) == before, "explaining wrote to the store")
        #expect(explanation.storeVersion == "v1")
        #expect(!explanation.isUpToDate)
        #expect(explanation.steps.map { "\($0.source)→\($0.destination)" } == ["v1→v2", "v2→v3", "v3→v4", "v4→v5"])
        // Renames, added and removed attributes, defaults and widenings change metadata only; the new index is
        // built by the store's maintenance after the step.
        #expect(explanation.steps.map(\.rewritesRecords) == [false, false, false, false])
        #expect(explanation.steps.allSatisfy { !$0.isCustom && $0.diagnostics.isEmpty && $0.mapping != nil })

        let first = explanation.steps[0]
        #expect(first.recordCounts["Entry"]?.value == 400)
        #expect(first.recordCounts["Folder"]?.value == 10)
        #expect(first.recordCounts["Label"]?.value == 16)
        // v1 → v2 rewrites nothing, and leaves the headline index to the maintenance: it touches no record.
        #expect(first.recordsTouched == 0)
        #expect(!first.tasks.contains("index Entry.headline"))
        let entry = try #require(first.mapping?.entity("Entry"))
        #expect(entry.attributes.first { $0.name == "headline" }?.sourceName == "title")
        #expect(entry.attributes.first { $0.name == "words" }?.origin == .added(.int32(0)))
        #expect(entry.attributes.first { $0.name == "draft" }?.nullReplacement == .bool(false))
        #expect(entry.droppedAttributes == ["body"])
        #expect(entry.relationships.first { $0.name == "tags" }?.sourceName == "labels")
        #expect(first.mapping?.entity("Tag")?.sourceName == "Label")

        // The later steps widen Entry's attributes through projections; v3 → v4 checks the new unique index on
        // Tag.text (16 tags) and v4 → v5 checks that each entry's folders fit a to-one (400 entries).
        #expect(explanation.steps[1].recordsTouched == 0)
        #expect(explanation.steps[2].recordsTouched == 16)
        #expect(explanation.steps[3].recordsTouched == 400)
        #expect(explanation.steps[1].recordCounts["Tag"]?.value == 16)
        #expect(explanation.steps[2].mapping?.entities.contains { $0.sourceName == "Note" && $0.isRemoved } == true)

        let text = explanation.description
        for line in [
            "The store is at v1; 4 steps to v5:",
            "Step 1: v1 → v2 (lightweight, metadata only, touches 0 records)",
            "Step 2: v2 → v3 (lightweight, metadata only, touches 0 records)",
            "headline: renamed from title",
            "body: dropped",
            "Tag (16 objects): renamed from Label",
            "mood: widened int16 → int32",
            "draft: made required, null → false",
            "caption: renamed from headline",
            "Note (0 objects): removed",
            "index on headline: built in the background after the step",
            "text: made unique (existing values checked)",
        ] {
            #expect(text.contains(line), "missing: \(line)\n\(text)")
        }
        // Explaining changes nothing: the store still needs its migration.
        #expect(try Store.requiresMigration(at: dir.store, plan: try JournalChain.plan()))
    }

    @Test func upToDateAndImpossibleSteps() throws {
        let dir = try TemporaryDirectory("explain-edges")
        try Self.makeStore(dir.store)
        let upToDate = try Store.explainMigration(at: dir.store, schema: try JournalChain.v1())
        #expect(upToDate.isUpToDate && upToDate.steps.isEmpty)
        #expect(upToDate.description.contains("nothing to migrate"))

        // A step that cannot be inferred is explained with its diagnostics instead of a mapping.
        var entities = try JournalChain.v2().entities
        entities[0].attributes.append(Attribute("category", .string))
        let impossible = try Schema("v2", entities: entities)
        let explanation = try Store.explainMigration(at: dir.store, schema: impossible)
        #expect(explanation.steps.count == 1)
        #expect(explanation.steps[0].mapping == nil)
        #expect(explanation.steps[0].diagnostics == [.requiredAttributeWithoutDefault(entity: "Entry", attribute: "category")])
        #expect(explanation.description.contains("Cannot be inferred"))
        #expect(explanation.description.contains("Entry.category"))
    }
}
