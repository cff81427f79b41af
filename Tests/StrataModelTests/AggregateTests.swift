import Foundation
import Strata
import StrataModels
import StrataTestKit
import StrataTestSupport
import Testing

/// Query aggregates (`count`, `sum`, `min`, `max`, `average`) computed from records in place equal a brute-force
/// fold over the owned values the same query fetches — on random data with extremes, nils, an empty store and
/// Unicode strings, with conditions on fields, on an index, and as closures.
@Suite struct AggregateTests {
    enum Ledger: SchemaVersion {
        static let versionIdentifier = "v1"
        static let models: [any EntityModel.Type] = [Entry.self]

        @Entity struct Entry {
            @Field(.indexed) var amount: Int
            var delta: Int32?
            var rate: Double
            var price: Decimal
            var label: String
            var note: String?
            @Field(.indexed) var at: Date
        }
    }

    static let labels = ["apple", "Äpfel", "banana", "e\u{301}clair", "\u{e9}clair", "zebra", "", "日本", "🙂", "Zed"]

    /// `count` random entries (amounts spread over Int32's range, a few at the extremes of Int).
    static func fill(_ store: Store, count: Int, seed: UInt64, extremes: Bool = false) throws {
        var random = SeededGenerator(seed: seed)
        try store.write { ctx in
            for i in 0..<count {
                var amount = Int(Int32.random(in: .min ... .max, using: &random))
                if extremes && i % 97 == 0 { amount = i % 2 == 0 ? Int.max : Int.min }
                try ctx.insert(Ledger.Entry(
                    amount: amount,
                    delta: random.chance(0.3) ? nil : Int32.random(in: -1000...1000, using: &random),
                    rate: random.chance(0.05) ? -0.0 : Double.random(in: -1e6...1e6, using: &random),
                    price: Decimal(Int.random(in: -100_000...100_000, using: &random)) / 100,
                    label: random.pick(labels),
                    note: random.chance(0.5) ? nil : random.pick(labels),
                    at: Date(timeIntervalSinceReferenceDate: Double(Int.random(in: 0...1_000_000_000, using: &random)))))
            }
        }
    }

