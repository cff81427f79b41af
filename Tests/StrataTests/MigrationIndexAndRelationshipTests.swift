import Foundation
import Strata
import StrataTestSupport
import Testing

/// Migrations that change indexes and relationships, run on data: indexed attributes widened (keys kept or
/// rebuilt), renamed, added with a default and indexed, removed; relationship pairs added, removed, renamed;
/// an entity removed together with the inverse relationship pointing at it. Every object, link and lookup
/// is checked against the oracle afterwards.
@Suite struct MigrationIndexAndRelationshipTests {
    static func v1() throws -> Schema {
        try Schema("v1") {
            Entity("Part") {
                Attribute("level", .int16).indexed()
                Attribute("serial", .int32).unique()
                Attribute("weight", .float).indexed()
                Attribute("label", .string).indexed()
                Attribute("obsolete", .string).indexed()
                Relationship("bin", to: "Bin", inverse: "parts")
                Relationship("supplier", to: "Supplier", inverse: "parts")
                Relationship("related", to: "Part", inverse: "related", toMany: true)
            }
            Entity("Bin") {
                Attribute("code", .string).unique()
                Relationship("parts", to: "Part", inverse: "bin", toMany: true)
            }
            Entity("Supplier") {
                Attribute("name", .string)
                Relationship("parts", to: "Part", inverse: "supplier", toMany: true)
            }
        }
    }

    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Part") {
                Attribute("level", .int64).indexed()            // widened; integer keys are kept
                Attribute("serial", .double).unique()            // integer → double: keys change, rebuilt and checked
                Attribute("weight", .double).indexed()           // float → double
                Attribute("name", .string).renamed(from: "label").indexed()
                Attribute("grade", .int16).defaultValue(.int16(3)).indexed()  // added, indexed, from its default
                Relationship("container", to: "Bin", inverse: "contents").renamed(from: "bin")
                Relationship("related", to: "Part", inverse: "related", toMany: true)
                Relationship("owner", to: "Owner", inverse: "parts")
            }
            Entity("Bin") {
                Attribute("code", .string).unique()
                Relationship("contents", to: "Part", inverse: "container", toMany: true).renamed(from: "parts")
            }
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("parts", to: "Part", inverse: "owner", toMany: true)
            }
        }
    }

    @Test func indexesAndRelationshipsFollowTheMigration() throws {
        let dir = try TemporaryDirectory("index-rel")
        let oracle = Oracle(schema: try Self.v1())
        var rng = SeededGenerator(seed: 31)
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v1())
            defer { store.close() }
            let log = try store.write { ctx -> OracleLog in
                var log: OracleLog = []
                let bins = try (0..<10).map { try ctx.insert("Bin", ["code": .string("bin \($0)")], log: &log) }
                let suppliers = try (0..<4).map { try ctx.insert("Supplier", ["name": .string("supplier \($0)")], log: &log) }
                var parts: [ObjectID] = []
                for i in 0..<500 {
                    let part = try ctx.insert("Part", [
                        "level": .int16(Int16(rng.int(20) - 10)), "serial": .int32(Int32(i * 7 - 1000)),
                        "weight": .float(Float(rng.int(100)) / 4), "label": .string("part \(rng.int(50))"),
                        "obsolete": .string("old \(i)"),
                    ], log: &log)
                    let bin = rng.pick(bins).id, supplier = rng.pick(suppliers).id
                    try ctx.link(part.id, of: "Part", "bin", to: bin)
                    try ctx.link(part.id, of: "Part", "supplier", to: supplier)
                    log.append { $0.link(part.id, "bin", bin); $0.link(part.id, "supplier", supplier) }
                    if let other = parts.randomElement(using: &rng), rng.chance(0.4) {
                        try ctx.link(part.id, of: "Part", "related", to: other)
                        log.append { $0.link(part.id, "related", other) }
                    }
                    parts.append(part.id)
                }
                return log
            }
            for apply in log { apply(oracle) }
        }
        var options = MigrationOptions()
        options.batchSize = 64
        let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: try MigrationPlan(schemas: [try Self.v1(), try Self.v2()]),
                                   configuration: StoreConfiguration(migration: options))
        defer { store.close() }
        oracle.mapAttribute("Part", "level") { .int64($0.int64Value!) }
        oracle.mapAttribute("Part", "serial") { .double(Double($0.int64Value!)) }
        oracle.mapAttribute("Part", "weight") { .double($0.doubleValue!) }
        oracle.renameAttribute("Part", from: "label", to: "name")
        oracle.removeAttribute("Part", "obsolete")
        oracle.addAttribute("Part", "grade", value: .int16(3))
        oracle.renameRelationship("Part", from: "bin", to: "container")
        oracle.renameRelationship("Bin", from: "parts", to: "contents")
        oracle.removeEntity("Supplier")
        oracle.removeRelationship("Part", "supplier")
        oracle.adopt(try Self.v2())
        #expect(try oracle.mismatches(in: store) == [])
        #expect(try store.verify().problems == [])
        try store.read { ctx throws in
            // Range queries through the migrated indexes agree with the values.
            let levels = try ctx.objects("Part").where("level", from: -3, to: 4).fetch()
            #expect(levels.allSatisfy { (-3..<4).contains($0["level"].int64Value!) })
            #expect(levels.count == oracle.ids(of: "Part").filter { (-3..<4).contains(oracle.objects[$0]!.values["level"]!.int64Value!) }.count)
            let serials = try ctx.objects("Part").where("serial", from: 0.0, to: 700.0).count()
            #expect(serials == 100)
            #expect(try ctx.objects("Part").where("grade", equals: 3).count() == 500)
            #expect(try ctx.objects("Part").where("weight", from: 10, to: nil).count()
                    == oracle.ids(of: "Part").filter { oracle.objects[$0]!.values["weight"]!.doubleValue! >= 10 }.count)
        }
        // The unique constraint holds on the rebuilt index.
        #expect(throws: StoreError.self) {
            try store.write { try $0.insert("Part", ["level": 1, "serial": -1000.0, "weight": 1.0, "name": "dup"]) }
        }
        // The new relationship pair works, and the removed entity is gone from the model.
        try store.write { ctx in
            let owner = try ctx.insert("Owner", ["name": "o"])
            let part = try #require(try ctx.objects("Part").first())
            try ctx.link(part, "owner", to: owner)
            #expect(try ctx.related(owner, "parts") == [part.id])
        }
        #expect(throws: StoreError.unknownEntity("Supplier")) { try store.read { try $0.count("Supplier") } }
    }
}
