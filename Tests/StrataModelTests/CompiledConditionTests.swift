import Foundation
@testable import Strata
import StrataModels
import StrataTestKit
import StrataTestSupport
import Testing

/// Conditions on fixed-width attributes, compared where their fields lie (``ScalarComparison``), decide exactly
/// what the general paths (a fetch, deciding on model values; a fold over owned values) decide: every comparison operator on every fixed-width type, nil, NaN, -0 and the types' extremes.
@Suite struct CompiledConditionTests {
    enum Gauges: SchemaVersion {
        static let versionIdentifier = "v1"
        static let models: [any EntityModel.Type] = [Gauge.self]

        @Entity struct Gauge {
            var big: Int
            var mid: Int32
            var small: Int16
            var real: Double
            var single: Float
            var flag: Bool
            var at: Date
            var maybe: Int32?
            var maybeReal: Double?
            var n: Int
        }
    }

    static let reals: [Double] = [0, -0.0, 1.5, -1.5, .nan, .infinity, -.infinity, 1e300, -1e-300, 42]
    static let mids: [Int32] = [.min, .max, 0, -1, 1, 7, 1000, -1000]
    static let smalls: [Int16] = [.min, .max, 0, -1, 1, 7]
    static let bigs: [Int] = [.min, .max, 0, -1, 1, 7, 1 << 40]

    static func fill(_ store: Store, count: Int, seed: UInt64) throws {
        var random = SeededGenerator(seed: seed)
        try store.write { ctx in
            for i in 0..<count {
                try ctx.insert(Gauges.Gauge(
                    big: random.pick(bigs), mid: random.pick(mids), small: random.pick(smalls),
                    real: random.pick(reals), single: Float(random.pick(reals)), flag: random.chance(0.5),
                    at: Date(timeIntervalSinceReferenceDate: random.pick(reals)),
                    maybe: random.chance(0.3) ? nil : random.pick(mids),
                    maybeReal: random.chance(0.3) ? nil : random.pick(reals),
                    n: i))
            }
        }
    }

    /// The six comparisons of `keyPath` with `value`, labelled.
    static func comparisons<V: ModelQueryable & Comparable>(_ keyPath: KeyPath<Gauges.Gauge, V>, _ value: V, _ name: String,
                                                            shown: String? = nil) -> [(String, ModelPredicate<Gauges.Gauge>)] {
        // (A date of NaN or infinite seconds cannot describe itself: its seconds label it.)
        let label = shown ?? "\(value)"
        return [("\(name) == \(label)", keyPath == value), ("\(name) != \(label)", keyPath != value),
                ("\(name) < \(label)", keyPath < value), ("\(name) <= \(label)", keyPath <= value),
                ("\(name) > \(label)", keyPath > value), ("\(name) >= \(label)", keyPath >= value)]
    }

    static func optionalComparisons<V: ModelQueryable & Comparable>(_ keyPath: KeyPath<Gauges.Gauge, V?>, _ value: V, _ name: String)
        -> [(String, ModelPredicate<Gauges.Gauge>)] {
        [("\(name) == \(value)", keyPath == value), ("\(name) != \(value)", keyPath != value),
         ("\(name) < \(value)", keyPath < value), ("\(name) <= \(value)", keyPath <= value),
         ("\(name) > \(value)", keyPath > value), ("\(name) >= \(value)", keyPath >= value),
         ("\(name) == nil", keyPath == nil), ("\(name) != nil", keyPath != nil)]
    }

    @Test("every operator on every fixed-width type, nil, NaN, -0 and extremes: in place equals the general path and a fold", arguments: [1, 2])
    func compiledComparisonsEqualTheGeneralPath(seed: UInt64) throws {
        let store = try Store.temporary(schema: try Schema(Gauges.self))
        defer { store.close() }
        try Self.fill(store, count: 300, seed: seed)
        var cases: [(String, ModelPredicate<Gauges.Gauge>)] = []
        for v in Self.bigs { cases += Self.comparisons(\.big, v, "big") }
        for v in Self.mids { cases += Self.comparisons(\.mid, v, "mid") }
        for v in Self.smalls { cases += Self.comparisons(\.small, v, "small") }
        for v in Self.reals { cases += Self.comparisons(\.real, v, "real") }
        for v in Self.reals { cases += Self.comparisons(\.single, Float(v), "single") }
        for v in [false, true] { cases += [("flag == \(v)", \.flag == v), ("flag != \(v)", \.flag != v)] }
        for v in Self.reals { cases += Self.comparisons(\.at, Date(timeIntervalSinceReferenceDate: v), "at", shown: "\(v) s") }
        for v in Self.mids { cases += Self.optionalComparisons(\.maybe, v, "maybe") }
        for v in Self.reals { cases += Self.optionalComparisons(\.maybeReal, v, "maybeReal") }
        cases.append(("mid > 0 && real < 1", \.mid > 0 && \.real < 1))
        cases.append(("flag || maybe == nil", \.flag == true || \.maybe == nil))
        try store.read { ctx in
            let q = try ctx.objects(Gauges.Gauge.self)
            let all = try q.fetch()
            for (label, predicate) in cases {
                let fast = q.filter(predicate)
                let kept = all.filter { predicate.evaluate($0) }
                let count = try fast.count()
                // `fetch` decides on model values (the general path).
                #expect(count == (try fast.fetch().count), "\(label): count")
                #expect(count == kept.count, "\(label): count against a fold")
                #expect(try fast.sum(\.n) == kept.reduce(0) { $0 + $1.n }, "\(label): sum")
                #expect(try fast.max(\.n) == kept.map(\.n).max(), "\(label): max")
            }
        }
    }