    /// `a` before `b` in the store's order of strings (UTF-8 bytes).
    static func utf8Less(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    /// Checks every aggregate of `query` against a fold over `query.fetch()`.
    static func expectAggregatesMatch(_ query: ModelQuery<Ledger.Entry>, _ label: String) throws {
        let all = try query.fetch()
        #expect(try query.count() == all.count, "\(label): count")
        let deltas = all.compactMap(\.delta)
        #expect(try query.sum(\.delta) == deltas.reduce(Int32(0), +), "\(label): sum of an optional")
        #expect(try query.sum(\.rate) == all.reduce(0.0) { $0 + $1.rate }, "\(label): sum of doubles in identifier order")
        #expect(try query.sum(\.price) == all.reduce(Decimal(0)) { $0 + $1.price }, "\(label): sum of decimals")
        #expect(try query.min(\.amount) == all.map(\.amount).min(), "\(label): min")
        #expect(try query.max(\.amount) == all.map(\.amount).max(), "\(label): max")
        #expect(try query.min(\.delta) == deltas.min(), "\(label): min of an optional")
        #expect(try query.max(\.at) == all.map(\.at).max(), "\(label): max of dates")
        #expect(try query.min(\.label) == all.map(\.label).min(by: utf8Less), "\(label): min of strings in UTF-8 order")
        #expect(try query.max(\.note) == all.compactMap(\.note).max(by: utf8Less), "\(label): max of optional strings")
        let mean = all.isEmpty ? nil : all.reduce(0.0) { $0 + Double($1.amount) } / Double(all.count)
        #expect(try query.average(\.amount) == mean, "\(label): average")
        let deltaMean = deltas.isEmpty ? nil : deltas.reduce(0.0) { $0 + Double($1) } / Double(deltas.count)
        #expect(try query.average(\.delta) == deltaMean, "\(label): average of an optional")
    }

    @Test("aggregates equal a fold over the fetched values: no condition, field conditions, index ranges, closures, offset and limit")
    func aggregatesMatchAFold() throws {
        let store = try Store.temporary(schema: try Schema(Ledger.self))
        defer { store.close() }
        try Self.fill(store, count: 1_500, seed: 17)
        try store.read { ctx in
            let q = try ctx.objects(Ledger.Entry.self)
            try Self.expectAggregatesMatch(q, "all")
            try Self.expectAggregatesMatch(q.filter(\.rate > 0), "a field condition")
            try Self.expectAggregatesMatch(q.filter(\.label >= "b" && \.label < "z"), "a string range on a field")
            try Self.expectAggregatesMatch(q.filter(\.label == "\u{e9}clair" || \.note == nil), "an or with nil")
            try Self.expectAggregatesMatch(q.filter(!(\.delta > 0)), "a negation")
            try Self.expectAggregatesMatch(q.filter(\.amount >= 0 && \.amount < 1_000_000_000), "an index range")
            try Self.expectAggregatesMatch(q.filter { $0.price > 100 }, "a closure")
            try Self.expectAggregatesMatch(q.offset(10).limit(300), "offset and limit")
            try Self.expectAggregatesMatch(q.sorted(by: \.rate).limit(40), "sorted and limited")
            try Self.expectAggregatesMatch(q.filter(\.amount == 123_456_789), "no match")
        }
    }

    @Test("an empty entity: count 0, sums 0, min, max and average nil")
    func emptyEntity() throws {
        let store = try Store.temporary(schema: try Schema(Ledger.self))
        defer { store.close() }
        try store.read { ctx in
            let q = try ctx.objects(Ledger.Entry.self)
            #expect(try q.count() == 0)
            #expect(try q.sum(\.amount) == 0)
            #expect(try q.sum(\.rate) == 0)
            #expect(try q.min(\.amount) == nil && q.max(\.label) == nil && q.average(\.rate) == nil)
        }
    }

    @Test("an integer sum that overflows is a typed error, not a wrong value; min and max at Int's extremes")
    func overflowAndExtremes() throws {
        let store = try Store.temporary(schema: try Schema(Ledger.self))
        defer { store.close() }
        try Self.fill(store, count: 400, seed: 5, extremes: true)
        try store.read { ctx in
            let q = try ctx.objects(Ledger.Entry.self)
            #expect(try q.min(\.amount) == Int.min)
            #expect(try q.max(\.amount) == Int.max)
            #expect(throws: StoreError.self) { try q.filter(\.amount > 0).sum(\.amount) }
            let values = try q.fetch().map(\.amount)
            #expect(try q.average(\.amount) == values.reduce(0.0) { $0 + Double($1) } / Double(values.count))
        }
    }

    @Test("a sum added up in a wider type: Int32 values whose sum overflows Int32 but not Int64")
    func sumInAWiderType() throws {
        let store = try Store.temporary(schema: try Schema(Ledger.self))
        defer { store.close() }
        let deltas: [Int32?] = [Int32.max, Int32.max, nil, 7, Int32.min + 1]
        try store.write { ctx in
            for (i, delta) in deltas.enumerated() {
                try ctx.insert(Ledger.Entry(amount: i, delta: delta, rate: 0, price: 0, label: "e\(i)", note: nil, at: Date(timeIntervalSince1970: 0)))
            }
        }
        try store.read { ctx in
            let q = try ctx.objects(Ledger.Entry.self)
            let expected = deltas.compactMap { $0 }.reduce(Int64(0)) { $0 + Int64($1) }
            #expect(try q.sum(\.delta, as: Int64.self) == expected)
            #expect(throws: StoreError.self) { try q.sum(\.delta) }
            #expect(throws: StoreError.self) { try q.sum(\.delta, as: Int16.self) }
            #expect(try q.filter(\.amount == 3).sum(\.delta, as: Int64.self) == 7)
        }
    }
}
