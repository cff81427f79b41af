import Foundation
import Testing
import StrataTestSupport
@testable import Strata

/// Existence checks and to-one link reads go through a look-up cursor per database that stays positioned for the
/// whole transaction (``Transaction/withLookupCursor(_:_:)``), while the same transaction puts, deletes and empties
/// those databases through other cursors. Whatever LMDB did to the pages meanwhile (splits, merges, a dropped
/// database), a look-up answers what `mdb_get` answers and what the test's own oracle holds — in runs of ascending
/// keys (the cursor's page answers) and at random, in two databases at once (one with sorted duplicates), across
/// transactions.
@Suite struct LookupCursorTests {
    static func key(_ k: UInt64) -> [UInt8] { withUnsafeBytes(of: k.bigEndian, Array.init) }

    @Test func lookUpsAgreeWithGetThroughWritesDeletesAndDrops() throws {
        let dir = try TemporaryDirectory("lookup-cursor")
        let store = try Store.open(at: dir.store, schema: try Schema("v1") { Entity("Note") { Attribute("text", .string) } })
        defer { store.close() }
        var random = SeededGenerator(seed: 71)
        // The oracle: database → key → value (the first duplicate, for the sorted-duplicates database).
        var plain: [UInt64: [UInt8]] = [:]
        var sorted: [UInt64: Set<UInt64>] = [:]
        var mismatches: [String] = []
        var checked = 0
        for round in 0..<6 {
            try store.environment.write { txn in
                let a = try #require(try txn.openDatabase("x-lookup-plain", flags: 0, create: true))
                let b = try #require(try txn.openDatabase("x-lookup-sorted", flags: LMDBFlags.dupSort | LMDBFlags.dupFixed, create: true))
                func check(_ k: UInt64) throws {
                    let key = Self.key(k)
                    try key.withUnsafeBytes { kb in
                        let present = try txn.withLookupCursor(a) { try $0.contains(kb) }
                        let found = try txn.withLookupCursor(a) { try $0.find(kb).map { Array($0.value) } }
                        let got = try txn.get(a, key: kb).map(Array.init)
                        if present != (plain[k] != nil) || found != plain[k] || got != plain[k] {
                            mismatches.append("round \(round), plain \(k): contains \(present), find \(found?.count ?? -1) bytes, get \(got?.count ?? -1), oracle \(plain[k]?.count ?? -1)")
                        }
                        let first = try txn.withLookupCursor(b) { try $0.find(kb).map { UInt64(bigEndian: $0.value.loadUnaligned(as: UInt64.self)) } }
                        if first != sorted[k]?.min() { mismatches.append("round \(round), sorted \(k): \(String(describing: first)), oracle \(String(describing: sorted[k]?.min()))") }
                    }
                    checked += 1
                }
                for _ in 0..<4_000 {
                    let k = random.next() % 3_000
                    switch random.next() % 10 {
                    case 0...2:
                        let value = [UInt8](repeating: UInt8(truncatingIfNeeded: random.next()), count: 40 + Int(random.next() % 300))
                        try Self.key(k).withUnsafeBytes { kb in try value.withUnsafeBytes { _ = try txn.put(a, key: kb, value: $0) } }
                        plain[k] = value
                    case 3:
                        let v = random.next() % 50
                        try Self.key(k).withUnsafeBytes { kb in try Self.key(v).withUnsafeBytes { _ = try txn.addDuplicate(b, key: kb, value: $0) } }
                        sorted[k, default: []].insert(v)
                    case 4:
                        _ = try Self.key(k).withUnsafeBytes { try txn.delete(a, key: $0) }
                        plain[k] = nil
                        _ = try Self.key(k).withUnsafeBytes { try txn.delete(b, key: $0) }
                        sorted[k] = nil
                    case 5...6:
                        // A run of ascending keys, as a pass checks the objects it links.
                        for j in k..<min(k + 40, 3_000) { try check(j) }
                    default:
                        try check(k)
                    }
                }
                if round == 3 {
                    // Emptied in the middle of the transaction, then used again.
                    try txn.drop(a, delete: false)
                    plain.removeAll()
                    for j in stride(from: UInt64(0), to: 3_000, by: 97) { try check(j) }
                }
            }
        }
        try store.environment.read { txn in
            let a = try #require(try txn.openDatabase("x-lookup-plain", flags: 0, create: false))
            for k in UInt64(0)..<3_000 {
                let present = try Self.key(k).withUnsafeBytes { kb in try txn.withLookupCursor(a) { try $0.contains(kb) } }
                if present != (plain[k] != nil) { mismatches.append("read, plain \(k): contains \(present)") }
            }
        }
        #expect(checked > 10_000)
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, the first: \(mismatches.prefix(5))")
    }
}
