import Crypto
import Foundation
import Strata
import StrataModels
import StrataTestSupport
import Testing

/// The typed surface on an encrypted store: model inserts, typed fetches, the borrowed reads aggregates use, index
/// equality through keyed hashes and ranges answered by scans — the same answers as a fold over the fetched values.
@Suite struct EncryptedModelTests {
    @Test func typedReadsAndAggregatesWorkOnAnEncryptedStore() throws {
        var configuration = StoreConfiguration()
        configuration.encryption = StoreEncryption(key: SymmetricKey(size: .bits256))
        let store = try Store.temporary(schema: try Schema(AggregateTests.Ledger.self), configuration: configuration)
        defer { store.close() }
        #expect(try store.info().isEncrypted)
        try AggregateTests.fill(store, count: 800, seed: 23)
        try store.read { ctx in
            let q = try ctx.objects(AggregateTests.Ledger.Entry.self)
            try AggregateTests.expectAggregatesMatch(q, "all")
            try AggregateTests.expectAggregatesMatch(q.filter(\.amount >= 0 && \.amount < 1_000_000_000), "an index range, scanned")
            try AggregateTests.expectAggregatesMatch(q.filter(\.label == "banana"), "a field equality")
            let amounts = try q.fetch().map(\.amount)
            let some = try #require(amounts.dropFirst(100).first)
            #expect(try q.filter(\.amount == some).count() == amounts.filter { $0 == some }.count)
            try AggregateTests.expectAggregatesMatch(q.filter(\.amount == some), "an index equality")
        }
    }
}
