import Foundation
import Strata
import StrataTestSupport
import Testing

/// A chain of five versions (``JournalChain``): a store written at any version migrates to the newest in one
/// open, and a store that lives through every version (gaining objects at each) migrates one version at a
/// time; after each migration every object — values, links from both sides, index lookups — matches the
/// oracle, and defaults are those of the step that added them, not of later versions.
@Suite struct ProgressiveChainTests {
    static func options(batchSize: Int = 37) -> StoreConfiguration {
        var options = MigrationOptions()
        options.batchSize = batchSize
        return StoreConfiguration(migration: options)
    }

    @Test(arguments: ["v1", "v2", "v3", "v4"])
    func migratesFromEveryStartingVersion(start: String) throws {
        let dir = try TemporaryDirectory("chain-\(start)")
        let oracle = Oracle(schema: try JournalChain.schema(start))
        do {
            let store = try Store.open(at: dir.store, schema: try JournalChain.schema(start))
            defer { store.close() }
            try JournalChain.fill(store, version: start, entries: 400, seed: 17, oracle: oracle)
            #expect(try oracle.mismatches(in: store) == [])
        }
        let store = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan(), configuration: Self.options())
        defer { store.close() }
        var version = start
        while version != "v5" {
            try JournalChain.applyStep(from: version, to: oracle)
            version = JournalChain.versions[JournalChain.versions.firstIndex(of: version)! + 1]
        }
        #expect(try oracle.mismatches(in: store) == [], "from \(start)")
        let report = try store.verify()
        #expect(report.problems == [], "from \(start)")
        let info = try store.info()
        #expect(info.modelVersion == "v5")
        #expect(info.history == Array(JournalChain.versions.drop { $0 != start }))
        #expect(info.migration == nil)
        // The migrated store works like a new one.
        let added = try store.write { ctx in try ctx.insert("Entry", ["caption": "new", "mood": 1.5, "rating": 2.0, "created": .date(.now), "code": "fresh"]) }
        #expect(added["pinned"] == false && added["words"] == .int32(99) && added["summary"] == .null)
        #expect(try store.read { try $0.objects("Entry").where("code", equals: "fresh").ids() } == [added.id])
    }

    @Test func livesThroughEveryVersion() throws {
        let dir = try TemporaryDirectory("chain-lived")
        let oracle = Oracle(schema: try JournalChain.v1())
        do {
            let store = try Store.open(at: dir.store, schema: try JournalChain.v1())
            defer { store.close() }
            try JournalChain.fill(store, version: "v1", entries: 200, seed: 1, oracle: oracle)
        }
        for (i, target) in JournalChain.versions.enumerated().dropFirst() {
            try JournalChain.applyStep(from: JournalChain.versions[i - 1], to: oracle)
            let store = try Store.open(at: dir.store, schema: try JournalChain.schema(target),
                                       plan: try JournalChain.plan(through: target), configuration: Self.options(batchSize: 16))
            defer { store.close() }
            #expect(try oracle.mismatches(in: store) == [], "at \(target)")
            #expect(try store.verify().problems == [], "at \(target)")
            // New objects at this version, with this version's defaults.
            try JournalChain.fill(store, version: target, entries: 60, seed: UInt64(i) * 7, oracle: oracle)
            #expect(try oracle.mismatches(in: store) == [], "after adding at \(target)")
        }
        // History: objects of v1 got words = 0 at v2 (the default then), objects of v2 kept theirs, and the
        // later default (99) applies only to objects created without a value at v3 and after.
        let store = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan())
        defer { store.close() }
        let words = try store.read { ctx in
            try ctx.objects("Entry").fetch().filter { $0["code"].stringValue!.hasPrefix("v1-") }.map { $0["words"] }
        }
        #expect(words.count == 200 && words.allSatisfy { $0 == .int32(0) })
        let pinned = try store.read { ctx in
            try ctx.objects("Entry").fetch().filter { $0["code"].stringValue!.hasPrefix("v3-") }.map { $0["pinned"] }
        }
        #expect(pinned.count == 60 && pinned.allSatisfy { $0 == true })
        #expect(try store.info().history == JournalChain.versions)
    }

    @Test func metadataOnlyStepsKeepRecordsAndRewritesMakeNewLayouts() throws {
        let dir = try TemporaryDirectory("chain-layouts")
        let oracle = Oracle(schema: try JournalChain.v1())
        do {
            let store = try Store.open(at: dir.store, schema: try JournalChain.v1())
            defer { store.close() }
            try JournalChain.fill(store, version: "v1", entries: 100, seed: 3, oracle: oracle)
        }
        // v1 → v2 changes metadata only: the records' bytes are the same.
        let explanation = try Store.explainMigration(at: dir.store, schema: try JournalChain.v2(), plan: try JournalChain.plan(through: "v2"))
        #expect(explanation.steps.map(\.rewritesRecords) == [false])
        var noMaintenance = StoreConfiguration()
        noMaintenance.backgroundMaintenance = false
        let store = try Store.open(at: dir.store, schema: try JournalChain.v2(), plan: try JournalChain.plan(through: "v2"),
                                   configuration: noMaintenance)
        let layouts = try store.info().entities.first { $0.name == "Entry" }?.layoutCount
        #expect(layouts == 2)  // the v1 layout read through a projection, and the layout new records use
        store.close()
        // v2 → v3 widens (Int16 → Int32, Float → Double): metadata only too, the old records read widened.
        let widening = try Store.explainMigration(at: dir.store, schema: try JournalChain.v3(), plan: try JournalChain.plan(through: "v3"))
        #expect(widening.steps.map(\.rewritesRecords) == [false])
        // With one layout allowed per entity, the same step rewrites every record instead.
        var oneLayout = MigrationOptions()
        oneLayout.maximumLayoutsPerEntity = 1
        let rewrite = try Store.explainMigration(at: dir.store, schema: try JournalChain.v3(), plan: try JournalChain.plan(through: "v3"),
                                                 configuration: StoreConfiguration(migration: oneLayout))
        #expect(rewrite.steps.map(\.rewritesRecords) == [true])
        let migrated = try Store.open(at: dir.store, schema: try JournalChain.v3(), plan: try JournalChain.plan(through: "v3"),
                                      configuration: noMaintenance)
        defer { migrated.close() }
        #expect(try migrated.info().entities.first { $0.name == "Entry" }?.layoutCount == 3)
        #expect(try migrated.info().entities.first { $0.name == "Entry" }?.oldLayoutRecords == ["1": 100])
        // The maintenance rewrites the 100 old records into the current layout, and the values stay.
        let waiting = try migrated.info().entities.reduce(0) { $0 + ($1.oldLayoutRecords?.values.reduce(0, +) ?? 0) }
        let compacted = try migrated.performMaintenance()
        #expect(compacted.rewritten == waiting && waiting >= 100, "\(compacted), \(waiting) waiting")
        #expect(compacted.indexed == 100, "the headline index, added at v2, is built by the maintenance")
        #expect(try migrated.info().entities.first { $0.name == "Entry" }?.layoutCount == 1)
        #expect(try migrated.info().entities.first { $0.name == "Entry" }?.oldLayoutRecords == [:])
        try JournalChain.applyStep(from: "v1", to: oracle)
        try JournalChain.applyStep(from: "v2", to: oracle)
        #expect(try oracle.mismatches(in: migrated) == [])
    }
}
