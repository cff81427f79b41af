import Foundation
import Strata
import StrataTestSupport
import Testing

/// Histories the random model evolution (Evolution/) found wrong, each reduced to its shrunk form.
@Suite struct EvolutionRegressionTests {
    /// An indexed optional attribute made required with a default: the objects whose value was null read the
    /// default, and a query on the default finds them through the index (nulls are not indexed, so the step
    /// must index them anew) — before and after the sweep.
    @Test func aNullMadeRequiredIsFoundByItsIndexUnderTheDefault() throws {
        let dir = try TemporaryDirectory("null-default-index")
        let v1 = try Schema("v1") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int64).optional().indexed() } }
        let v2 = try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int64).indexed().defaultValue(.int64(7)) } }
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try store.write { ctx in
                for i in 0..<10 { try ctx.insert("Item", ["n": .int64(Int64(i)), "x": i % 2 == 0 ? .null : .int64(Int64(100 + i))]) }
            }
        }
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        let store = try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2]), configuration: configuration)
        defer { store.close() }
        func found() throws -> Set<Int64> {
            try store.read { Set(try $0.objects("Item").where("x", equals: .int64(7)).fetch().compactMap { $0["n"].int64Value }) }
        }
        #expect(try found() == [0, 2, 4, 6, 8])
        #expect(try store.read { try $0.objects("Item").where("x", equals: .int64(103)).fetch().map { $0["n"] } } == [3])
        _ = try store.performMaintenance()
        #expect(try found() == [0, 2, 4, 6, 8])
        #expect(try store.verify().isClean)
    }
}
