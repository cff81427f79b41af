import Foundation
import Testing
import StrataTestSupport

/// Every way a migration can fail, each checked against the state the store records afterwards: the
/// error's `storeState` and its message must say where the store really is, and the next step they name
/// must work.
@Suite struct MigrationFailureStateTests {
    struct Failure: Error, CustomStringConvertible {
        let what: String
        var description: String { "policy failure: \(what)" }
    }

    static func v1() throws -> Schema {
        try Schema("v1") { Entity("Item") { Attribute("n", .int64); Attribute("name", .string) } }
    }
    /// A lightweight step from v1: a renamed attribute and an added default.
    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Item") {
                Attribute("n", .int64)
                Attribute("title", .string).renamed(from: "name")
                Attribute("flag", .bool).defaultValue(false)
            }
        }
    }
    /// A step from v2 that needs a custom stage (a required attribute without a default).
    static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Item") {
                Attribute("n", .int64)
                Attribute("title", .string)
                Attribute("flag", .bool).defaultValue(false)
                Attribute("code", .string)
            }
        }
    }

    static let count = 300

    /// A v1 store of `count` items, closed.
    static func makeStore(_ dir: TemporaryDirectory) throws -> URL {
        let store = try Store.open(at: dir.store, schema: try v1())
        try store.write { ctx in
            for i in 0..<count { try ctx.insert("Item", ["n": .int64(Int64(i)), "name": .string("item \(i)")]) }
        }
        store.close()
        return dir.store
    }

    /// The version and unfinished migration the store records, read by a fresh handle.
    static func recorded(_ url: URL) throws -> (version: String, migration: StoreInfo.MigrationState?) {
        let store = try Store.openRecorded(at: url, configuration: { var c = StoreConfiguration(); c.readOnly = true; return c }())
        defer { store.close() }
        let info = try store.info()
        return (info.modelVersion, info.migration)
    }

    /// Every item's `n` and name/title, as the store at `schema` reads them.
    static func expectItems(_ url: URL, _ schema: Schema, titleAttribute: String, plan: MigrationPlan? = nil) throws {
        let store = try plan.map { try Store.open(at: url, schema: schema, plan: $0) } ?? Store.open(at: url, schema: schema)
        defer { store.close() }
        try store.read { ctx in
            let items = try ctx.objects("Item").fetch()
            #expect(items.count == count)
            for item in items {
                let n = try #require(item["n"].int64Value)
                #expect(item[titleAttribute] == .string("item \(n)"))
            }
        }
    }

    func options(_ change: (inout MigrationOptions) -> Void = { _ in }) -> StoreConfiguration {
        var options = MigrationOptions()
        options.batchSize = 50
        change(&options)
        return StoreConfiguration(migration: options)
    }

    @Test("a step that cannot be inferred: nothing is written, not even the steps before it or a lock file")
    func cannotInfer() throws {
        let dir = try TemporaryDirectory()
        let url = try Self.makeStore(dir)
        let before = StoreFileBytes.snapshot(url)
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), try Self.v3()])
        do {
            _ = try Store.open(at: url, schema: try Self.v3(), plan: plan)
            Issue.record("migrated")
        } catch let error as MigrationError {
            #expect(error.code == .cannotInfer)
            #expect((error.sourceVersion, error.destinationVersion) == ("v2", "v3"))
            #expect(error.storeState == .at(version: "v1"))
            #expect(error.description.contains("nothing was written") && error.description.contains("The store is at v1"), "\(error)")
            #expect(error.description.contains("Add a custom stage for v2 → v3"), "\(error)")
        }
        #expect(StoreFileBytes.snapshot(url) == before, "the refusal changed the store's files")
        #expect(!FileManager.default.fileExists(atPath: url.appendingPathComponent("migration.lock").path))
        #expect(try Self.recorded(url).version == "v1")
        try Self.expectItems(url, try Self.v1(), titleAttribute: "name")
    }

    @Test("explaining a migration writes nothing")
    func explainWritesNothing() throws {
        let dir = try TemporaryDirectory()
        let url = try Self.makeStore(dir)
        let before = StoreFileBytes.snapshot(url)
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), try Self.v3()])
        let explanation = try Store.explainMigration(at: url, schema: try Self.v3(), plan: plan)
        #expect(explanation.steps.count == 2 && !explanation.steps[1].diagnostics.isEmpty)
        _ = try Store.migrationRoute(at: url, schema: try Self.v3(), plan: plan)
        #expect(StoreFileBytes.snapshot(url) == before)
        #expect(!FileManager.default.fileExists(atPath: url.appendingPathComponent("migration.lock").path))
    }

    @Test("no route: nothing is written and the store stays at its version")
    func noRoute() throws {
        let dir = try TemporaryDirectory()
        let url = try Self.makeStore(dir)
        let before = StoreFileBytes.snapshot(url)
        // A plan whose current version is not the app's model.
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2()])
        do {
            _ = try Store.open(at: url, schema: try Self.v3(), plan: plan)
            Issue.record("opened")
        } catch let error as MigrationError {
            #expect(error.code == .noRoute)
            #expect(error.storeState == .at(version: "v1"))
            #expect(error.description.contains("The store is at v1"), "\(error)")
        }
        #expect(StoreFileBytes.snapshot(url) == before)
    }

    @Test("a data check that fails rolls the step back; after a successful first step the store is at that step")
    func dataCheckAfterAStep() throws {
        let dir = try TemporaryDirectory()
        let url = try Self.makeStore(dir)
        // v2 → v2u makes `title` unique, but two items share a title.
        let store = try Store.open(at: url, schema: try Self.v1())
        try store.write { ctx in _ = try ctx.insert("Item", ["n": 0, "name": "item 0"]) }
        store.close()
        let v2u = try Schema("v2u") {
            Entity("Item") {
                Attribute("n", .int64)
                Attribute("title", .string).unique()
                Attribute("flag", .bool).defaultValue(false).versionHashModifier("u")
            }
        }
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), v2u])
        do {
            _ = try Store.open(at: url, schema: v2u, plan: plan, configuration: options())
            Issue.record("migrated")
        } catch let error as MigrationError {
            #expect(error.code == .dataCheckFailed)
            #expect((error.sourceVersion, error.destinationVersion) == ("v2", "v2u"))
            // The first step committed: the store is at v2, not v1.
            #expect(error.storeState == .at(version: "v2"))
            #expect(error.description.contains("the step was rolled back") && error.description.contains("The store is at v2"), "\(error)")
        }
        let recorded = try Self.recorded(url)
        #expect(recorded.version == "v2" && recorded.migration == nil)
        let reopened = try Store.open(at: url, schema: try Self.v2())
        #expect(try reopened.read { try $0.count("Item") } == Self.count + 1)
        reopened.close()
    }

    @Test("a policy that throws: the step is rolled back, and the error is the policy's own")
    func policyThrows() throws {
        let dir = try TemporaryDirectory()
        let url = try Self.makeStore(dir)
        let stage = MigrationStage.custom(from: "v2", to: "v3", entityMappings: [
            .transform("Item", instances: { item, ctx in
                if item["n"] == 123 { throw Failure(what: "item 123") }
                var object = try ctx.inferredObject(for: item)
                object["code"] = .string("c")
                try ctx.insert(object)
            }),
        ])
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), try Self.v3()], stages: [stage])
        do {
            _ = try Store.open(at: url, schema: try Self.v3(), plan: plan, configuration: options())
            Issue.record("migrated")
        } catch let error as MigrationError {
            #expect(error.code == .stageFailed)
            #expect(error.entity == "Item" && error.objectID != nil)
            #expect((error.underlying as? Failure)?.what == "item 123", "the policy's error is kept as thrown: \(String(describing: error.underlying))")
            #expect(error.storeState == .at(version: "v2"))
            #expect(error.description.contains("item 123") && error.description.contains("The store is at v2"), "\(error)")
        }
        #expect(try Self.recorded(url) == ("v2", nil))
        try Self.expectItems(url, try Self.v2(), titleAttribute: "title")
    }

    @Test("willMigrate that throws: nothing of the step stays")
    func willMigrateThrows() throws {
        let dir = try TemporaryDirectory()
        let url = try Self.makeStore(dir)
        let stage = MigrationStage.custom(from: "v1", to: "v2", willMigrate: { ctx in
            _ = try ctx.insert("Item", ["n": 999, "name": "written by willMigrate"])
            throw Failure(what: "willMigrate")
        })
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2()], stages: [stage])
        do {
            _ = try Store.open(at: url, schema: try Self.v2(), plan: plan)
            Issue.record("migrated")
        } catch let error as MigrationError {
            #expect(error.code == .stageFailed && error.storeState == .at(version: "v1"))
            #expect(error.underlying is Failure)
        }
        #expect(try Self.recorded(url) == ("v1", nil))
        try Self.expectItems(url, try Self.v1(), titleAttribute: "name")
    }

    @Test("didMigrate that throws after the switch: the store is at the destination, and the next open runs didMigrate again")
    func didMigrateThrows() throws {
        let dir = try TemporaryDirectory()
        let url = try Self.makeStore(dir)
        func plan(failing: Bool) throws -> MigrationPlan {
            let stage = MigrationStage.custom(from: "v1", to: "v2", didMigrate: { ctx in
                if failing { throw Failure(what: "didMigrate") }
                _ = try ctx.insert("Item", ["n": 1000, "title": "item 1000"])
            })
            return try MigrationPlan(schemas: [try Self.v1(), try Self.v2()], stages: [stage])
        }
        do {
            _ = try Store.open(at: url, schema: try Self.v2(), plan: try plan(failing: true))
            Issue.record("migrated")
        } catch let error as MigrationError {
            #expect(error.code == .stageFailed)
            #expect(error.storeState == .switched(version: "v2"))
            #expect(!error.description.contains("unchanged at v1"), "\(error)")
            #expect(error.description.contains("The store is at v2") && error.description.contains("didMigrate script runs again at the next open with the plan"), "\(error)")
        }
        // What the store records agrees: v2, with didMigrate still to run.
        let recorded = try Self.recorded(url)
        #expect(recorded.version == "v2")
        #expect(recorded.migration?.destinationVersion == "v2" && recorded.migration?.task == "didMigrate", "\(String(describing: recorded.migration))")
        // The next step the message names works: open with the plan, didMigrate runs and completes.
        let store = try Store.open(at: url, schema: try Self.v2(), plan: try plan(failing: false))
        #expect(try store.read { try $0.count("Item") } == Self.count + 1)
        store.close()
        #expect(try Self.recorded(url) == ("v2", nil))
    }

    @Test("a full map stops the step between batches: the store reads as the source and the next open resumes")
    func interruptedByTheMapCeiling() throws {
        let dir = try TemporaryDirectory()
        // Items with large text so that a rewrite needs more room than a small map ceiling allows.
        let v1 = try Schema("v1") { Entity("Item") { Attribute("n", .int32); Attribute("text", .string) } }
        let v2 = try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("text", .string) } }
        var small = StoreConfiguration()
        small.initialMapSize = 8 << 20
        small.maximumMapSize = 8 << 20
        let store = try Store.open(at: dir.store, schema: v1, configuration: small)
        let text = String(repeating: "x", count: 2_000)
        var inserted = 0
        for batch in 0..<200 {
            do {
                try store.write { ctx in
                    for i in 0..<100 { try ctx.insert("Item", ["n": .int32(Int32(batch * 100 + i)), "text": .string(text)]) }
                }
                inserted += 100
            } catch let error as StoreError where error.code == .mapFull {
                break
            }
            if inserted >= 2_500 { break }
        }
        store.close()
        small.migration.batchSize = 100
        // One layout per entity: the widening rewrites every record (into a copy) instead of reading them
        // through a projection.
        small.migration.maximumLayoutsPerEntity = 1
        let plan = try MigrationPlan(schemas: [v1, v2])
        do {
            _ = try Store.open(at: dir.store, schema: v2, plan: plan, configuration: small)
            Issue.record("migrated in a map that cannot hold both copies")
        } catch let error as MigrationError {
            #expect(error.code == .interrupted)
            #expect(error.storeError?.code == .mapFull, "\(String(describing: error.underlying))")
            #expect(error.storeState == .migrating(source: "v1", destination: "v2"))
            #expect(error.description.contains("still reads as v1") && error.description.contains("resumes the step"), "\(error)")
        }
        let recorded = try Self.recorded(dir.store)
        #expect(recorded.version == "v1" && recorded.migration?.destinationVersion == "v2")
        // Resumed with room to grow: every item on v2.
        let resumed = try Store.open(at: dir.store, schema: v2, plan: plan)
        try resumed.read { ctx in
            let items = try ctx.objects("Item").fetch()
            #expect(items.count == inserted)
            #expect(Set(items.compactMap { $0["n"].int64Value }) == Set((0..<inserted).map(Int64.init)))
            #expect(items.allSatisfy { $0["text"] == .string(text) })
        }
        resumed.close()
    }

    @Test("a stopped migration: the store reads as the source, the next open resumes")
    func stopped() throws {
        let dir = try TemporaryDirectory()
        let url = try Self.makeStore(dir)
        let batches = Counter()
        let configuration = options { $0.shouldStop = { batches.increment() > 2 } }
        // A unique index on `n` and a changed version hash: the step builds and checks the index in batches, which
        // can stop.
        let v2i = try Schema("v2i") { Entity("Item") { Attribute("n", .int64).unique(); Attribute("name", .string).versionHashModifier("i") } }
        let plan = try MigrationPlan(schemas: [try Self.v1(), v2i])
        do {
            _ = try Store.open(at: url, schema: v2i, plan: plan, configuration: configuration)
            Issue.record("the migration did not stop")
        } catch let error as MigrationError {
            #expect(error.code == .stopped)
            #expect(error.storeState == .migrating(source: "v1", destination: "v2i"))
        }
        #expect(try Self.recorded(url).migration?.destinationVersion == "v2i")
        try Self.expectItems(url, v2i, titleAttribute: "name", plan: plan)
        #expect(try Self.recorded(url) == ("v2i", nil))
    }
}

/// A thread-safe counter for closures the migration engine calls.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    /// Adds one and returns the new value.
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}
