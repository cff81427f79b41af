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

    /// A widening followed by a step that makes the widened attribute required with a default, migrated in one
    /// go: the objects whose value was null read the default (the second step's default was dropped when it was
    /// composed with the widening's projection).
    @Test func aWidenedAttributeMadeRequiredLaterReadsItsDefault() throws {
        let dir = try TemporaryDirectory("widen-then-default")
        let v1 = try Schema("v1") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int16).optional() } }
        let v2 = try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int32).optional() } }
        let v3 = try Schema("v3") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int32).defaultValue(.int32(-5)) } }
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try store.write { ctx in
                for i in 0..<6 { try ctx.insert("Item", ["n": .int64(Int64(i)), "x": i % 2 == 0 ? .null : .int16(Int16(i))]) }
            }
        }
        for rewrite in [false, true] {
            let copy = try TemporaryDirectory("widen-then-default-copy")
            try FileManager.default.copyItem(at: dir.store, to: copy.store)
            var configuration = StoreConfiguration()
            configuration.backgroundMaintenance = false
            if rewrite { configuration.migration.rewritesEveryRecord() }
            let store = try Store.open(at: copy.store, schema: v3, plan: try MigrationPlan(schemas: [v1, v2, v3]), configuration: configuration)
            defer { store.close() }
            var read: [Int64: Value] = [:]
            try store.read { context in try context.objects("Item").forEach { read[$0["n"].int64Value ?? -1] = $0["x"] } }
            var expected: [Int64: Value] = [:]
            for i in 0..<6 { expected[Int64(i)] = i % 2 == 0 ? .int32(-5) : .int32(Int32(i)) }
            #expect(read == expected, "rewrite: \(rewrite)")
            _ = try store.performMaintenance()
            #expect(try store.read { try $0.objects("Item").where("x", equals: .int32(-5)).count() } == 3, "rewrite: \(rewrite)")
        }
    }

    /// An index rebuilt in the background by one step (an optional attribute made required with a default,
    /// its nulls now reading as the default), made unique by the next step in the same open: the uniqueness
    /// check must see every record, not the part of the index built so far, and refuse the duplicate defaults.
    @Test func aUniqueConstraintOnAnIndexStillBuildingChecksEveryRecord() throws {
        let dir = try TemporaryDirectory("unique-on-building-index")
        let v1 = try Schema("v1") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int64).optional().indexed() } }
        let v2 = try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int64).indexed().defaultValue(.int64(7)) } }
        let v3 = try Schema("v3") {   // (y: uniqueness alone does not change a version's hashes)
            Entity("Item") { Attribute("n", .int64); Attribute("x", .int64).unique().defaultValue(.int64(7)); Attribute("y", .bool).optional() }
        }
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try store.write { ctx in
                for i in 0..<10 { try ctx.insert("Item", ["n": .int64(Int64(i)), "x": i % 2 == 0 ? .null : .int64(Int64(100 + i))]) }
            }
        }
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        do {
            let store = try Store.open(at: dir.store, schema: v3, plan: try MigrationPlan(schemas: [v1, v2, v3]), configuration: configuration)
            store.close()
            Issue.record("five objects read x = 7, yet x was made unique")
        } catch let error as MigrationError {
            #expect(error.code == .dataCheckFailed, "\(error)")
            #expect(error.sourceVersion == "v2" && error.destinationVersion == "v3", "\(error)")
            #expect(error.storeState == .at(version: "v2"), "\(error)")
        }
        let store = try Store.open(at: dir.store, schema: v2, configuration: configuration)
        defer { store.close() }
        #expect(try store.read { try $0.objects("Item").where("x", equals: .int64(7)).count() } == 5)
    }
}
