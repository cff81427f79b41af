import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A background sweep stopped part-way through an entity, then another metadata-only migration of that
/// entity: the records the sweep had already rewritten are in a layout that is old again (and a new index
/// covers none of them), so the next sweep must start the entity over — not resume after its old cursor and
/// declare the entity done with records it never visited.
@Suite struct SweepAcrossMigrationsTests {
    static func v1() throws -> Schema {
        try Schema("v1") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int16) } }
    }
    static func v2() throws -> Schema {
        try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int32) } }
    }
    static func v3() throws -> Schema {
        try Schema("v3") { Entity("Item") { Attribute("n", .int64).indexed(); Attribute("x", .int64) } }
    }

    static func configuration() -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        return configuration
    }

    /// A store left with records in an older layout (its sweep not run) and no maintenance record (as a store whose
    /// maintenance record was lost), reopened by the app at its model: the open's common path binds the model, and the
    /// catalog's older layouts alone make the handle start the background sweep, which rewrites every record.
    @Test func aStoreReopenedWithOldLayoutsIsSweptInTheBackground() throws {
        let dir = try TemporaryDirectory("sweep-reopen")
        let count = 50
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v1(), configuration: Self.configuration())
            defer { store.close() }
            try store.write { ctx in
                for i in 1...count { _ = try ctx.insert("Item", ["n": .int64(Int64(i)), "x": .int16(Int16(i))]) }
            }
        }
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: try MigrationPlan(schemas: [try Self.v1(), try Self.v2()]),
                                       configuration: Self.configuration())
            defer { store.close() }
            try store.environment.write { txn in try store.model.meta.delete(.maintenance, in: txn) }
        }
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = true
        let store = try Store.open(at: dir.store, schema: try Self.v2(), configuration: configuration)
        defer { store.close() }
        #expect(store.model.needsMaintenance)
        // The sweep runs on its own thread: wait for it (bounded), without running any maintenance here.
        var waited = 0
        while try !store.maintenanceStatus().isComplete, waited < 3000 {
            Thread.sleep(forTimeInterval: 0.01)
            waited += 1
        }
        #expect(try store.maintenanceStatus().isComplete)
        #expect(try store.read { ctx in try ctx.objects("Item").fetch().map { $0["x"] } }.count == count)
    }

    @Test func aMigrationDuringTheSweepRestartsIt() throws {
        let dir = try TemporaryDirectory("sweep-across")
        let count = 100
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v1(), configuration: Self.configuration())
            defer { store.close() }
            try store.write { ctx in
                for i in 1...count { _ = try ctx.insert("Item", ["n": .int64(Int64(i)), "x": .int16(Int16(i))]) }
            }
        }
        do {
            // v1 → v2 (a widening: metadata only), then one sweep batch: 40 records rewritten, the cursor after them.
            let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: try MigrationPlan(schemas: [try Self.v1(), try Self.v2()]),
                                       configuration: Self.configuration())
            defer { store.close() }
            #expect(try store.maintenanceStatus().oldLayoutRecords == count)
            let batch = try MaintenanceBatch.run(model: store.model, environment: store.environment, limit: 40, seconds: 60)
            #expect(batch.rewritten == 40 && batch.remainingOldRecords == count - 40)
        }
        // v2 → v3 (another widening and a new index on n: metadata only); then the sweep runs to its end.
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), try Self.v3()])
        let store = try Store.open(at: dir.store, schema: try Self.v3(), plan: plan, configuration: Self.configuration())
        defer { store.close() }
        #expect(try store.maintenanceStatus().oldLayoutRecords == count, "40 records in v2's layout, 60 in v1's")
        let compacted = try store.performMaintenance(batchSize: 25)
        #expect(compacted.rewritten == count, "every record is rewritten into v3's layout: \(compacted)")
        #expect(compacted.indexed == count, "the index on n covers every record: \(compacted)")
        #expect(try store.maintenanceStatus().isComplete)
        #expect(try store.info().entities.first { $0.name == "Item" }?.layoutCount == 1)
        // Every value, from its own input; the index finds every record.
        try store.read { ctx in
            let items = try ctx.objects("Item").fetch()
            #expect(items.count == count)
            for item in items {
                let n = try #require(item["n"].int64Value)
                #expect(item["x"] == .int64(n), "item \(n)")
            }
            for n in [1, 20, 40, 41, 100] {
                #expect(try ctx.objects("Item").where("n", equals: .int64(Int64(n))).count() == 1, "the index finds n = \(n)")
            }
        }
        #expect(try store.verify().isClean)
    }
}
