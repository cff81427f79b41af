import Foundation
import Strata
import StrataTestSupport
import Testing

/// Routing through a plan: a skipped version (older stores go around it, stores on it go out of it), a route
/// that jumps versions, a store at a version the plan does not list (migrated from the model recorded in
/// it), a store newer than the app (refused, file untouched), and `migratesAtOpen = false`.
@Suite struct MigrationRoutingTests {
    /// v2 with an attribute that shipped by mistake in "v2b".
    static func v2b() throws -> Schema {
        var entities = try JournalChain.v2().entities
        entities[0].attributes.append(Attribute("oops", .string).optional())
        return try Schema("v2b", entities: entities)
    }

    static func skippingPlan() throws -> MigrationPlan {
        try MigrationPlan(schemas: [try JournalChain.v1(), try JournalChain.v2(), try v2b(), try JournalChain.v3(), try JournalChain.v4()],
                          skipping: ["v2b"])
    }

    /// Creates a store at `schema` filled with 150 entries; returns its oracle.
    static func makeStore(_ url: URL, _ schema: Schema, seed: UInt64 = 5) throws -> Oracle {
        let oracle = Oracle(schema: schema)
        let store = try Store.open(at: url, schema: schema)
        defer { store.close() }
        try JournalChain.fill(store, version: schema.versionIdentifier, entries: 150, seed: seed, oracle: oracle)
        return oracle
    }

    @Test func skippedVersionIsRoutedAroundAndOutOf() throws {
        let plan = try Self.skippingPlan()
        #expect(plan.route(from: "v1") == ["v1", "v2", "v3", "v4"])
        #expect(plan.route(from: "v2") == ["v2", "v3", "v4"])
        #expect(plan.route(from: "v2b") == ["v2b", "v3", "v4"])
        #expect(plan.nextVersion(after: "v4") == nil)

        for start in ["v1", "v2", "v2b"] {
            let dir = try TemporaryDirectory("skip-\(start)")
            let schema = start == "v2b" ? try Self.v2b() : try JournalChain.schema(start)
            let oracle = try Self.makeStore(dir.store, schema)
            #expect(try Store.migrationRoute(at: dir.store, schema: try JournalChain.v4(), plan: plan) == plan.route(from: start))
            let recorder = ProgressRecorder()
            let store = try Store.open(at: dir.store, schema: try JournalChain.v4(), plan: plan,
                                       configuration: StoreConfiguration(migration: recorder.options()))
            defer { store.close() }
            if start == "v1" { try JournalChain.applyStep(from: "v1", to: oracle) }
            if start == "v2b" {
                oracle.removeAttribute("Entry", "oops")
                oracle.adopt(try JournalChain.v2())
            }
            try JournalChain.applyStep(from: "v2", to: oracle)
            try JournalChain.applyStep(from: "v3", to: oracle)
            #expect(try oracle.mismatches(in: store) == [], "from \(start)")
            #expect(try store.info().history == plan.route(from: start), "from \(start)")
            let route = plan.route(from: start)
            #expect(recorder.completedSteps == zip(route, route.dropFirst()).map { "\($0)→\($1)" })
        }
    }

    @Test func aRouteCanJumpVersions() throws {
        let all = try JournalChain.schemas()
        let plan = try MigrationPlan(schemas: Array(all[0...3]), routes: [.init(from: "v1", to: "v3")])
        #expect(plan.route(from: "v1") == ["v1", "v3", "v4"])
        let dir = try TemporaryDirectory("jump")
        let oracle = try Self.makeStore(dir.store, try JournalChain.v1())
        let explanation = try Store.explainMigration(at: dir.store, schema: all[3], plan: plan)
        #expect(explanation.steps.map { "\($0.source)→\($0.destination)" } == ["v1→v3", "v3→v4"])
        let store = try Store.open(at: dir.store, schema: all[3], plan: plan)
        defer { store.close() }
        try JournalChain.applyStep(from: "v1", to: oracle)
        try JournalChain.applyStep(from: "v2", to: oracle)
        // The one step v1 → v3 fills `words` with v3's default: the default of the step's destination.
        oracle.addAttribute("Entry", "words", value: .int32(99))
        try JournalChain.applyStep(from: "v3", to: oracle)
        #expect(try oracle.mismatches(in: store) == [])
        #expect(try store.info().history == ["v1", "v3", "v4"])
    }

