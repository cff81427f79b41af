import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Queries: filters, sorting (several keys, both directions, nulls first), limit and offset (sorted or not),
/// count and first — compared with the same operations on plain Swift arrays — and cursors that read lazily.
@Suite struct QueryTests {
    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("group", .int16)
                Attribute("price", .double).optional()
                Attribute("tag", .string).optional().indexed()
            }
        }
    }

    /// An item as the test inserted it: its identifier and the values the test gave it (nulls included).
    struct Row: Equatable {
        var id: ObjectID
        var values: [String: Value]
        subscript(_ key: String) -> Value { values[key] ?? .null }
    }

    static let attributes = ["name", "group", "price", "tag"]

    /// Objects read from the store, as rows to compare with the test's own.
    static func rows(_ objects: [DynamicObject]) -> [Row] {
        objects.map { o in Row(id: o.id, values: Dictionary(uniqueKeysWithValues: attributes.map { ($0, o[$0]) })) }
    }

    /// A store of 1,000 items with repeated groups, some null prices and tags; and the items as the test gave
    /// them (the expectations below come from these, never from what the store returned).
    static func fixture() throws -> (Store, [Row]) {
        let store = try Store.temporary(schema: try schema())
        var rng = SeededGenerator(seed: 2024)
        let items = try store.write { ctx in
            try (0..<1000).map { i -> Row in
                let values: [String: Value] = [
                    "name": .string("item \(rng.string(length: 4))"),
                    "group": .int16(Int16(rng.int(7))),
                    "price": rng.chance(0.15) ? .null : .double(Double(rng.int(500)) / 4),
                    "tag": rng.chance(0.3) ? .null : .string(["red", "green", "blue", "amber"][rng.int(4)]),
                ]
                return Row(id: try ctx.insert("Item", values).id, values: values)
            }
        }
        return (store, items)
    }

    /// The reference order: keys by `Value.compare` (nulls first), ties by identifier.
    static func sorted(_ items: [Row], by keys: [(String, Bool)]) -> [Row] {
        items.sorted { a, b in
            for (key, ascending) in keys {
                let c = a[key].compare(b[key]) ?? .orderedSame
                if c == .orderedSame { continue }
                return ascending ? c == .orderedAscending : c == .orderedDescending
            }
            return a.id < b.id
        }
    }

    @Test func filterSortLimitOffsetMatchArrays() throws {
        let (store, items) = try Self.fixture()
        defer { store.close() }
        var rng = SeededGenerator(seed: 5)
        let keyChoices: [[(String, Bool)]] = [
            [("price", true)], [("price", false)], [("group", true), ("price", false)], [("tag", true), ("name", true)],
            [("group", false), ("tag", false), ("name", true)], [],
        ]
        for round in 0..<40 {
            let keys = rng.pick(keyChoices)
            let threshold = Double(rng.int(125))
            let limit: Int? = rng.chance(0.6) ? rng.int(40) : nil
            let offset = rng.chance(0.5) ? rng.int(30) : 0
            let useFilter = rng.chance(0.7)
            var want = useFilter ? items.filter { ($0["price"].doubleValue ?? -1) >= threshold } : items
            want = keys.isEmpty ? want : Self.sorted(want, by: keys)
            want = Array(want.dropFirst(offset))
            if let limit { want = Array(want.prefix(limit)) }
            let got = try store.read { ctx -> [DynamicObject] in
                var q = try ctx.objects("Item")
                if useFilter { q = q.filter { ($0["price"].doubleValue ?? -1) >= threshold } }
                for (key, ascending) in keys { q = try q.sorted(by: key, ascending: ascending) }
                if let limit { q = q.limit(limit) }
                q = q.offset(offset)
                #expect(try q.count() == want.count, "round \(round): count")
                #expect(try q.first()?.id == want.first?.id, "round \(round): first")
                #expect(try q.ids() == want.map(\.id), "round \(round): ids")
                return try q.fetch()
            }
            #expect(got.map(\.id) == want.map(\.id), "round \(round): keys \(keys.map(\.0)) limit \(String(describing: limit)) offset \(offset)")
            #expect(Self.rows(got) == want)
        }
    }

    @Test func comparatorSortAndAttributeConditionsCombine() throws {
        let (store, items) = try Self.fixture()
        defer { store.close() }
        let want = items.filter { $0["tag"] == "red" && $0["group"] == .int16(3) }
            .sorted { ($0["name"].stringValue ?? "") > ($1["name"].stringValue ?? "") || (($0["name"] == $1["name"]) && $0.id < $1.id) }
        let got = try store.read { ctx throws in
            try ctx.objects("Item")
                .where("tag", equals: "red")
                .where("group", equals: 3)
                .sorted { a, b in
                    let x = a["name"].stringValue ?? "", y = b["name"].stringValue ?? ""
                    return x != y ? x > y : a.id < b.id
                }
                .fetch()
        }
        #expect(got.map(\.id) == want.map(\.id))
        #expect(!got.isEmpty)
        // Conditions on several attributes, ranges included.
        let ranged = try store.read { ctx throws in
            try ctx.objects("Item").where("price", from: 10, to: 20, upperInclusive: true).where("group", from: 2, to: 4).ids()
        }
        let rangedWant = items.filter {
            guard let p = $0["price"].doubleValue, let g = $0["group"].int64Value else { return false }
            return p >= 10 && p <= 20 && g >= 2 && g < 4
        }.map(\.id)
        #expect(Set(ranged) == Set(rangedWant))
    }

    @Test func countIsRightWithAndWithoutConditions() throws {
        let (store, items) = try Self.fixture()
        defer { store.close() }
        try store.read { ctx throws in
            #expect(try ctx.count("Item") == 1000)
            #expect(try ctx.objects("Item").count() == 1000)
            #expect(try ctx.objects("Item").limit(10).count() == 10)
            #expect(try ctx.objects("Item").offset(995).count() == 5)
            #expect(try ctx.objects("Item").offset(2000).count() == 0)
            #expect(try ctx.objects("Item").limit(0).count() == 0)
            #expect(try ctx.objects("Item").offset(990).limit(50).count() == 10)
            #expect(try ctx.objects("Item").where("tag", equals: "blue").count() == items.filter { $0["tag"] == "blue" }.count)
            #expect(try ctx.objects("Item").filter { $0["price"].isNull }.count() == items.filter { $0["price"].isNull }.count)
            #expect(try ctx.objects("Item").limit(-3).fetch().isEmpty)
            // `first()` respects the query's own limit and offset.
            #expect(try ctx.objects("Item").limit(0).first() == nil)
            #expect(try ctx.objects("Item").sorted(by: "name").limit(0).first() == nil)
            #expect(try ctx.objects("Item").offset(3).limit(2).first()?.id == items[3].id)
            #expect(try ctx.objects("Item").offset(1000).first() == nil)
        }
    }

    @Test func cursorsReadLazily() throws {
        let (store, items) = try Self.fixture()
        defer { store.close() }
        let calls = Atomic<Int>(0)
        // A limited query stops filtering once it has enough.
        let firstFive = try store.read { ctx throws in
            try ctx.objects("Item").filter { _ in calls.add(1, ordering: .relaxed); return true }.limit(5).fetch()
        }
        #expect(firstFive.map(\.id) == items.prefix(5).map(\.id))
        #expect(calls.load(ordering: .relaxed) == 5)
        // Nothing runs until the query is iterated, and a cursor reads one object per `next()`.
        calls.store(0, ordering: .relaxed)
        try store.read { ctx throws in
            let query = try ctx.objects("Item")
            let filtered = query.filter { _ in calls.add(1, ordering: .relaxed); return true }
            #expect(calls.load(ordering: .relaxed) == 0)
            let cursor = try filtered.makeCursor()
            #expect(calls.load(ordering: .relaxed) == 0)
            for i in 0..<3 {
                let object = try #require(try cursor.next())
                #expect(object.id == items[i].id)
            }
            #expect(calls.load(ordering: .relaxed) == 3)
        }
        // forEach stops when its body throws.
        struct Stop: Error {}
        var seen = 0
        #expect(throws: Stop.self) {
            try store.read { ctx throws in
                try ctx.objects("Item").forEach { _ in
                    seen += 1
                    if seen == 10 { throw Stop() }
                }
            }
        }
        #expect(seen == 10)
        // An exhausted cursor keeps returning nil.
        try store.read { ctx throws in
            let cursor = try ctx.objects("Item").offset(999).makeCursor()
            #expect(try cursor.next()?.id == items[999].id)
            #expect(try cursor.next() == nil)
            #expect(try cursor.next() == nil)
        }
    }

    @Test func sortingWithNaNAndInfinitiesIsATotalOrder() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        let prices: [Value] = [.double(.nan), 3, .double(-.infinity), .null, .double(.infinity), -1, .double(-.nan), 0, .double(.nan), 2.5]
        try store.write { ctx in
            for (i, p) in prices.enumerated() { try ctx.insert("Item", ["name": .string("\(i)"), "group": 1, "price": p]) }
        }
        func names(_ ascending: Bool, limit: Int? = nil) throws -> [String] {
            try store.read { ctx in
                var q = try ctx.objects("Item").sorted(by: "price", ascending: ascending)
                if let limit { q = q.limit(limit) }
                return try q.fetch().map { $0["name"].stringValue! }
            }
        }
        // Nulls first, then numbers in order, NaNs after +∞ (in identifier order among themselves).
        let ascending = ["3", "2", "5", "7", "9", "1", "4", "0", "6", "8"]
        #expect(try names(true) == ascending)
        #expect(try names(true, limit: 6) == Array(ascending.prefix(6)))
        let descending = ["0", "6", "8", "4", "1", "9", "7", "5", "2", "3"]
        #expect(try names(false) == descending)
        #expect(try names(false, limit: 4) == Array(descending.prefix(4)))
    }

    @Test func unknownAttributesAreErrors() throws {
        let (store, _) = try Self.fixture()
        defer { store.close() }
        try store.read { ctx throws in
            #expect(throws: StoreError.unknownAttribute(entity: "Item", name: "colour")) { try ctx.objects("Item").sorted(by: "colour") }
            #expect(throws: StoreError.unknownAttribute(entity: "Item", name: "colour")) { try ctx.objects("Item").where("colour", equals: 1) }
            #expect(throws: StoreError.unknownEntity("Thing")) { try ctx.objects("Thing") }
        }
    }

    /// Scans decode each object into the storage of the previous one when the caller let it go; an object
    /// the caller keeps (from `forEach`, a cursor, or `fetch`) must keep its own values.
    @Test func objectsKeptDuringAScanKeepTheirValues() throws {
        let (store, items) = try Self.fixture()
        try store.read { ctx in
            var kept: [DynamicObject] = []
            try ctx.objects("Item").forEach { kept.append($0) }
            #expect(Self.rows(kept) == items)
            let cursor = try ctx.objects("Item").makeCursor()
            var fromCursor: [DynamicObject] = []
            while let object = try cursor.next() { fromCursor.append(object) }
            #expect(Self.rows(fromCursor) == items)
            #expect(Self.rows(try ctx.objects("Item").fetch()) == items)
            var everyOther: [DynamicObject] = []
            var n = 0
            try ctx.objects("Item").filter { _ in true }.forEach { object in
                if n % 2 == 0 { everyOther.append(object) }
                n += 1
            }
            #expect(Self.rows(everyOther) == items.enumerated().filter { $0.offset % 2 == 0 }.map(\.element))
        }
    }
}
