import Foundation
import Synchronization
import Strata
import StrataTestSupport
import Testing

/// Every error of opening or migrating a store says where the store really is and what the app's model is —
/// not an interrupted step's two ends, not the app's guess: one test per path of ``OpenDecision`` and of a
/// handle that outlived a migration, each checking ``StoreError/storeVersion``, ``StoreError/modelVersion``
/// and the words of the message. (Migration errors carry their state in ``MigrationError/storeState``:
/// `MigrationFailureStateTests`.)
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

    /// A store at v1 with 20 items, closed.
    static func storeAtV1(_ dir: TemporaryDirectory) throws -> URL {
        let store = try Store.open(at: dir.store, schema: try v1())
        try store.write { ctx in for i in 0..<20 { try ctx.insert("Item", ["n": .int64(Int64(i))]) } }
        store.close()
        return dir.store
    }

    /// The checks every refusal of this suite makes: both versions in the fields and in the words.
    static func expectNames(_ error: StoreError, store: String, app: String, code: StoreError.Code,
                            sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(error.storeVersion == store, "storeVersion: \(error)", sourceLocation: sourceLocation)
        #expect(error.modelVersion == app, "modelVersion: \(error)", sourceLocation: sourceLocation)
        #expect(error.description.contains("model \(store)"), "the message does not name the store's \(store): \(error)",
                sourceLocation: sourceLocation)
        #expect(error.description.contains(app), "the message does not name the app's \(app): \(error)", sourceLocation: sourceLocation)
    }

    @Test func anAppWithoutAPlanHearsTheStoresVersionAndItsOwn() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeAtV1(dir)
        let error = try #require(Self.refusal { try Store.open(at: url, schema: try Self.v3()) })
        Self.expectNames(error, store: "v1", app: "v3", code: .migrationRequired)
    }

    @Test func aReadOnlyOpenThatWouldMigrateHearsBothVersions() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeAtV1(dir)
        var readOnly = StoreConfiguration()
        readOnly.readOnly = true
        let error = try #require(Self.refusal {
            try Store.open(at: url, schema: try Self.v2(), plan: try Self.plan(failing: false), configuration: readOnly)
        })
        Self.expectNames(error, store: "v1", app: "v2", code: .migrationRequired)
    }

    @Test func anOlderAppOnANewerStoreHearsBothVersions() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeAtV1(dir)
        try Store.open(at: url, schema: try Self.v2(), plan: try Self.plan(failing: false)).close()
        var strict = StoreConfiguration()
        strict.opensNewerAdditiveStores = false
        let error = try #require(Self.refusal { try Store.open(at: url, schema: try Self.v1(), configuration: strict) })
        Self.expectNames(error, store: "v2", app: "v1", code: .storeNewerThanModel)
    }

    @Test func anOlderAppOnANewerStoreWithAChangeThatIsNotAdditiveHearsBothVersionsAndWhy() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeAtV1(dir)
        let v2 = try Schema("v2") { Entity("Item") { Attribute("m", .int64).defaultValue(0) } }   // n removed
        try Store.open(at: url, schema: v2, plan: try MigrationPlan(schemas: [try Self.v1(), v2])).close()
        let error = try #require(Self.refusal { try Store.open(at: url, schema: try Self.v1()) })
        Self.expectNames(error, store: "v2", app: "v1", code: .storeNewerThanModel)
        #expect(error.description.contains("cannot open it as it is"), "\(error)")
    }

    @Test func aShippedSchemaChangedInPlaceIsNamedOnBothSides() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeAtV1(dir)
        let changed = try Schema("v1") { Entity("Item") { Attribute("n", .int64); Attribute("extra", .string) } }
        let error = try #require(Self.refusal { try Store.open(at: url, schema: changed) })
        Self.expectNames(error, store: "v1", app: "v1", code: .schemaMismatch)
    }

    @Test func aReadOnlyOpenDuringAStoppedStepNamesTheStepAndTheApp() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeAtV1(dir)
        let v2 = try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("code", .string) } }
        let plan = try MigrationPlan(schemas: [try Self.v1(), v2],
                                     stages: [.custom(from: "v1", to: "v2", scripts: [ObjectScript("Item") { $0["code"] = .string("c") }])])
        var stopping = StoreConfiguration()
        stopping.migration.batchSize = 5
        stopping.migration.shouldStop = { true }
        #expect(throws: MigrationError.self) { try Store.open(at: url, schema: v2, plan: plan, configuration: stopping).close() }
        var readOnly = StoreConfiguration()
        readOnly.readOnly = true
        let error = try #require(Self.refusal { try Store.open(at: url, schema: v2, plan: plan, configuration: readOnly) })
        Self.expectNames(error, store: "v1", app: "v2", code: .migrationInProgress)
        #expect(error.description.contains("to v2") && error.description.contains("interrupted"), "\(error)")
        // The source model still reads it, and the plan finishes the step.
        let reader = try Store.open(at: url, schema: try Self.v1(), configuration: readOnly)
        #expect(try reader.read { try $0.count("Item") } == 20)
        reader.close()
        try Store.open(at: url, schema: v2, plan: plan).close()
    }

    @Test func aSecondHandleOpenedWhileThisProcessMigratesNamesTheStep() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeAtV1(dir)
        let v2 = try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("code", .string) } }
        let seen = Mutex<StoreError?>(nil)
        let plan = try MigrationPlan(schemas: [try Self.v1(), v2], stages: [.custom(from: "v1", to: "v2", scripts: [ObjectScript("Item") { item in
            item["code"] = .string("c")
            // Once, from inside the step: another handle of the destination model, not waiting.
            guard seen.withLock({ $0 == nil }) else { return }
            var impatient = StoreConfiguration()
            impatient.migration.waitsForOtherProcesses = false
            do { try Store.open(at: url, schema: v2, plan: try MigrationPlan(schemas: [try Self.v1(), v2]), configuration: impatient).close() }
            catch let error as StoreError { seen.withLock { $0 = error } }
            catch { Issue.record("not a StoreError: \(error)") }
        }])])
        try Store.open(at: url, schema: v2, plan: plan).close()
        let error = try #require(seen.withLock { $0 })
        Self.expectNames(error, store: "v1", app: "v2", code: .migrationInProgress)
        #expect(error.description.contains("from model v1 to v2") && error.description.contains("Another handle of this process"), "\(error)")
    }

    @Test func aHandleThatOutlivedAMigrationHearsTheStoresNewVersionAndItsOwn() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeAtV1(dir)
        let old = try Store.open(at: url, schema: try Self.v1())
        try Store.open(at: url, schema: try Self.v2(), plan: try Self.plan(failing: false)).close()
        do {
            _ = try old.write { try $0.insert("Item", ["n": .int64(99)]) }
            Issue.record("the old handle wrote to the migrated store")
        } catch let error as StoreError {
            Self.expectNames(error, store: "v2", app: "v1", code: .modelChanged)
        }
        do {
            _ = try old.read { try $0.count("Item") }
            Issue.record("the old handle read the migrated store")
        } catch let error as StoreError {
            Self.expectNames(error, store: "v2", app: "v1", code: .modelChanged)
        }
        old.close()
    }

    /// An older app that finds a newer app's step interrupted rolls it back (the newer app redoes it), then
    /// refuses the store it cannot read: the error says what the open wrote, not that nothing was.
    @Test func anOlderAppThatRolledBackANewerStepSaysSo() throws {
        let dir = try TemporaryDirectory("error-versions")
        let url = try Self.storeAtV1(dir)
        let v2 = try Schema("v2") { Entity("Item") { Attribute("m", .int64).defaultValue(0) } }   // n removed: not additive
        let v3 = try Schema("v3") { Entity("Item") { Attribute("m", .int64).defaultValue(0); Attribute("code", .string) } }
        try Store.open(at: url, schema: v2, plan: try MigrationPlan(schemas: [try Self.v1(), v2])).close()
        let plan = try MigrationPlan(schemas: [try Self.v1(), v2, v3],
                                     stages: [.custom(from: "v2", to: "v3", scripts: [ObjectScript("Item") { $0["code"] = .string("c") }])])
        var stopping = StoreConfiguration()
        stopping.migration.batchSize = 5
        stopping.migration.shouldStop = { true }
        #expect(throws: MigrationError.self) { try Store.open(at: url, schema: v3, plan: plan, configuration: stopping).close() }
        let error = try #require(Self.refusal { try Store.open(at: url, schema: try Self.v1()) })
        Self.expectNames(error, store: "v2", app: "v1", code: .storeNewerThanModel)
        #expect(error.description.contains("rolled back the interrupted step v2 → v3"), "\(error)")
        #expect(!error.description.contains(", nothing was written"), "\(error)")
        // The newer app migrates it from v2 again.
        let store = try Store.open(at: url, schema: v3, plan: plan)
        #expect(try store.read { try $0.objects("Item").fetch().allSatisfy { $0["code"] == "c" } })
        #expect(try store.read { try $0.count("Item") } == 20)
        store.close()
    }
}