    @Test func removedThenReaddedIsNotResurrectedByAJump() throws {
        // v2 removes `note` and the shelf relationship pair; v3 adds both back under the same names. A store
        // routed v1 → v3 in one step must not get its v1 values or links back.
        func version(_ id: String, withNote: Bool) throws -> Schema {
            try Schema(id) {
                Entity("Book") {
                    Attribute("title", .string)
                    if withNote { Attribute("note", .string).defaultValue(.string("\(id) default")) }
                    if withNote { Relationship("shelf", to: "Shelf", inverse: "books") }
                }
                Entity("Shelf") {
                    Attribute("name", .string)
                    if withNote { Relationship("books", to: "Book", inverse: "shelf", toMany: true) }
                }
            }
        }
        let v1 = try version("v1", withNote: true), v2 = try version("v2", withNote: false)
        let v3 = try Schema("v3", entities: try version("v3", withNote: true).entities.map { e in
            var e = e
            e.versionHashModifier = "re-added"
            return e
        })
        let dir = try TemporaryDirectory("readded")
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try store.write { ctx in
                let shelf = try ctx.insert("Shelf", ["name": "s"])
                for i in 0..<20 {
                    let book = try ctx.insert("Book", ["title": .string("b\(i)"), "note": .string("note \(i)")])
                    try ctx.link(book, "shelf", to: shelf)
                }
            }
        }
        let plan = try MigrationPlan(schemas: [v1, v2, v3], routes: [.init(from: "v1", to: "v3")])
        let store = try Store.open(at: dir.store, schema: v3, plan: plan)
        defer { store.close() }
        try store.read { ctx throws in
            let books = try ctx.objects("Book").fetch()
            #expect(books.count == 20)
            #expect(books.allSatisfy { $0["note"] == "v3 default" })
            for b in books { #expect(try ctx.related(b, "shelf") == []) }
            let shelf = try #require(try ctx.objects("Shelf").first())
            #expect(try ctx.related(shelf, "books") == [])
        }
        #expect(try store.verify().problems == [])
    }

