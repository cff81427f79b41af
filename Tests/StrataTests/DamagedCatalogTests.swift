import Foundation
@testable import Strata
import StrataTestKit
import StrataTestSupport
import Testing

/// Issue 13's "corrupted layout records": the catalog (which holds every entity's layouts, read by the
/// projections of old records) damaged in a store whose records are in two layouts. Damage the checksum
/// catches must give a typed `corrupted` error at open; damage under a valid checksum (resealed) must never
/// trap: every open, read, sweep and verification ends in a value or a typed ``StoreError``.
@Suite struct DamagedCatalogTests {
    static func v1() throws -> Schema {
        try Schema("v1") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int16); Attribute("s", .string).optional() } }
    }
    static func v2() throws -> Schema {
        try Schema("v2") { Entity("Item") { Attribute("n", .int64); Attribute("x", .int32); Attribute("s", .string).optional() } }
    }

    static func configuration() -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        return configuration
    }

    /// A v2 store of 30 items: the first 20 still in v1's layout, 10 written at v2.
    static func makeStore(_ dir: TemporaryDirectory) throws -> (plan: MigrationPlan, catalog: [UInt8]) {
        do {
            let store = try Store.open(at: dir.store, schema: try v1(), configuration: configuration())
            defer { store.close() }
            try store.write { ctx in
                for i in 0..<20 { _ = try ctx.insert("Item", ["n": .int64(Int64(i)), "x": .int16(Int16(i)), "s": i % 2 == 0 ? .null : "item \(i)"]) }
            }
        }
        let plan = try MigrationPlan(schemas: [try v1(), try v2()])
        let store = try Store.open(at: dir.store, schema: try v2(), plan: plan, configuration: configuration())
        defer { store.close() }
        try store.write { ctx in
            for i in 20..<30 { _ = try ctx.insert("Item", ["n": .int64(Int64(i)), "x": .int32(Int32(i)), "s": "item \(i)"]) }
        }
        let catalog = try store.environment.read { txn in
            try #require(try store.model.meta.get(.catalog, in: txn)).map { $0 }
        }
        return (plan, catalog)
    }

    /// Replaces the catalog's payload (re-enveloped with a valid checksum when `reseal`, else the raw enveloped bytes).
    static func replaceCatalog(_ dir: TemporaryDirectory, plan: MigrationPlan, bytes: [UInt8], reseal: Bool) throws {
        let store = try Store.open(at: dir.store, schema: try v2(), plan: plan, configuration: configuration())
        defer { store.close() }
        try store.environment.write { txn in
            if reseal {
                try store.model.meta.put(.catalog, bytes, in: txn)
            } else {
                try Array(MetaKey.catalog.rawValue.utf8).withUnsafeBytes { key in
                    try bytes.withUnsafeBytes { _ = try txn.put(store.model.meta.dbi, key: key, value: $0) }
                }
            }
        }
    }

    /// Opens the damaged store and does everything a user would: read every item, verify, sweep. Returns
    /// what went wrong, as text, or nil when everything worked.
    static func exercise(_ dir: TemporaryDirectory, plan: MigrationPlan) -> String? {
        do {
            let store = try Store.open(at: dir.store, schema: try v2(), plan: plan, configuration: configuration())
            defer { store.close() }
            _ = try store.read { try $0.objects("Item").fetch() }
            _ = try store.verify()
            _ = try store.performMaintenance()
            return nil
        } catch let error as StoreError {
            return "typed \(error.code.name)"
        } catch let error as MigrationError {
            return "typed migration \(error)"
        } catch {
            return "UNTYPED \(error)"
        }
    }

    @Test func damageTheChecksumCatchesIsACorruptedStoreAtOpen() throws {
        var random = SeededGenerator(seed: 1313)
        for trial in 0..<20 {
            let dir = try TemporaryDirectory("catalog-crc-\(trial)")
            let (plan, original) = try Self.makeStore(dir)
            // The stored value is the payload in its envelope: flip 1–3 bits anywhere in it.
            var stored = try {
                let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: plan, configuration: Self.configuration())
                defer { store.close() }
                return try store.environment.read { txn in
                    try #require(try Array(MetaKey.catalog.rawValue.utf8).withUnsafeBytes { try txn.get(store.model.meta.dbi, key: $0) }).map { $0 }
                }
            }()
            #expect(stored.count == original.count + 4)
            for _ in 0...(random.next() % 3) {
                let bit = Int(random.next() % UInt64(stored.count * 8))
                stored[bit / 8] ^= UInt8(1 << (bit % 8))
            }
            try Self.replaceCatalog(dir, plan: plan, bytes: stored, reseal: false)
            do {
                let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: plan, configuration: Self.configuration())
                store.close()
                Issue.record("trial \(trial): a catalog with flipped bits opened")
            } catch let error as StoreError where error.code == .corrupted {
            } catch {
                Issue.record("trial \(trial): \(error)")
            }
        }
    }

    @Test func resealedDamageNeverTraps() throws {
        var random = SeededGenerator(seed: 2727)
        var outcomes: [String: Int] = [:]
        for trial in 0..<60 {
            let dir = try TemporaryDirectory("catalog-reseal-\(trial)")
            let (plan, original) = try Self.makeStore(dir)
            var bytes = original
            switch trial % 3 {
            case 0:  // bit flips
                for _ in 0...(random.next() % 4) {
                    let bit = Int(random.next() % UInt64(bytes.count * 8))
                    bytes[bit / 8] ^= UInt8(1 << (bit % 8))
                }
            case 1:  // a byte set to an extreme
                bytes[Int(random.next() % UInt64(bytes.count))] = [0x00, 0x7F, 0x80, 0xFF][Int(random.next() % 4)]
            default:  // truncated
                bytes = Array(bytes.prefix(Int(random.next() % UInt64(bytes.count))))
            }
            try Self.replaceCatalog(dir, plan: plan, bytes: bytes, reseal: true)
            let outcome = Self.exercise(dir, plan: plan) ?? "worked"
            #expect(!outcome.hasPrefix("UNTYPED"), "trial \(trial): \(outcome)")
            outcomes[outcome.split(separator: " ").prefix(2).joined(separator: " "), default: 0] += 1
        }
        #expect(outcomes.keys.contains { $0.hasPrefix("typed") }, "no damage was detected at all: \(outcomes)")
    }
}
