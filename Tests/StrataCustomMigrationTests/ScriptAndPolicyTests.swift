import Foundation
import Strata
import StrataTestKit
import Testing

/// Intermediate models with scripts, and policies that fail.
@Suite struct ScriptAndPolicyTests {
    struct Point2D: Codable, Equatable { var x: Double; var y: Double }
    struct Point3D: Codable, Equatable { var x: Double; var y: Double; var z: Double }

    static let shapesV1: Schema = try! Schema("v1") {
        Entity("Shape") {
            Attribute("name", .string)
            Attribute("origin", .codable("Point2D"))
        }
    }
    static let shapesV2: Schema = try! Schema("v2") {
        Entity("Shape") {
            Attribute("name", .string)
            Attribute("origin", .codable("Point3D"))
            Attribute("label", .string)
        }
    }

    @Test func codableAttributeGainsAFieldAndARequiredAttributeIsComputed() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let url = try kit.makeStore(version: Self.shapesV1) { context in
            for i in 0..<3_000 {
                try context.insert("Shape", ["name": .string("shape \(i)"), "origin": try .encoding(Point2D(x: Double(i), y: -Double(i)))])
            }
        }
        // Without a script the change cannot be inferred, and nothing is written.
        let before = try Data(contentsOf: url.appendingPathComponent("data.mdb"))
        #expect(throws: MigrationError.self) {
            _ = try Store.open(at: url, schema: Self.shapesV2, plan: try MigrationPlan(schemas: [Self.shapesV1, Self.shapesV2]))
        }
        #expect(try Data(contentsOf: url.appendingPathComponent("data.mdb")) == before)

        let stage = MigrationStage.custom(from: "v1", to: "v2", scripts: [
            ObjectScript("Shape") { shape in
                let old = try shape.previousValue("origin").decode(Point2D.self)
                shape["origin"] = try .encoding(Point3D(x: old.x, y: old.y, z: 0))
                shape["label"] = .string((shape["name"].stringValue ?? "").uppercased())
            },
        ])
        let run = try kit.migrate(url, plan: try MigrationPlan(schemas: [Self.shapesV1, Self.shapesV2], stages: [stage]))
        try run.forEachPair(of: "Shape") { old, new in
            let shape = try #require(new)
            let p = try old["origin"].decode(Point2D.self)
            #expect(try shape["origin"].decode(Point3D.self) == Point3D(x: p.x, y: p.y, z: 0))
            #expect(shape["label"] == .string((old["name"].stringValue ?? "").uppercased()))
        }
        #expect(try run.after.verify().isClean)
    }

    @Test func aScriptThatLeavesARequiredValueNullFailsNamingTheObject() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let url = try kit.makeStore(version: Self.shapesV1) { context in
            for i in 0..<50 {
                try context.insert("Shape", ["name": .string("shape \(i)"), "origin": try .encoding(Point2D(x: 1, y: 2))])
            }
        }
        let stage = MigrationStage.custom(from: "v1", to: "v2", scripts: [
            ObjectScript("Shape") { shape in
                let old = try shape.previousValue("origin").decode(Point2D.self)
                shape["origin"] = try .encoding(Point3D(x: old.x, y: old.y, z: 0))
                // `label` forgotten.
            },
        ])
        #expect {
            _ = try kit.migrate(url, plan: try MigrationPlan(schemas: [Self.shapesV1, Self.shapesV2], stages: [stage]))
        } throws: { error in
            guard let error = error as? MigrationError, error.code == .stageFailed else { return false }
            return error.entity == "Shape" && error.objectID != nil && "\(error.underlying.map { "\($0)" } ?? "")".contains("label")
                && error.storeState == .at(version: "v1")
        }
        let store = try Store.open(at: url, schema: Self.shapesV1)
        defer { store.close() }
        try store.read { context throws in #expect(try context.count("Shape") == 50) }
    }

    struct Boom: Error, CustomStringConvertible { let index: Int; var description: String { "boom at \(index)" } }

    @Test(arguments: [0, 1, 999, 1_000, 1_001, 2_499])
    func aPolicyThatThrowsAtObjectKLeavesTheStoreIntact(k: Int) throws {
        let v1 = try Schema("v1") { Entity("Item") { Attribute("n", .int64).indexed(); Attribute("text", .string) } }
        let v2 = try Schema("v2") { Entity("Item") { Attribute("n", .int64).indexed(); Attribute("words", .int64) } }
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let url = try kit.makeStore(version: v1) { context in
            for i in 0..<2_500 { try context.insert("Item", ["n": .int64(Int64(i)), "text": .string("item \(i) has words")]) }
        }
        let snapshot = try kit.migrate(url, plan: try MigrationPlan(schemas: [v1])).before
        let stage = MigrationStage.custom(from: "v1", to: "v2", entityMappings: [
            .transform("Item", instances: { item, context in
                if item["n"] == .int64(Int64(k)) { throw Boom(index: k) }
                var values = try context.inferredValues(for: item)
                values["words"] = .int64(Int64(item["text"].stringValue?.split(separator: " ").count ?? 0))
                try context.insert("Item", values, keepingSourceID: true)
            }),
        ])
        var options = MigrationOptions()
        options.batchSize = 1_000
        do {
            _ = try Store.open(at: url, schema: v2, plan: try MigrationPlan(schemas: [v1, v2], stages: [stage]),
                               configuration: StoreConfiguration(migration: options))
            Issue.record("the migration should fail")
        } catch let error as MigrationError where error.code == .stageFailed {
            #expect((error.sourceVersion, error.destinationVersion, error.entity) == ("v1", "v2", "Item"))
            #expect("\(error.underlying.map { "\($0)" } ?? "")" == "boom at \(k)")
            #expect(error.storeState == .at(version: "v1"))
            let failed = try #require(error.objectID)
            try snapshot.read { context throws in #expect(try context.object(failed, of: "Item")?["n"] == .int64(Int64(k))) }
        }
        // Intact at v1: every object equal to the snapshot taken before, nothing else.
        let store = try Store.open(at: url, schema: v1)
        defer { store.close() }
        try snapshot.read { old in
            try store.read { current in
                #expect(try current.count("Item") == 2_500)
                try old.objects("Item").forEach { item throws in
                    #expect(try current.object(item.id, of: "Item") == item)
                }
            }
        }
        #expect(try store.verify().isClean)
        #expect(try store.info().migration == nil)
    }
}