    @Test func unknownVersionMigratesFromItsRecordedModel() throws {
        // A hotfix build shipped "v4-hotfix" (v4 plus one attribute); this app's plan never listed it.
        var entities = try JournalChain.v4().entities
        entities[0].attributes.append(Attribute("legacy", .int64).defaultValue(7))
        let hotfix = try Schema("v4-hotfix", entities: entities)
        let dir = try TemporaryDirectory("unknown")
        let oracle = try Self.makeStore(dir.store, hotfix)
        let plan = try JournalChain.plan()
        #expect(try Store.migrationRoute(at: dir.store, schema: try JournalChain.v5(), plan: plan) == ["v4-hotfix", "v5"])
        let store = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: plan)
        defer { store.close() }
        oracle.removeAttribute("Entry", "legacy")
        oracle.adopt(try JournalChain.v4())
        try JournalChain.applyStep(from: "v4", to: oracle)
        #expect(try oracle.mismatches(in: store) == [])
        #expect(try store.info().history == ["v4-hotfix", "v5"])
    }

    /// The refusal of a store newer than the app's v3 (v4 and v5 widen what v3 stores: v3 cannot open them as they are).
    static func isNewerThanApp(_ error: any Error, store: String) -> Bool {
        (error as? StoreError)?.code == .storeNewerThanModel
            && "\(error)".contains("The store is at model \(store), newer than this app's newest model v3")
    }

    @Test func storeNewerThanTheAppIsRefusedUntouched() throws {
        // A store at v5, opened by an app that knows v1 … v3.
        let dir = try TemporaryDirectory("newer")
        _ = try Self.makeStore(dir.store, try JournalChain.v5())
        let before = try StoreFileBytes.dataFile(of: dir.store)
        let plan = try JournalChain.plan(through: "v3")
        #expect {
            try Store.open(at: dir.store, schema: try JournalChain.v3(), plan: plan)
        } throws: { Self.isNewerThanApp($0, store: "v5") }
        #expect {
            try Store.open(at: dir.store, schema: try JournalChain.v3())
        } throws: { Self.isNewerThanApp($0, store: "v5") }
        #expect {
            try Store.migrate(at: dir.store, plan: plan)
        } throws: { Self.isNewerThanApp($0, store: "v5") }
        #expect(try StoreFileBytes.dataFile(of: dir.store) == before)

        // A store that went through the app's version already (its history says so), whatever the names.
        let dir2 = try TemporaryDirectory("newer-history")
        _ = try Self.makeStore(dir2.store, try JournalChain.v3())
        do {
            let store = try Store.open(at: dir2.store, schema: try JournalChain.v4(), plan: try JournalChain.plan(through: "v4"))
            store.close()
        }
        let migrated = try StoreFileBytes.dataFile(of: dir2.store)
        #expect {
            try Store.open(at: dir2.store, schema: try JournalChain.v3(), plan: plan)
        } throws: { Self.isNewerThanApp($0, store: "v4") }
        #expect(try StoreFileBytes.dataFile(of: dir2.store) == migrated)
    }

    @Test func migrationCanBeLeftToTheApp() throws {
        let dir = try TemporaryDirectory("manual")
        let oracle = try Self.makeStore(dir.store, try JournalChain.v1())
        var options = MigrationOptions()
        options.migratesAtOpen = false
        let configuration = StoreConfiguration(migration: options)
        let plan = try JournalChain.plan()
        let before = try StoreFileBytes.dataFile(of: dir.store)
        #expect(throws: StoreError.migrationRequired(from: "v1", to: "v5")) {
            try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: plan, configuration: configuration)
        }
        #expect(try StoreFileBytes.dataFile(of: dir.store) == before)
        #expect(try Store.requiresMigration(at: dir.store, plan: plan))
        #expect(try Store.migrate(at: dir.store, plan: plan) == 4)
        #expect(try !Store.requiresMigration(at: dir.store, plan: plan))
        #expect(try Store.migrate(at: dir.store, plan: plan) == 0)
        let store = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: plan, configuration: configuration)
        defer { store.close() }
        for v in ["v1", "v2", "v3", "v4"] { try JournalChain.applyStep(from: v, to: oracle) }
        #expect(try oracle.mismatches(in: store) == [])
    }

    @Test func migrateToAModelWithoutAPlanInfersFromTheRecordedModel() throws {
        let dir = try TemporaryDirectory("infer-direct")
        let oracle = try Self.makeStore(dir.store, try JournalChain.v1())
        #expect(try Store.migrate(at: dir.store, schema: try JournalChain.v2()) == 1)
        let store = try Store.open(at: dir.store, schema: try JournalChain.v2())
        defer { store.close() }
        try JournalChain.applyStep(from: "v1", to: oracle)
        #expect(try oracle.mismatches(in: store) == [])
        #expect(try store.info().history == ["v1", "v2"])
    }

    @Test func editedShippedVersionIsASchemaMismatchEvenWithAPlan() throws {
        // The store was written by a "v2" that differs from the plan's frozen v2.
        var entities = try JournalChain.v2().entities
        entities[0].attributes.append(Attribute("hotfix", .bool).optional())
        let edited = try Schema("v2", entities: entities)
        let dir = try TemporaryDirectory("edited")
        _ = try Self.makeStore(dir.store, edited)
        let before = try StoreFileBytes.dataFile(of: dir.store)
        #expect(throws: StoreError.schemaMismatch(version: "v2")) {
            try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan())
        }
        #expect(try StoreFileBytes.dataFile(of: dir.store) == before)
    }

    @Test func planWhoseCurrentSchemaIsNotTheAppsHasNoRoute() throws {
        let dir = try TemporaryDirectory("no-route")
        _ = try Self.makeStore(dir.store, try JournalChain.v1())
        #expect(throws: MigrationError.self) {
            try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan(through: "v3"))
        }
        // Nothing happened: the store opens with its own model.
        let store = try Store.open(at: dir.store, schema: try JournalChain.v1())
        store.close()
    }
}