    @Test("a comparison of a widened attribute over records of its older layout reads through the projection")
    func olderLayoutsCompareThroughTheProjection() throws {
        let dir = try TemporaryDirectory("compiled-projection")
        let store = try LeanReadTests.journalOfOlderLayouts(dir, count: 40) { i in
            Journal.V1.Note(title: "t\(i)", body: "b\(i)", words: Int32(i - 20) * 1000)
        }
        defer { store.close() }
        try store.read { ctx in
            let q = try ctx.objects(Journal.V3.Note.self)
            let all = try q.fetch()
            for bound: Int64 in [-20_000, -1, 0, 5000, 1 << 40] {
                #expect(try q.filter(\.words >= bound).count() == all.filter { $0.words >= bound }.count, "words >= \(bound)")
                #expect(try q.filter(\.words < bound).sum(\.words) == all.filter { $0.words < bound }.reduce(0) { $0 + $1.words }, "words < \(bound)")
                #expect(try q.filter(\.words == bound).count() == all.filter { $0.words == bound }.count, "words == \(bound)")
            }
            // `pinned` is a constant (false) of the old layout's records, a field of the new one's.
            #expect(try q.filter(\.pinned == true).count() == 1)
            #expect(try q.filter(\.pinned == false).max(\.words) == all.filter { !$0.pinned }.map(\.words).max())
        }
    }

    @Test("a record whose bytes changed under its checksum is a typed error through the compiled condition and the fold")
    func damagedRecordIsATypedError() throws {
        let store = try Store.temporary(schema: try Schema(Gauges.self))
        defer { store.close() }
        try Self.fill(store, count: 20, seed: 3)
        let victim = ObjectID(rawValue: 7)
        try store.write { ctx in
            let binding = try ctx.binding("Gauge")
            var bytes = try #require(try ObjectKey.with(victim.rawValue) { try ctx.txn.get(binding.dbi, key: $0).map { Array($0) } })
            bytes[bytes.count - 10] ^= 0x40
            try ObjectKey.with(victim.rawValue) { key in try bytes.withUnsafeBytes { _ = try ctx.txn.put(binding.dbi, key: key, value: $0) } }
        }
        try store.read { ctx in
            let q = try ctx.objects(Gauges.Gauge.self)
            for (label, body) in [("filtered count", { _ = try q.filter(\.mid >= 0).count() }),
                                  ("sum", { _ = try q.sum(\.n) }),
                                  ("filtered min", { _ = try q.filter(\.real != 0).min(\.small) }),
                                  ("typed values", { try q.forEach { _ in } }),
                                  ("filtered typed values", { try q.filter(\.n >= 0).forEach { _ in } }),
                                  ("typed values after an offset", { try q.offset(3).forEach { _ in } }),
                                  ("sorted typed values", { try q.sorted(by: \.n).forEach { _ in } }),
                                  ("typed values with a closure filter", { try q.filter { _ in true }.forEach { _ in } }),
                                  ("dynamic objects", { try ctx.objects("Gauge").forEach { _ in } }),
                                  ("filtered dynamic objects", { try ctx.objects("Gauge").filter { _ in true }.offset(1).forEach { _ in } }),
                                  ("borrowed records", { try q.forEachRecord { _ in } }),
                                  ("record views", { try ctx.forEachView(of: "Gauge") { _ in } })] as [(String, () throws -> Void)] {
                do {
                    try body()
                    Issue.record("\(label) read the damaged record")
                } catch let error as StoreError {
                    #expect(error.code == .corruptedRecord, "\(label): \(error)")
                    #expect(error.objectID == victim, "\(label): \(error)")
                }
            }
        }
    }

