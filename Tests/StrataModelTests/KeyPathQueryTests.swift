import Foundation
import StrataModels
import StrataTestSupport
import Testing

enum Shop: SchemaVersion {
    static let versionIdentifier = "v1"
    static let models: [any EntityModel.Type] = [Product.self]

    @Entity struct Product {
        @Field(.indexed) var price: Int
        @Field(.indexed) var name: String
        var category: String
        var rating: Double?
        var discontinued: Bool = false
        /// Unique text in each record, for damaging one record's bytes.
        var note: String
    }
}

/// Key-path queries give exactly the objects a filter of the test's own inputs gives, in order; an equality or
/// a range on an indexed attribute reads only the objects its index names.
@Suite struct KeyPathQueryTests {
    static let categories = ["tools", "books", "games", "food"]

    static func inputs() -> [Shop.Product] {
        var random = SeededGenerator(seed: 11)
        return (0..<400).map { i in
            Shop.Product(price: random.int(200), name: "product \(random.int(60))", category: categories[i % 4],
                         rating: i % 5 == 0 ? nil : Double(random.int(50)) / 10, discontinued: i % 7 == 0,
                         note: String(format: "note-%05d-marker", i))
        }
    }

    /// A store holding `inputs()`, and each input's identifier.
    static func store(_ dir: TemporaryDirectory) throws -> (Store, [(ObjectID, Shop.Product)]) {
        let store = try Store.open(at: dir.store, schema: try Schema(Shop.self))
        let inputs = Self.inputs()
        let ids = try store.write { ctx in try inputs.map { try ctx.insert($0) } }
        return (store, Array(zip(ids, inputs)))
    }

    /// The identifiers of the inputs `isIncluded` keeps, in identifier order.
    static func expected(_ rows: [(ObjectID, Shop.Product)], _ isIncluded: (Shop.Product) -> Bool) -> [ObjectID] {
        rows.filter { isIncluded($0.1) }.map(\.0)
    }

    @Test("equality, ranges, nil, and, or, not: the same objects as filtering the inputs")
    func conditions() throws {
        let dir = try TemporaryDirectory()
        let (store, rows) = try Self.store(dir)
        defer { store.close() }
        try store.read { ctx in
            let q = try ctx.objects(Shop.Product.self)
            #expect(try q.filter(\.price == 42).ids() == Self.expected(rows) { $0.price == 42 })
            #expect(try q.filter(\.name == "product 7").ids() == Self.expected(rows) { $0.name == "product 7" })
            // Index order for an indexed range: compare as sets, then the order by the index's key.
            let range = try q.filter(\.price >= 50 && \.price < 60).fetch()
            #expect(Set(range.compactMap(\.objectID)) == Set(Self.expected(rows) { $0.price >= 50 && $0.price < 60 }))
            #expect(range.map(\.price) == range.map(\.price).sorted())
            #expect(Set(try q.filter(\.price > 190).ids()) == Set(Self.expected(rows) { $0.price > 190 }))
            #expect(Set(try q.filter(\.price <= 3).ids()) == Set(Self.expected(rows) { $0.price <= 3 }))
            #expect(try q.filter(\.category == "books").ids() == Self.expected(rows) { $0.category == "books" })
            #expect(try q.filter(\.category != "books").ids() == Self.expected(rows) { $0.category != "books" })
            #expect(try q.filter(\.rating == nil).ids() == Self.expected(rows) { $0.rating == nil })
            #expect(try q.filter(\.rating != nil).ids() == Self.expected(rows) { $0.rating != nil })
            #expect(try q.filter(\.rating > 2.5).ids() == Self.expected(rows) { ($0.rating ?? -1) > 2.5 })
            #expect(try q.filter(\.discontinued == true || \.category == "food").ids()
                    == Self.expected(rows) { $0.discontinued || $0.category == "food" })
            #expect(try q.filter(!(\.category == "tools") && \.discontinued == false).ids()
                    == Self.expected(rows) { $0.category != "tools" && !$0.discontinued })
            #expect(Set(try q.filter(\.price >= 100).filter(\.category == "games").ids())
                    == Set(Self.expected(rows) { $0.price >= 100 && $0.category == "games" }))
            #expect(try q.filter { $0.note.hasSuffix("7-marker") }.ids() == Self.expected(rows) { $0.note.hasSuffix("7-marker") })
        }
    }

    @Test("sorting, limit, offset, first and count")
    func sortingAndPaging() throws {
        let dir = try TemporaryDirectory()
        let (store, rows) = try Self.store(dir)
        defer { store.close() }
        // The expected order: price descending, then identifier.
        let byPrice = rows.sorted { ($0.1.price, $1.0.rawValue) > ($1.1.price, $0.0.rawValue) }.map(\.0)
        try store.read { ctx in
            let q = try ctx.objects(Shop.Product.self)
            #expect(try q.sorted(by: \.price, ascending: false).ids() == byPrice)
            #expect(try q.sorted(by: \.price, ascending: false).limit(10).ids() == Array(byPrice.prefix(10)))
            #expect(try q.sorted(by: \.price, ascending: false).offset(5).limit(10).ids() == Array(byPrice.dropFirst(5).prefix(10)))
            #expect(try q.sorted(by: \.price, ascending: false).first()?.objectID == byPrice.first)
            // nil sorts first ascending; ties by identifier.
            let byRating = rows.sorted { a, b in
                let (x, y) = (a.1.rating ?? -.infinity, b.1.rating ?? -.infinity)
                return x != y ? x < y : a.0 < b.0
            }.map(\.0)
            #expect(try q.sorted(by: \.rating).ids() == byRating)
            #expect(try q.count() == rows.count)
            #expect(try q.filter(\.category == "games").count() == Self.expected(rows) { $0.category == "games" }.count)
            #expect(try q.limit(7).count() == 7)
            #expect(try q.offset(rows.count - 3).ids() == rows.suffix(3).map(\.0))
            #expect(try q.limit(0).fetch().isEmpty)
        }
    }

    @Test("an indexed key-path filter reads only the objects its index names: a damaged record outside the range is never decoded")
    func indexedFilterDoesNotDecodeEveryObject() throws {
        let dir = try TemporaryDirectory()
        let (store, rows) = try Self.store(dir)
        // Damage one record whose price is outside [10, 20): its checksum no longer matches.
        let victim = try #require(rows.first { $0.1.price >= 100 })
        store.close()
        #expect(try StoreFileBytes.damage(victim.1.note, in: dir.store) == 1)
        let reopened = try Store.open(at: dir.store, schema: try Schema(Shop.self))
        defer { reopened.close() }
        try reopened.read { ctx in
            let q = try ctx.objects(Shop.Product.self)
            // Through the price index: the damaged record is never read.
            #expect(Set(try q.filter(\.price >= 10 && \.price < 20).ids()) == Set(Self.expected(rows) { $0.price >= 10 && $0.price < 20 }))
            #expect(try q.filter(\.price == victim.1.price - 50).count() == Self.expected(rows) { $0.price == victim.1.price - 50 }.count)
            // Equality on the indexed name, combined with a condition the index cannot answer.
            #expect(try q.filter(\.name == "product 3" && \.category == "tools").ids()
                    == Self.expected(rows) { $0.name == "product 3" && $0.category == "tools" && $0.note != victim.1.note })
            // A filter on an attribute without an index reads every record, and meets the damaged one.
            #expect {
                try q.filter(\.category == "books").fetch()
            } throws: { error in
                (error as? StoreError)?.code == .corruptedRecord && (error as? StoreError)?.objectID == victim.0
            }
        }
    }
}
