import Foundation
import Strata
import StrataTestSupport
import Testing

/// Lookups and range queries through indexes give exactly the objects a scan finds, for every indexable
/// type, with random data and random bounds (seeded), and stay right after updates and deletes.
@Suite struct IndexQueryTests {
    /// Random values of `type` with repeats, a few edge values and some nulls.
    static func values(of type: AttributeType, count: Int, rng: inout SeededGenerator) -> [Value] {
        var pool: [Value] = (0..<max(8, count / 4)).map { _ in rng.value(of: type) }
        switch type {
        case .double: pool += [.double(.infinity), .double(-.infinity), .double(-0.0), .double(0), .double(-1e300), .double(.nan)]
        case .float: pool += [.float(.infinity), .float(-.infinity), .float(-0.0), .float(.nan)]
        case .int64: pool += [.int64(.min), .int64(.max), .int64(0)]
        case .int32: pool += [.int32(.min), .int32(.max)]
        case .int16: pool += [.int16(.min), .int16(.max)]
        case .date: pool += [.date(.distantPast), .date(.distantFuture)]
        case .string:
            let long = String(repeating: "m", count: 500)
            pool += [.string(""), .string(long + "a"), .string(long + "b"), .string(long), .string("m"), .string("n")]
        case .decimal: pool += [.decimal(.nan), .decimal(Decimal(string: "10")!), .decimal(Decimal(string: "9.99")!), .decimal(Decimal(string: "-100")!), .decimal(2)]
        case .data: pool += [.data(Data()), .data(Data([0])), .data(Data([0, 0]))]
        default: break
        }
        return (0..<count).map { _ in rng.chance(0.1) ? .null : rng.pick(pool) }
    }

    /// The objects a query over `lower..<upper` (or `...upper`) should return, by the documented ordering.
    static func expected(_ values: [ObjectID: Value], lower: Value?, upper: Value?, upperInclusive: Bool) -> Set<ObjectID> {
        Set(values.filter { _, v in
            if v.isNull { return false }
            if let lower {
                guard let c = v.compare(lower), c != .orderedAscending else { return false }
            }
            if let upper {
                guard let c = v.compare(upper) else { return false }
                if c == .orderedDescending || (c == .orderedSame && !upperInclusive) { return false }
            }
            return true
        }.keys)
    }

    @Test(arguments: TestSchemas.allTypes)
    func rangeQueriesMatchAScan(_ type: AttributeType) throws {
        var rng = SeededGenerator(seed: 0xC0FFEE &+ UInt64(TestSchemas.allTypes.firstIndex(of: type)!))
        let indexedStore = try Store.temporary(schema: try TestSchemas.everyType(indexed: true))
        let plainStore = try Store.temporary(schema: try TestSchemas.everyType(indexed: false))
        defer { indexedStore.close(); plainStore.close() }
        let name = TestSchemas.attributeName(type)
        let data = Self.values(of: type, count: 300, rng: &rng)
        var stored: [ObjectID: Value] = [:]
        for store in [indexedStore, plainStore] {
            let ids = try store.write { ctx in try data.map { try ctx.insert("Sample", ["label": "x", name: $0]).id } }
            stored = Dictionary(uniqueKeysWithValues: zip(ids, data))
        }
        let candidates = data.filter { !$0.isNull } + [rng.value(of: type), rng.value(of: type)]
        for round in 0..<30 {
            let lower: Value? = rng.chance(0.2) ? nil : rng.pick(candidates)
            let upper: Value? = rng.chance(0.2) ? nil : rng.pick(candidates)
            let inclusive = rng.chance(0.5)
            let want = Self.expected(stored, lower: lower, upper: upper, upperInclusive: inclusive)
            for (label, store) in [("indexed", indexedStore), ("scanned", plainStore)] {
                let got = try store.read { ctx in
                    try ctx.objects("Sample").where(name, from: lower, to: upper, upperInclusive: inclusive).ids()
                }
                #expect(Set(got) == want, "\(type.name) \(label) round \(round): [\(lower?.description ?? "nil"), \(upper?.description ?? "nil")\(inclusive ? "]" : ")")")
                #expect(got.count == Set(got).count, "\(type.name) \(label): duplicates in the results")
                let counted = try store.read { ctx in
                    try ctx.objects("Sample").where(name, from: lower, to: upper, upperInclusive: inclusive).count()
                }
                #expect(counted == want.count)
            }
            // Equality lookups.
            let probe = rng.pick(candidates)
            let wantEqual = Self.expected(stored, lower: probe, upper: probe, upperInclusive: true)
            for store in [indexedStore, plainStore] {
                let got = try store.read { try $0.objects("Sample").where(name, equals: probe).ids() }
                #expect(Set(got) == wantEqual, "\(type.name) == \(probe)")
            }
        }
        #expect(try indexedStore.verify().isClean)
    }

