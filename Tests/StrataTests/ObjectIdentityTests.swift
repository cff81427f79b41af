import Foundation
import Strata
import StrataTestSupport
import Testing

/// Object identifiers: unique across entities, increasing, never reused (not even after the newest object
/// is deleted and the store reopened); inserting under a given identifier; and the dynamic object's errors.
@Suite struct ObjectIdentityTests {
    @Test func identifiersAreUniqueIncreasingAndNeverReused() throws {
        let dir = try TemporaryDirectory("ids")
        let schema = try TestSchemas.library()
        var all: [ObjectID] = []
        do {
            let store = try Store.open(at: dir.store, schema: schema)
            defer { store.close() }
            all = try store.write { ctx in
                try (0..<50).flatMap { i in
                    [try ctx.insert("Tag", ["name": .string("t\(i)")]).id,
                     try ctx.insert("Author", ["name": .string("a\(i)"), "born": .date(.now)]).id]
                }
            }
            #expect(all == all.sorted())
            #expect(Set(all).count == all.count)
            // Delete the newest object.
            try store.write { try $0.delete(all.last!, of: "Author") }
        }
        let store = try Store.open(at: dir.store, schema: schema)
        defer { store.close() }
        let next = try store.write { try $0.insert("Tag", ["name": "after reopen"]).id }
        #expect(next > all.last!)
        #expect(try store.read { try $0.object(all.last!, of: "Author") } == nil)
    }

    @Test func insertingUnderAGivenIdentifier() throws {
        let store = try Store.temporary(schema: try TestSchemas.library())
        defer { store.close() }
        let first = try store.write { try $0.insert("Tag", ["name": "first"]).id }
        let chosen = ObjectID(rawValue: first.rawValue + 1000)
        let imported = try store.write { try $0.insert("Tag", id: chosen, ["name": "imported"]) }
        #expect(imported.id == chosen)
        #expect(try store.read { try $0.object(chosen, of: "Tag")?["name"] } == "imported")
        // Identifiers allocated later are greater.
        let later = try store.write { try $0.insert("Tag", ["name": "later"]).id }
        #expect(later > chosen)
        // A taken identifier is refused, naming it.
        #expect(throws: StoreError.uniqueConstraintViolation(entity: "Tag", attribute: "id", value: chosen.description, existing: chosen)) {
            try store.write { try $0.insert("Tag", id: chosen, ["name": "again"]) }
        }
        #expect(try store.verify().problems == [])
    }

    @Test func dynamicObjectErrors() throws {
        let store = try Store.temporary(schema: try TestSchemas.library())
        defer { store.close() }
        let author = try store.write { try $0.insert("Author", ["name": "x", "born": .date(.now)]) }
        var misspelt = author
        misspelt["nmae"] = "y"
        #expect(misspelt["nmae"] == .null)
        #expect(throws: StoreError.unknownAttribute(entity: "Author", name: "nmae")) { try store.write { try $0.update(misspelt) } }
        #expect(throws: StoreError.unknownAttribute(entity: "Author", name: "nmae")) { try author.value(for: "nmae") }
        var wrongType = author
        wrongType["rating"] = "high"
        #expect(throws: StoreError.invalidValue(entity: "Author", attribute: "rating", expected: "double", actual: "string")) {
            try store.write { try $0.update(wrongType) }
        }
        var cleared = author
        cleared["name"] = nil
        #expect(throws: StoreError.missingRequiredValue(entity: "Author", attribute: "name")) { try store.write { try $0.update(cleared) } }
        // Literals convert to the attribute's type on assignment.
        var literal = author
        literal["rating"] = 4
        #expect(literal["rating"] == .double(4))
        try store.write { try $0.update(literal) }
        // Deleted objects cannot be updated.
        try store.write { try $0.delete(author) }
        #expect(throws: StoreError.objectNotFound(entity: "Author", id: author.id)) { try store.write { try $0.update(literal) } }
        // Ordered values: one per attribute, in declaration order.
        #expect(throws: StoreError.self) { try store.write { try $0.insert("Tag", orderedValues: []) } }
        let id = try store.write { try $0.insert("Tag", orderedValues: ["ordered"]) }
        #expect(try store.read { try $0.object(id, of: "Tag")?["name"] } == "ordered")
        #expect(try store.read { try $0.objects("Author").count() } == 0)
    }

    @Test func writesDuringIterationOfTheSameEntity() throws {
        let store = try Store.temporary(schema: try TestSchemas.library())
        defer { store.close() }
        let ids = try store.write { ctx in try (0..<300).map { try ctx.insert("Tag", ["name": .string("tag \($0)")]).id } }
        // Deleting every other object while a cursor walks the entity, and updating the others.
        let visited = try store.write { ctx -> Int in
            var n = 0
            try ctx.objects("Tag").forEach { tag in
                n += 1
                if tag.id.rawValue % 2 == 0 {
                    try ctx.delete(tag)
                } else {
                    var t = tag
                    t["name"] = .string((tag["name"].stringValue ?? "") + String(repeating: " longer", count: 20))
                    try ctx.update(t)
                }
            }
            return n
        }
        #expect(visited == 300)
        let remaining = try store.read { try $0.objects("Tag").fetch() }
        #expect(remaining.map(\.id) == ids.filter { $0.rawValue % 2 == 1 })
        #expect(remaining.allSatisfy { $0["name"].stringValue!.hasSuffix(" longer") })
        #expect(try store.verify().problems == [])
    }
}
