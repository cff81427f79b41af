import Foundation
import Strata
import StrataTestSupport
import Testing

/// Errors of opening a store in the middle of a migration say where the store really is and what the app's
/// model is — not the interrupted step's two ends.
@Suite struct ErrorVersionTests {
    struct Failure: Error {}

    static func v1() throws -> Schema { try Schema("v1") { Entity("Item") { Attribute("n", .int64) } } }
    static func v2() throws -> Schema { try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("flag", .bool).defaultValue(false) } } }
    static func v3() throws -> Schema {
        try Schema("v3") { Entity("Item") { Attribute("n", .int64); Attribute("flag", .bool).defaultValue(false); Attribute("tag", .string).optional() } }
    }

    /// The plan of an app at v2, or at v3 with `throughV3`.
    static func plan(failing: Bool, throughV3: Bool = false) throws -> MigrationPlan {
        let stage = MigrationStage.custom(from: "v1", to: "v2", didMigrate: { _ in if failing { throw Failure() } })
        return try MigrationPlan(schemas: [try v1(), try v2()] + (throughV3 ? [try v3()] : []), stages: [stage])
    }

    /// A store whose v1 → v2 step switched but whose didMigrate threw: it records v2, didMigrate pending.
    static func storeWithDidMigratePending(_ dir: TemporaryDirectory) throws -> URL {
        let store = try Store.open(at: dir.store, schema: try v1())
        try store.write { ctx in for i in 0..<20 { try ctx.insert("Item", ["n": .int64(Int64(i))]) } }
        store.close()
        do {
            try Store.open(at: dir.store, schema: try v2(), plan: try plan(failing: true)).close()
            Issue.record("didMigrate did not throw")
        } catch let error as MigrationError {
            #expect(error.storeState == .switched(version: "v2"), "\(error)")
        }
        return dir.store
    }

    static func refusal(_ open: () throws -> Store) -> StoreError? {
        do {
            try open().close()
            Issue.record("the store opened")
            return nil
        } catch let error as StoreError {
            return error
        } catch {
            Issue.record("not a StoreError: \(type(of: error)): \(error)")
            return nil
        }
    }

    @Test func anOlderAppOnAStoreWithDidMigratePendingHearsTheStoresVersionAndItsOwn() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeWithDidMigratePending(dir)
        let error = try #require(Self.refusal { try Store.open(at: url, schema: try Self.v1()) })
        #expect(error.storeVersion == "v2" && error.modelVersion == "v1", "\(error)")
        #expect(error.description.contains("is at model v2") && error.description.contains("this app's model is v1")
                && error.description.contains("didMigrate"), "\(error)")
        #expect(!error.description.contains("written by model v1"), "\(error)")
    }

    @Test func anAppThatDoesNotMigrateAtOpenHearsThatTheStoreIsAtTheDestination() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeWithDidMigratePending(dir)
        var configuration = StoreConfiguration()
        configuration.migration.migratesAtOpen = false
        let error = try #require(Self.refusal { try Store.open(at: url, schema: try Self.v3(), plan: try Self.plan(failing: false, throughV3: true), configuration: configuration) })
        #expect(error.code == .migrationRequired)
        #expect(error.storeVersion == "v2", "\(error)")
        #expect(error.modelVersion == "v3", "\(error)")
        // What the message says to do works.
        let store = try Store.open(at: url, schema: try Self.v3(), plan: try Self.plan(failing: false, throughV3: true))
        #expect(store.schema.versionIdentifier == "v3")
        #expect(try store.read { try $0.count("Item") } == 20)
        store.close()
    }

    @Test func aStepStoppedBetweenBatchesNamesTheSourceAndTheAppsModel() throws {
        let dir = try TemporaryDirectory("error-versions")
        let v1 = try Schema("v1") { Entity("Item") { Attribute("n", .int32) } }
        let v2 = try Schema("v2") { Entity("Item") { Attribute("n", .int32); Attribute("code", .string) } }   // needs its stage
        let v3 = try Schema("v3") { Entity("Item") { Attribute("n", .int32); Attribute("code", .string); Attribute("x", .bool).optional() } }
        let stage = MigrationStage.custom(from: "v1", to: "v2", scripts: [ObjectScript("Item") { $0["code"] = .string("c") }])
        let plan = try MigrationPlan(schemas: [v1, v2, v3], stages: [stage])
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            try store.write { ctx in for i in 0..<50 { try ctx.insert("Item", ["n": .int32(Int32(i))]) } }
            store.close()
        }
        var stopping = StoreConfiguration()
        stopping.migration.batchSize = 10
        stopping.migration.shouldStop = { true }
        #expect(throws: MigrationError.self) { try Store.open(at: dir.store, schema: v3, plan: plan, configuration: stopping).close() }
        var later = StoreConfiguration()
        later.migration.migratesAtOpen = false
        let error = try #require(Self.refusal { try Store.open(at: dir.store, schema: v3, plan: plan, configuration: later) })
        #expect(error.code == .migrationRequired)
        #expect(error.storeVersion == "v1" && error.modelVersion == "v3", "\(error)")
        let store = try Store.open(at: dir.store, schema: v3, plan: plan)
        #expect(try store.read { try $0.objects("Item").fetch().allSatisfy { $0["code"] == "c" } })
        store.close()
    }
}
