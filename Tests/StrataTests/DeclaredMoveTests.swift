import Foundation
import Strata
import StrataTestSupport
import Testing

/// Declared moves merge entities: cars and trucks become vehicles with a constant kind, keeping their identifiers,
/// beside an extract of the same stage and an entity the stage does not map (inferred).
@Suite struct DeclaredMoveTests {
    static func v1() throws -> Schema {
        try Schema("m1") {
            Entity("Car") { Attribute("plate", .string); Attribute("seats", .int32) }
            Entity("Truck") { Attribute("plate", .string); Attribute("load", .double).optional() }
            Entity("Garage") { Attribute("name", .string) }
        }
    }

    static func v2() throws -> Schema {
        try Schema("m2") {
            Entity("Vehicle") {
                Attribute("plate", .string).indexed()
                Attribute("kind", .string)
                Attribute("seats", .int64).defaultValue(.int64(2))
                Attribute("load", .double).optional()
            }
            Entity("Garage") { Attribute("title", .string).renamed(from: "name") }
        }
    }

    @Test(arguments: [1, 4, 100])
    func carsAndTrucksBecomeVehicles(batch: Int) throws {
        let dir = try TemporaryDirectory("declared-move")
        var expected: [UInt64: String] = [:]
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v1())
            defer { store.close() }
            try store.write { ctx in
                for i in 0..<30 {
                    if i % 3 == 0 {
                        let t = try ctx.insert("Truck", ["plate": .string("T\(i)"), "load": i % 2 == 0 ? .double(Double(i)) : .null])
                        expected[t.id.rawValue] = "T\(i) truck seats=2 load=\(i % 2 == 0 ? "\(Double(i))" : "nil")"
                    } else {
                        let c = try ctx.insert("Car", ["plate": .string("C\(i)"), "seats": .int32(Int32(i))])
                        expected[c.id.rawValue] = "C\(i) car seats=\(i) load=nil"
                    }
                    if i % 10 == 0 { try ctx.insert("Garage", ["name": .string("g\(i)")]) }
                }
            }
        }
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2()], stages: [.custom(from: "m1", to: "m2", entityMappings: [
            .move("Car", into: "Vehicle", values: ["kind": .constant("car")]),
            .move("Truck", into: "Vehicle", values: ["kind": .constant("truck")]),
        ])])
        let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: plan,
                                   configuration: DeclaredFixtures.configuration(batchSize: batch))
        defer { store.close() }
        try store.read { ctx in
            var got: [UInt64: String] = [:]
            for v in try ctx.objects("Vehicle").fetch() {
                got[v.id.rawValue] = "\(v["plate"].stringValue ?? "?") \(v["kind"].stringValue ?? "?") seats=\(v["seats"].int64Value ?? -1) load=\(v["load"].doubleValue.map { "\($0)" } ?? "nil")"
            }
            #expect(got == expected)
            #expect(try ctx.objects("Vehicle").where("plate", equals: "T3").ids().count == 1)
            #expect(Set(try ctx.objects("Garage").fetch().compactMap { $0["title"].stringValue }) == ["g0", "g10", "g20"])
        }
        #expect(try store.verify().problems.isEmpty)
    }
}