    @Test func indexedIntegerQueriedWithOtherNumericBounds() throws {
        let indexed = try Store.temporary(schema: try TestSchemas.everyType(indexed: true))
        let plain = try Store.temporary(schema: try TestSchemas.everyType(indexed: false))
        defer { indexed.close(); plain.close() }
        // Item i holds i in a_int64 and a_int16, i / 2 in a_double.
        var idsOf: [ObjectIdentifier: [Int: ObjectID]] = [:]
        for store in [indexed, plain] {
            idsOf[ObjectIdentifier(store)] = try store.write { ctx in
                var ids: [Int: ObjectID] = [:]
                for i in -50...50 {
                    ids[i] = try ctx.insert("Sample", ["label": "x", "a_int64": .int64(Int64(i)), "a_int16": .int16(Int16(i)), "a_double": .double(Double(i) / 2)]).id
                }
                return ids
            }
        }
        let queries: [(String, Value?, Value?, (Int) -> Bool)] = [
            ("a_int64", .double(2.5), .double(10.5), { (3...10).contains($0) }),
            ("a_int64", .double(-3.5), nil, { $0 >= -3 }),
            ("a_int16", .int64(-5), .int64(5), { (-5..<5).contains($0) }),   // literals in another width
            ("a_int16", .int32(40), .int64(1000), { $0 >= 40 }),
            ("a_double", .int64(-2), .int64(2), { (-4..<4).contains($0) }),   // -2.0 ..< 2.0 by halves
            ("a_double", .int16(20), nil, { $0 >= 40 }),
        ]
        for (attribute, lower, upper, holds) in queries {
            for (label, store) in [("indexed", indexed), ("scanned", plain)] {
                let ids = idsOf[ObjectIdentifier(store)]!
                let want = Set(ids.filter { holds($0.key) }.values)
                let got = try store.read { try $0.objects("Sample").where(attribute, from: lower, to: upper).ids() }
                #expect(Set(got) == want && got.count == want.count, "\(label) \(attribute) in [\(lower?.description ?? "nil"), \(upper?.description ?? "nil"))")
            }
        }
    }

    @Test func indexesFollowUpdatesAndDeletes() throws {
        let store = try Store.temporary(schema: try TestSchemas.everyType(indexed: true))
        defer { store.close() }
        var rng = SeededGenerator(seed: 99)
        var model: [ObjectID: Value] = [:]
        let ids = try store.write { ctx in
            try (0..<300).map { i -> ObjectID in try ctx.insert("Sample", ["label": "x", "a_int32": .int32(Int32(i % 50))]).id }
        }
        for (i, id) in ids.enumerated() { model[id] = .int32(Int32(i % 50)) }
        for _ in 0..<10 {
            try store.write { ctx in
                for _ in 0..<30 {
                    let id = rng.pick(ids)
                    guard model[id] != nil else { continue }
                    if rng.chance(0.3) {
                        try ctx.delete(id, of: "Sample")
                        model[id] = nil
                    } else {
                        var object = try #require(try ctx.object(id, of: "Sample"))
                        let value: Value = rng.chance(0.2) ? .null : .int32(Int32(rng.int(60)))
                        object["a_int32"] = value
                        try ctx.update(object)
                        model[id] = value
                    }
                }
            }
            for v in 0..<60 {
                let want = Set(model.filter { $0.value == .int32(Int32(v)) }.keys)
                let got = try store.read { try $0.objects("Sample").where("a_int32", equals: .int32(Int32(v))).ids() }
                #expect(Set(got) == want)
            }
        }
        #expect(try store.verify().isClean)
    }

    @Test func rangesOverLongStringsSharingAPrefix() throws {
        // Keys of values longer than the index's inline limit end with a hash, not with the rest of the value.
        let indexed = try Store.temporary(schema: try TestSchemas.everyType(indexed: true))
        let plain = try Store.temporary(schema: try TestSchemas.everyType(indexed: false))
        defer { indexed.close(); plain.close() }
        let long = String(repeating: "m", count: 500)
        let values = [long] + "abcdefghijklmnopqrstuvwxyz".map { long + String($0) } + ["m", "n", "a"]
        var idsOf: [ObjectIdentifier: [ObjectID: String]] = [:]
        for store in [indexed, plain] {
            idsOf[ObjectIdentifier(store)] = try store.write { ctx in
                Dictionary(uniqueKeysWithValues: try values.map { (try ctx.insert("Sample", ["label": "x", "a_string": .string($0)]).id, $0) })
            }
        }
        // The values are ASCII: the documented order (by UTF-8 bytes) is Swift's string order here.
        let queries: [(String?, String?, Bool)] = [
            (long, long + "z", true), (long + "c", long + "f", false), (long + "c", nil, false),
            (nil, long + "b", false), ("m", "n", false),
        ]
        for (lower, upper, inclusive) in queries {
            for (label, store) in [("indexed", indexed), ("scanned", plain)] {
                let want = Set(idsOf[ObjectIdentifier(store)]!.filter { _, v in
                    (lower.map { v >= $0 } ?? true) && (upper.map { inclusive ? v <= $0 : v < $0 } ?? true)
                }.keys)
                let got = try store.read {
                    try $0.objects("Sample").where("a_string", from: lower.map(Value.string), to: upper.map(Value.string), upperInclusive: inclusive).ids()
                }
                #expect(!want.isEmpty)
                #expect(Set(got) == want && got.count == want.count, "\(label): \(lower.map { "\($0)".suffix(4) } ?? "nil") – \(upper.map { "\($0)".suffix(4) } ?? "nil")")
            }
        }
    }

    @Test func indexedResultsComeInIndexOrder() throws {
        let store = try Store.temporary(schema: try TestSchemas.everyType(indexed: true))
        defer { store.close() }
        try store.write { ctx in
            for v in [5, -3, 9, 0, -3, 100, 7] { try ctx.insert("Sample", ["label": "x", "a_int64": .int64(Int64(v))]) }
        }
        let values = try store.read { try $0.objects("Sample").where("a_int64", from: -10, to: 10).fetch().map { $0["a_int64"] } }
        #expect(values == [-3, -3, 0, 5, 7, 9])
    }
}