    @Test("an entity key of another length than an object ID's is a typed corrupted-store error through every scan")
    func aMalformedKeyIsATypedError() throws {
        let store = try Store.temporary(schema: try Schema(Gauges.self))
        defer { store.close() }
        try Self.fill(store, count: 5, seed: 4)
        try store.write { ctx in
            let binding = try ctx.binding("Gauge")
            // A 3-byte key sorts before every 8-byte object key: the first entry every scan meets.
            let key: [UInt8] = [0, 0, 1]
            let value = try #require(try ObjectKey.with(1) { try ctx.txn.get(binding.dbi, key: $0).map { Array($0) } })
            try key.withUnsafeBytes { k in try value.withUnsafeBytes { _ = try ctx.txn.put(binding.dbi, key: k, value: $0) } }
        }
        try store.read { ctx in
            let q = try ctx.objects(Gauges.Gauge.self)
            let scans: [(String, () throws -> Void)] = [
                // (An unfiltered count is the database's entry count: it reads no key.)
                ("filtered count", { _ = try q.filter(\.mid >= 0).count() }),
                ("filtered sum", { _ = try q.filter(\.mid >= 0).sum(\.n) }),
                ("borrowed records", { try q.forEachRecord { _ in } }),
                ("record views", { try ctx.forEachView(of: "Gauge") { _ in } }),
                ("typed values", { try q.forEach { _ in } }),
                ("filtered typed values", { try q.filter(\.mid >= 0).offset(1).forEach { _ in } }),
                ("dynamic objects", { try ctx.objects("Gauge").forEach { _ in } }),
            ]
            for (label, scan) in scans {
                do {
                    try scan()
                    Issue.record("\(label) read past a malformed key")
                } catch let error as StoreError {
                    #expect(error.code == .corrupted, "\(label): \(error)")
                    #expect("\(error)".contains("an object key of 3 bytes"), "\(label): \(error)")
                }
            }
        }
    }

    @Test("a typed scan with key-path conditions, offset and limit streams the objects the general path returns")
    func typedScansMatchTheGeneralPath() throws {
        let store = try Store.temporary(schema: try Schema(Gauges.self))
        defer { store.close() }
        try Self.fill(store, count: 60, seed: 5)
        try store.read { ctx in
            let q = try ctx.objects(Gauges.Gauge.self)
            let all = try q.sorted(by: \.n).fetch()
            #expect(all.count == 60)
            for (offset, limit) in [(0, nil), (0, 5), (4, nil), (4, 3), (100, nil), (0, 0)] as [(Int, Int?)] {
                func bounded(_ q: ModelQuery<Gauges.Gauge>) -> ModelQuery<Gauges.Gauge> {
                    let skipped = q.offset(offset)
                    return limit.map { skipped.limit($0) } ?? skipped
                }
                // Streamed from the records (conditions on fields) and through the general path (a closure filter:
                // decided on model values): the same objects, in the same order.
                var streamed: [Int] = []
                try bounded(q.filter(\.mid >= 0 && \.flag == true)).forEach { streamed.append($0.n) }
                var general: [Int] = []
                try bounded(q.filter { $0.mid >= 0 && $0.flag }).forEach { general.append($0.n) }
                let expected = Array(all.filter { $0.mid >= 0 && $0.flag }.map(\.n).dropFirst(offset).prefix(limit ?? .max))
                #expect(streamed == expected, "offset \(offset), limit \(String(describing: limit))")
                #expect(general == expected, "offset \(offset), limit \(String(describing: limit))")
                #expect(try bounded(q).fetch().map(\.n) == Array(all.map(\.n).dropFirst(offset).prefix(limit ?? .max)))
                // The dynamic API's scan: the same offset and limit over its closure filter.
                var dynamic = try ctx.objects("Gauge").filter { $0["flag"] == true }.offset(offset)
                if let limit { dynamic = dynamic.limit(limit) }
                var objects: [Int] = []
                try dynamic.forEach { objects.append(Int($0["n"].int64Value ?? -1)) }
                #expect(objects == Array(all.filter(\.flag).map(\.n).dropFirst(offset).prefix(limit ?? .max)))
            }
            // Every value streamed is the one a get reads.
            try q.forEach { value in
                let id = try #require(value.objectID)
                let fetched = try #require(try ctx.fetch(Gauges.Gauge.self, id: id))
                // (Compared by bits: the values include NaN, and dates a `Date` cannot describe.)
                #expect(fetched.n == value.n && fetched.big == value.big && fetched.mid == value.mid && fetched.small == value.small)
                #expect(fetched.real.bitPattern == value.real.bitPattern && fetched.single.bitPattern == value.single.bitPattern)
                #expect(fetched.flag == value.flag && fetched.maybe == value.maybe && fetched.maybeReal?.bitPattern == value.maybeReal?.bitPattern)
                #expect(fetched.at.timeIntervalSinceReferenceDate.bitPattern == value.at.timeIntervalSinceReferenceDate.bitPattern)
            }
        }
    }
}
