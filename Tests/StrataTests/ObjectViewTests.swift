import Foundation
import Strata
import StrataTestSupport
import Testing

/// Zero-copy record views read the same values as objects, through every layout and projection.
@Suite struct ObjectViewTests {
    static let v1: Schema = try! Schema("v1") {
        Entity("Item") {
            Attribute("code", .uuid)
            Attribute("label", .string)
            Attribute("note", .string).optional()
            Attribute("count", .int16)
            Attribute("when", .date)
            Attribute("blob", .data).optional()
        }
    }
    static let v2: Schema = try! Schema("v2") {
        Entity("Item") {
            Attribute("code", .uuid)
            Attribute("title", .string).renamed(from: "label")
            Attribute("note", .string).defaultValue("none")
            Attribute("count", .int16)
            Attribute("when", .date)
            Attribute("blob", .data).optional()
            Attribute("flag", .bool).defaultValue(true)
        }
    }

    @Test func viewsReadWhatObjectsRead() throws {
        let dir = try TemporaryDirectory()
        do {
            let store = try Store.open(at: dir.store, schema: Self.v1)
            defer { store.close() }
            try store.write { context in
                for i in 0..<300 {
                    try context.insert("Item", [
                        "code": .uuid(UUID()), "label": .string("item \(i) ✓"), "note": i % 3 == 0 ? .null : .string("n\(i)"),
                        "count": .int16(Int16(i - 150)), "when": .date(Date(timeIntervalSinceReferenceDate: Double(i) * 1.5)),
                        "blob": i % 2 == 0 ? .data(Data(repeating: UInt8(i % 256), count: i)) : .null,
                    ])
                }
            }
        }
        // Metadata-only migration: old records are read through projections (rename, null → default, constant).
        let store = try Store.open(at: dir.store, schema: Self.v2, plan: try MigrationPlan(schemas: [Self.v1, Self.v2]))
        defer { store.close() }
        _ = try store.write { context in
            try context.insert("Item", ["code": .uuid(UUID()), "title": "new", "count": 1, "when": .date(.now), "flag": false])
        }
        try store.read { context throws in
            let objects = try context.objects("Item").fetch()
            var seen = 0
            try context.forEachView(of: "Item") { view throws in
                let object = objects[seen]
                #expect(view.id == object.id)
                #expect(view.entityName == "Item")
                for name in object.attributeNames {
                    #expect(try view.value(name) == object[name], "\(name) of \(object.id)")
                }
                #expect(try view.uuid("code") == object["code"].uuidValue)
                #expect(try view.int64("count") == object["count"].int64Value)
                #expect(try view.date("when") == object["when"].dateValue)
                #expect(try view.bool("flag") == object["flag"].boolValue)
                #expect(try view.withBytes(of: "title") { String(decoding: $0, as: UTF8.self) } == object["title"].stringValue)
                #expect(try view.withBytes(of: "note") { String(decoding: $0, as: UTF8.self) } == object["note"].stringValue)
                #expect(try view.withBytes(of: "blob") { Data($0) } == object["blob"].dataValue)
                #expect(try view.object() == object)
                seen += 1
            }
            #expect(seen == 301)
            #expect(objects.first?["note"] == "none", "a null of the old layout reads the default")
        }
    }

    @Test func misuseIsATypedError() throws {
        let store = try Store.temporary(schema: Self.v1)
        defer { store.close() }
        _ = try store.write { try $0.insert("Item", ["code": .uuid(UUID()), "label": "a", "count": 1, "when": .date(.now)]) }
        var kept: ObjectView?
        try store.read { context throws in
            try context.forEachView(of: "Item") { view throws in
                kept = view
                #expect(throws: StoreError.unknownAttribute(entity: "Item", name: "nope")) { try view.value("nope") }
                #expect(throws: StoreError.self) { try view.int64("label") }
                #expect(throws: StoreError.self) { try view.withBytes(of: "count") { $0.count } }
                #expect(try view.withBytes(of: "blob") { $0.count } == nil)
            }
        }
        let view = try #require(kept)
        #expect(throws: StoreError.transactionEnded) { try view.value("label") }
    }

    @Test func aDamagedRecordIsReportedBeforeTheViewIsHandedOver() throws {
        let dir = try TemporaryDirectory()
        do {
            let store = try Store.open(at: dir.store, schema: Self.v1)
            defer { store.close() }
            _ = try store.write { context in
                try context.insert("Item", ["code": .uuid(UUID()), "label": "UNIQUE-VIEW-MARKER", "count": 1, "when": .date(.now)])
            }
        }
        #expect(try StoreFileBytes.damage("UNIQUE-VIEW-MARKER", in: dir.store) == 1)
        let store = try Store.open(at: dir.store, schema: Self.v1)
        defer { store.close() }
        #expect(throws: StoreError.self) {
            try store.read { context in try context.forEachView(of: "Item") { _ in } }
        }
    }
}
