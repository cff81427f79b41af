import Foundation
import StrataModels
import StrataTestSupport
import Testing

/// Typed inserts of several model types in one transaction, interleaved with the dynamic API: each value goes
/// into its own entity with its own indexes, whatever the context looked up just before.
@Suite struct TypedInsertTests {
    @Test("typed inserts of different entities interleaved with dynamic ones land in their own entities")
    func interleavedEntities() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        let ids = try store.write { ctx -> [(ObjectID, ObjectID, ObjectID, ObjectID)] in
            try (0..<20).map { i in
                let owner = try ctx.insert(Library.Owner(name: "owner \(i)"))
                // A dynamic insert names another entity in between: the next typed insert of the same type as
                // before must not take the entity named last.
                let dynamic = try ctx.insert("Tag", ["label": .string("dynamic \(i)")]).id
                let second = try ctx.insert(Library.Owner(name: "second \(i)"))
                let tag = try ctx.insert(Library.Tag(label: "tag \(i)"))
                return (owner, tag, dynamic, second)
            }
        }
        try store.read { ctx in
            #expect(try ctx.count(Library.Owner.self) == 40)
            #expect(try ctx.count(Library.Tag.self) == 40)
            for (i, (owner, tag, dynamic, second)) in ids.enumerated() {
                #expect(try ctx.fetch(Library.Owner.self, id: owner)?.name == "owner \(i)")
                #expect(try ctx.fetch(Library.Owner.self, id: second)?.name == "second \(i)")
                #expect(try ctx.fetch(Library.Tag.self, id: tag)?.label == "tag \(i)")
                #expect(try ctx.fetch(Library.Tag.self, id: dynamic)?.label == "dynamic \(i)")
                #expect(try ctx.fetch(Library.Owner.self, id: tag) == nil)
            }
            // The indexed label found through its index.
            let found = try ctx.objects(Library.Tag.self).filter(\.label == "tag 7").fetch()
            #expect(found.map(\.objectID) == [ids[7].1])
        }
    }
}
