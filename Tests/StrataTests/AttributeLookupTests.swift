import Foundation
import Strata
import Testing

/// Attributes found by name through the dynamic API: literals, names built at run time, names that share their
/// first eight bytes, long names, and entities with more attributes than the lookup's search in order covers.
@Suite struct AttributeLookupTests {
    /// `attributeOne`/`attributeTwo` agree in their first eight bytes (the first word of a small `String`);
    /// `aVeryLongAttributeNameNumberOne`/`…Two` are stored out of line.
    static func schema(extra: Int) throws -> Schema {
        try Schema("v1") {
            Entity("Thing") {
                Attribute("attributeOne", .int64)
                Attribute("attributeTwo", .int64)
                Attribute("aVeryLongAttributeNameNumberOne", .string)
                Attribute("aVeryLongAttributeNameNumberTwo", .string)
                for i in 0..<extra { Attribute("extra\(i)", .int64, isOptional: true) }
            }
        }
    }

    @Test("every spelling of a name finds its own attribute", arguments: [0, 40])
    func namesFindTheirOwnAttributes(extra: Int) throws {
        let store = try Store.temporary(schema: try Self.schema(extra: extra))
        defer { store.close() }
        // Names made at run time: the same characters as the literals, in other storage.
        let built = { (parts: [String]) in parts.joined() }
        let one = built(["attribute", "One"]), two = built(["attribute", "Two"])
        let longOne = built(["aVeryLong", "AttributeName", "NumberOne"]), longTwo = built(["aVeryLong", "AttributeName", "NumberTwo"])
        let id = try store.write { ctx in
            var thing = try ctx.insert("Thing", ["attributeOne": 1, "attributeTwo": 2,
                                                 "aVeryLongAttributeNameNumberOne": "first", "aVeryLongAttributeNameNumberTwo": "second"])
            if extra > 0 { thing["extra\(extra - 1)"] = 99 }
            try ctx.update(thing)
            return thing.id
        }
        try store.read { ctx in
            let thing = try #require(try ctx.object(id, of: "Thing"))
            #expect(thing["attributeOne"] == 1 && thing[one] == 1)
            #expect(thing["attributeTwo"] == 2 && thing[two] == 2)
            #expect(thing["aVeryLongAttributeNameNumberOne"] == "first" && thing[longOne] == "first")
            #expect(thing["aVeryLongAttributeNameNumberTwo"] == "second" && thing[longTwo] == "second")
            if extra > 0 { #expect(thing["extra\(extra - 1)"] == 99) }
            #expect(thing["attributeThree"] == .null)
            for name in thing.attributeNames { _ = try thing.value(for: name) }
        }
    }
}
