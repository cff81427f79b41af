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
        // Shape i was written with origin (i, -i): the script made it (i, -i, 0), labelled "SHAPE i".
        let shapes = try run.after.read { try $0.objects("Shape").fetch() }
        #expect(shapes.count == 3_000)
        var seen = Set<String>()
        for shape in shapes {
            let name = try #require(shape["name"].stringValue)
            let i = try #require(name.hasPrefix("shape ") ? Int(name.dropFirst(6)) : nil, "\(name)")
            seen.insert(name)
            #expect(try shape["origin"].decode(Point3D.self) == Point3D(x: Double(i), y: -Double(i), z: 0))
            #expect(shape["label"] == .string("SHAPE \(i)"))
        }
        #expect(seen.count == 3_000)
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
        var failedID: ObjectID? = nil
        do {
            _ = try Store.open(at: url, schema: v2, plan: try MigrationPlan(schemas: [v1, v2], stages: [stage]),
                               configuration: StoreConfiguration(migration: options))
            Issue.record("the migration should fail")
        } catch let error as MigrationError where error.code == .stageFailed {
            #expect((error.sourceVersion, error.destinationVersion, error.entity) == ("v1", "v2", "Item"))
            #expect("\(error.underlying.map { "\($0)" } ?? "")" == "boom at \(k)")
            #expect(error.storeState == .at(version: "v1"))
            failedID = error.objectID
        }
        // Intact at v1: item i as it was written (n = i, its text), nothing else; the error named item k.
        let store = try Store.open(at: url, schema: v1)
        defer { store.close() }
        try store.read { current in
            let items = try current.objects("Item").fetch()
            #expect(items.count == 2_500)
            #expect(Set(items.compactMap { $0["n"].int64Value }) == Set((0..<2_500).map(Int64.init)))
            for item in items {
                let n = try #require(item["n"].int64Value)
                #expect(item["text"] == .string("item \(n) has words"), "\(item)")
            }
            let failed = try #require(failedID, "the error named no object")
            #expect(try current.object(failed, of: "Item")?["n"] == .int64(Int64(k)))
        }
        #expect(try store.verify().isClean)
        #expect(try store.info().migration == nil)
    }
}
