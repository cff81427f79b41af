import Foundation
import Strata
import StrataTestSupport
import Testing

/// Values that a metadata-only step supplies through projections — an added attribute's default, a null
/// replaced by the default of an attribute made required — survive a later rewrite step exactly (converted
/// when widened), and later changes of those defaults never reach objects that already had them.
@Suite struct MigrationProjectionTests {
    static func v1() throws -> Schema {
        try Schema("v1") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int16).optional() } }
    }
    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Item") {
                Attribute("n", .int64)
                Attribute("x", .int16).defaultValue(.int16(3))          // made required: nulls read 3
                Attribute("y", .int16).defaultValue(.int16(7))          // added: existing objects read 7
                Attribute("z", .float).optional()                       // added optional: null
            }
        }
    }
    static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Item") {
                Attribute("n", .int64)
                Attribute("ex", .int64).renamed(from: "x").defaultValue(.int64(300))   // widened and renamed
                Attribute("y", .int32).defaultValue(.int32(700))                       // widened, default changed
                Attribute("z", .double).defaultValue(.double(-1))                      // widened, made required
            }
        }
    }
    static func v4() throws -> Schema {
        try Schema("v4") {
            Entity("Item") {
                Attribute("n", .int64)
                Attribute("ex", .int64).defaultValue(.int64(4000))
                Attribute("y", .int32).defaultValue(.int32(7000))
                Attribute("z", .double).defaultValue(.double(-2))
                Attribute("w", .string).defaultValue("v4")
            }
        }
    }

    @Test func projectedValuesSurviveRewritesAndLaterDefaults() throws {
        let dir = try TemporaryDirectory("projection")
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), try Self.v3(), try Self.v4()])
        // Objects written at each version, with the values each should read at v4.
        var expected: [Int64: [String: Value]] = [:]
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v1())
            defer { store.close() }
            try store.write { ctx in
                for i in 0..<40 {
                    let x: Value = i % 2 == 0 ? .null : .int16(Int16(i))
                    try ctx.insert("Item", ["n": .int64(Int64(i)), "x": x])
                    expected[Int64(i)] = ["ex": .int64(i % 2 == 0 ? 3 : Int64(i)), "y": .int64(7), "z": .double(-1), "w": "v4"]
                }
            }
        }
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: try MigrationPlan(schemas: [try Self.v1(), try Self.v2()]))
            defer { store.close() }
            try store.write { ctx in
                for i in 40..<60 {
                    var values: [String: Value] = ["n": .int64(Int64(i))]
                    if i % 3 == 0 { values["y"] = .int16(Int16(-i)) }
                    if i % 4 == 0 { values["z"] = .float(0.5) }
                    try ctx.insert("Item", values)
                    expected[Int64(i)] = ["ex": .int64(3), "y": .int64(i % 3 == 0 ? Int64(-i) : 7),
                                          "z": .double(i % 4 == 0 ? 0.5 : -1), "w": "v4"]
                }
            }
        }
        do {
            var options = MigrationOptions()
            options.batchSize = 7
            let store = try Store.open(at: dir.store, schema: try Self.v3(), plan: try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), try Self.v3()]),
                                       configuration: StoreConfiguration(migration: options))
            defer { store.close() }
            try store.write { ctx in
                for i in 60..<70 {
                    try ctx.insert("Item", ["n": .int64(Int64(i))])
                    expected[Int64(i)] = ["ex": .int64(300), "y": .int64(700), "z": .double(-1), "w": "v4"]
                }
            }
        }
        let store = try Store.open(at: dir.store, schema: try Self.v4(), plan: plan)
        defer { store.close() }
        let items = try store.read { try $0.objects("Item").fetch() }
        #expect(items.count == 70)
        for item in items {
            let n = item["n"].int64Value!
            let want = try #require(expected[n])
            #expect(item["ex"] == want["ex"], "item \(n): ex")
            #expect(item["y"] == .int32(Int32(want["y"]!.int64Value!)), "item \(n): y")
            #expect(item["z"] == want["z"], "item \(n): z")
            #expect(item["w"] == want["w"], "item \(n): w")
        }
        #expect(try store.verify().problems == [])
    }
}
