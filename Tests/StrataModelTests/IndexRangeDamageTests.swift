import Foundation
@testable import Strata
import StrataModels
import StrataTestSupport
import Testing

/// An index entry that names no object (its value is not an object key) is reported as a damaged store by every
/// query that reads through the index — the dynamic cursor, typed fetches and typed aggregates — and never taken
/// for an object or skipped.
@Suite struct IndexRangeDamageTests {
    @Test("a damaged index entry inside a query's range is a typed error on every path through the index")
    func damagedIndexEntryIsReported() throws {
        let dir = try TemporaryDirectory()
        let store = try Store.open(at: dir.store, schema: try Schema(Shop.self))
        defer { store.close() }
        try store.write { ctx in
            for i in 0..<40 {
                try ctx.insert(Shop.Product(price: i, name: "product \(i)", category: "tools", rating: nil, note: "note \(i)"))
            }
        }
        // Before the damage, the range reads its ten objects through the index.
        try store.read { ctx throws in
            #expect(try ctx.objects(Shop.Product.self).filter(\.price >= 10 && \.price < 20).count() == 10)
        }
        // An entry for price 15 whose value is three bytes, not an object key (a single value under a new key
        // is stored whatever its size).
        let index = try #require(store.model.entities.first { $0.name == "Product" }?.indexes.first { $0.attribute == 0 })
        try store.environment.write { txn in
            let key = IndexKey.encode(.int64(15)) + [0x00]
            let bogus: [UInt8] = [1, 2, 3]
            _ = try key.withUnsafeBytes { k in try bogus.withUnsafeBytes { try txn.put(index.dbi, key: k, value: $0) } }
        }
        func isDamage(_ error: any Error) -> Bool { (error as? StoreError)?.code == .corrupted }
        try store.read { ctx throws in
            let typed = try ctx.objects(Shop.Product.self).filter(\.price >= 10 && \.price < 20)
            #expect(throws: StoreError.self) { try typed.fetch() }
            #expect { try typed.fetch() } throws: { isDamage($0) }
            #expect { try typed.sum(\.price, as: Int64.self) } throws: { isDamage($0) }
            #expect { try typed.count() } throws: { isDamage($0) }
            #expect {
                try ctx.objects("Product").where("price", from: .int64(10), to: .int64(20)).ids()
            } throws: { isDamage($0) }
            // Outside the damaged entry's range, the index still answers.
            #expect(try ctx.objects(Shop.Product.self).filter(\.price >= 30 && \.price < 35).count() == 5)
        }
    }
}
