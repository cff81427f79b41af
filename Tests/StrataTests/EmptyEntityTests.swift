import Foundation
import Strata
import StrataTestSupport
import Testing

/// An entity without attributes (only relationships) is a valid model: its objects are stored, read and scanned.
@Suite struct EmptyEntityTests {
    @Test func objectsOfAnEntityWithoutAttributesReadBack() throws {
        let dir = try TemporaryDirectory("empty-entity")
        let schema = try Schema("e1") {
            Entity("Box") { Relationship("items", to: "Item", inverse: "box", toMany: true) }
            Entity("Item") { Attribute("n", .int64); Relationship("box", to: "Box", inverse: "items") }
        }
        let store = try Store.open(at: dir.store, schema: schema)
        defer { store.close() }
        let box = try store.write { ctx in
            let box = try ctx.insert("Box")
            for n in 0..<3 { try ctx.link(try ctx.insert("Item", ["n": .int64(Int64(n))]), "box", to: box) }
            return box.id
        }
        try store.read { ctx in
            let boxes = try ctx.objects("Box").fetch()
            #expect(boxes.map(\.id) == [box])
            #expect(Set(try ctx.relatedObjects(boxes[0], "items").compactMap { $0["n"].int64Value }) == [0, 1, 2])
        }
        #expect(try store.verify().problems.isEmpty)
    }
}
