import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The cost estimates of `Store.explainMigration`: their shape only (positive where work exists, two commits
/// — the journal's and the switch — for a metadata-only step, more bytes for a rewrite), never a timing.
@Suite struct MigrationEstimateTests {
    static func v1() throws -> Schema {
        try Schema("v1") { Entity("Item") { Attribute("n", .int32); Attribute("name", .string) } }
    }
    /// Metadata only: a rename and an added default.
    static func renamed() throws -> Schema {
        try Schema("v2-metadata") {
            Entity("Item") {
                Attribute("n", .int32)
                Attribute("title", .string).renamed(from: "name")
                Attribute("flag", .bool).defaultValue(false)
            }
        }
    }
    /// Every record rewritten: `n` widened.
    static func widened() throws -> Schema {
        try Schema("v2-rewrite") { Entity("Item") { Attribute("n", .int64); Attribute("name", .string) } }
    }

    static let count = 3_000

    static func makeStore(_ url: URL) throws {
        let store = try Store.open(at: url, schema: try v1())
        defer { store.close() }
        try store.write { context in
            for i in 0..<count {
                try context.insert("Item", orderedValues: [.int32(Int32(i)), .string("item number \(i) with some text")])
            }
        }
    }

    @Test func metadataStepIsTwoCommitsAndRewriteScalesWithRecords() throws {
        let dir = try TemporaryDirectory("estimate")
        try Self.makeStore(dir.store)
        let before = StoreFileBytes.snapshot(dir.store)
        let metadata = try Store.explainMigration(at: dir.store, schema: try Self.renamed())
        // A widening is metadata only by default (a projection); rewriting every record is asked for.
        var rewriting = StoreConfiguration()
        rewriting.createIfMissing = false
        rewriting.migration.rewritesEveryRecord()
        let rewrite = try Store.explainMigration(at: dir.store, schema: try Self.widened(), configuration: rewriting)
        #expect(StoreFileBytes.snapshot(dir.store) == before, "explaining (and calibrating) wrote to the store")

        let m = try #require(metadata.steps.first)
        let r = try #require(rewrite.steps.first)
        #expect(!m.rewritesRecords && r.rewritesRecords)

        // The calibration sampled the store's records and measured positive costs.
        let c = try #require(rewrite.calibration)
        #expect(c.sampledRecords == Self.count)
        #expect(c.readSecondsPerRecord > 0 && c.decodeSecondsPerRecord > 0 && c.encodeSecondsPerRecord > 0)
        #expect(c.writeSecondsPerRecord >= 0 && c.insertSecondsPerRecord > 0 && c.commitSeconds > 0 && c.commitSecondsPerByte >= 0)
        let recordBytes = try #require(c.averageRecordBytes["Item"])
        #expect(recordBytes > 20 && recordBytes < 200)

        // A metadata-only step writes a few pages in two commits (its journal, the switch), whatever the
        // number of records; the rest of its estimate is the planning the explanation timed, no record work.
        let mc = try #require(metadata.calibration)
        #expect(m.bytesToWrite > 0 && m.bytesToWrite <= 64 * 1024)
        #expect(m.estimatedSeconds > 2 * mc.commitSeconds + Double(m.bytesToWrite) * mc.commitSecondsPerByte)

        // A rewrite writes every record (at least their bytes) and costs every record's read and write,
        // its batches' commits and the switch's.
        #expect(r.bytesToWrite > m.bytesToWrite)
        #expect(Double(r.bytesToWrite) >= Double(Self.count) * recordBytes)
        let perRecord = c.readSecondsPerRecord + c.writeSecondsPerRecord
        #expect(r.estimatedSeconds >= Double(Self.count) * perRecord + 2 * c.commitSeconds - 1e-9)
        #expect(rewrite.estimatedSeconds == r.estimatedSeconds && rewrite.bytesToWrite == r.bytesToWrite)

        for text in ["Estimate: writes about", "Estimates are calibrated on \(Self.count) records of this store"] {
            #expect(rewrite.description.contains(text), "\(text): \(rewrite.description)")
        }
    }

    @Test func aCustomStageEstimatesItsPassesAndAnUpToDateStoreNothing() throws {
        let dir = try TemporaryDirectory("estimate-custom")
        try Self.makeStore(dir.store)
        // v1 → v3: a required attribute without a default needs a custom stage that fills it.
        let v3 = try Schema("v3") {
            Entity("Item") { Attribute("n", .int32); Attribute("name", .string); Attribute("code", .string) }
        }
        let stage = MigrationStage.custom(from: "v1", to: "v3", entityMappings: [
            .transform("Item", instances: { item, ctx in
                var object = try ctx.inferredObject(for: item)
                object["code"] = .string("c\(item["n"].int64Value ?? 0)")
                try ctx.insert(object)
            }),
        ])
        let plan = try MigrationPlan(schemas: [try Self.v1(), v3], stages: [stage])
        let custom = try Store.explainMigration(at: dir.store, schema: v3, plan: plan)
        let step = try #require(custom.steps.first)
        #expect(step.isCustom)
        #expect(step.bytesToWrite > 0 && step.estimatedSeconds > 0)
        let rewrite = try #require(try Store.explainMigration(at: dir.store, schema: try Self.widened()).steps.first)
        // The policy pass decodes and re-encodes every object: at least as many bytes as the rewrite.
        #expect(step.bytesToWrite >= rewrite.bytesToWrite)
        #expect(custom.description.contains("plus the stage's own code"))

        let upToDate = try Store.explainMigration(at: dir.store, schema: try Self.v1())
        #expect(upToDate.isUpToDate && upToDate.calibration == nil && upToDate.estimatedSeconds == 0 && upToDate.bytesToWrite == 0)
    }
}

/// The cost model's shape for a custom stage's instance pass, on fixed per-record costs (no timing): a typed
/// mapping, which decodes its source once and encodes its objects straight from their values, is estimated
/// below a dynamic policy with its dictionaries; a declared mapping, which copies fields as bytes, below both.
@Suite struct MigrationCostModelTests {
    /// Fixed per-record costs, with commits free so that estimates differ by their per-object work alone.
    static func calibration(decodeSeconds: Double) -> MigrationCalibration {
        var c = MigrationCalibration.unmeasured
        c.readSecondsPerRecord = 45e-9
        c.decodeSecondsPerRecord = decodeSeconds
        c.encodeSecondsPerRecord = 43e-9
        c.writeSecondsPerRecord = 64e-9
        c.insertSecondsPerRecord = 123e-9
        c.commitSeconds = 0
        c.commitSecondsPerByte = 0
        return c
    }

    @Test func typedMappingsCostLessThanDynamicPoliciesAndDeclaredMappingsLeast() {
        let c = Self.calibration(decodeSeconds: 135e-9)
        let options = MigrationOptions()
        func seconds(_ kind: MigrationCostModel.MappingKind) -> Double {
            MigrationCostModel.estimate(.instances(pass: 0, mapping: 0), records: 1_000_000, recordBytes: 120,
                                        destinations: 2, kind: kind, calibration: c, options: options).seconds
        }
        let dynamic = seconds(.dynamic), typed = seconds(.typed), declared = seconds(.declared)
        #expect(dynamic > typed && typed > declared, "dynamic \(dynamic) s, typed \(typed) s, declared \(declared) s")
        // A fifth of a decode and of an insert per created object separate a typed mapping from a dynamic policy.
        let created = 2.0 * 1_000_000
        #expect(abs((dynamic - typed) - 0.2 * created * (c.decodeSecondsPerRecord + c.insertSecondsPerRecord)) < 1e-6)
    }

    /// A pass whose source objects another thread decodes counts the slower of that decoding and the migrating
    /// thread's own work per object, not their sum: the instance pass's objects cost more than a decode, so the
    /// decode disappears from it; the relationship pass's two puts cost less, so it is the decode that counts.
    @Test func aSourceDecodedAheadCountsTheSlowerOfTheTwoThreads() {
        let c = Self.calibration(decodeSeconds: 300e-9)
        let n = 1_000_000.0
        func seconds(_ task: MigrationTask, _ kind: MigrationCostModel.MappingKind, ahead: Bool) -> Double {
            MigrationCostModel.estimate(task, records: Int(n), recordBytes: 120, destinations: 2, kind: kind,
                                        sourceDecodedAhead: ahead, calibration: c, options: MigrationOptions()).seconds
        }
        for kind in [MigrationCostModel.MappingKind.dynamic, .typed] {
            let alone = seconds(.instances(pass: 0, mapping: 0), kind, ahead: false)
            let ahead = seconds(.instances(pass: 0, mapping: 0), kind, ahead: true)
            #expect(abs((alone - ahead) - n * c.decodeSecondsPerRecord) < 1e-6, "\(kind): \(alone) s alone, \(ahead) s ahead")
        }
        let linking = seconds(.relationships(pass: 0, mapping: 0), .dynamic, ahead: false)
        let linkingAhead = seconds(.relationships(pass: 0, mapping: 0), .dynamic, ahead: true)
        #expect(abs(linking - n * (c.decodeSecondsPerRecord + 2 * c.writeSecondsPerRecord)) < 1e-6)
        #expect(abs(linkingAhead - n * c.decodeSecondsPerRecord) < 1e-6, "\(linkingAhead) s")
    }
}
