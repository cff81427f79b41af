import Foundation
import StrataModels
import StrataTestSupport
import Testing

/// The change history with macro models: changes of a model type, updates asked by key path, tombstones read by
/// key path, and `@Field(.preserveValueOnDeletion)` giving the same schema as the DSL.
@Suite struct TypedHistoryTests {
    enum Journal: SchemaVersion {
        static let versionIdentifier = "j1"
        static let models: [any EntityModel.Type] = [Entry.self]

        @Entity struct Entry {
            var title: String
            var body: String = ""
            @Field(.preserveValueOnDeletion) var serverID: String?
            @Field(.preserveValueOnDeletion) var revision: Int = 0
        }
    }

    @Test func theMacroMarksPreservedAttributesAsTheDSLDoes() throws {
        let dsl = try Schema("j1") {
            Entity("Entry") {
                Attribute("title", .string)
                Attribute("body", .string).defaultValue("")
                Attribute("serverID", .string).optional().preservedOnDeletion()
                Attribute("revision", .int64).defaultValue(0).preservedOnDeletion()
            }
        }
        let macro = try Schema(Journal.self)
        #expect(macro.fingerprint == dsl.fingerprint)
        #expect(macro.entities[0].attributes.map(\.preservesValueOnDeletion) == [false, false, true, true])
        // Not part of the version hash: it changes no stored record.
        var plain = dsl.entities[0]
        plain.attributes = plain.attributes.map { var a = $0; a.preservesValueOnDeletion = false; return a }
        #expect(VersionHash.of(plain) == VersionHash.of(dsl.entities[0]))
    }

    @Test func changesOfAModelTypeByKeyPath() throws {
        var configuration = StoreConfiguration()
        configuration.history = .enabled(.unlimited)
        let store = try Store.temporary(schema: try Schema(Journal.self), configuration: configuration)
        defer { store.close() }
        let start = try store.currentHistoryToken()
        var entry = Journal.Entry(title: "draft", serverID: "srv-1", revision: 3)
        entry.objectID = try store.write { [entry] in try $0.insert(entry) }
        let id = try #require(entry.objectID)
        entry.title = "final"
        try store.write { [entry] in try $0.update(entry) }
        try store.write { try $0.delete(id, of: "Entry") }

        let transactions = try store.fetchHistory(after: start).transactions
        try #require(transactions.count == 3)
        #expect(transactions[0].changes(of: Journal.Entry.self)?.inserted == [id])
        let update = try #require(transactions[1].changes(of: Journal.Entry.self)?.updated.first)
        #expect(update.id == id)
        #expect(update.changed(\.title))
        #expect(!update.changed(\.body) && !update.changed(\.revision))
        let deletion = try #require(transactions[2].changes(of: Journal.Entry.self)?.deleted.first)
        #expect(deletion.id == id)
        #expect(deletion[\.serverID] == "srv-1")
        #expect(deletion[\.revision] == 3)
        #expect(deletion[\.title] == nil, "title is not preserved")
    }
}
