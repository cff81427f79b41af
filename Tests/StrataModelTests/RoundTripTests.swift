import Foundation
import StrataModels
import StrataTestSupport
import Testing

/// Values of every attribute type go into the store through a macro model and come back equal, read by a new
/// transaction (and by the dynamic API, which must agree): extremes, empty and huge strings and data,
/// Unicode, nil.
@Suite struct RoundTripTests {
    static func item(_ i: Int, _ random: inout SeededGenerator) -> Library.Item {
        let strings = ["", "a", String(repeating: "é日本🙂", count: 50), "e\u{301}", "\u{0}", String(repeating: "x", count: 100_000)]
        let ints = [Int.min, -1, 0, 1, Int.max]
        let doubles = [0.0, -0.0, .greatestFiniteMagnitude, -.leastNonzeroMagnitude, .infinity, 1.5]
        return Library.Item(
            code: "item-\(i)",
            count: ints[i % ints.count],
            wide: i % 2 == 0 ? Int64.max : Int64.min,
            medium: i % 3 == 0 ? Int32.min : Int32.max,
            small: i % 2 == 0 ? Int16.min : Int16.max,
            ratio: doubles[i % doubles.count],
            weight: i % 2 == 0 ? Float.leastNormalMagnitude : -Float.greatestFiniteMagnitude,
            isActive: i % 2 == 0,
            added: Date(timeIntervalSinceReferenceDate: Double(random.int(2_000_000_000)) - 1_000_000_000 + 0.25),
            blob: i % 4 == 0 ? Data() : random.data(count: i % 3 == 0 ? 70_000 : random.int(40)),
            uid: random.uuid(),
            link: URL(string: "https://example.com/\(i)?q=\(i % 7)#frag")!,
            price: [Decimal(0), Decimal(string: "-12345678901234567890.123456789")!, Decimal(string: "0.001")!][i % 3],
            note: i % 3 == 0 ? nil : strings[i % strings.count],
            rank: i % 2 == 0 ? nil : ints[i % ints.count],
            size: .init(width: Double(i), height: -Double(i) / 3),
            kind: [.book, .disc, .tool][i % 3])
    }

    @Test("every attribute type round-trips through the store, and the dynamic API reads the same values")
    func everyType() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        var random = SeededGenerator(seed: 7)
        let inputs = (0..<60).map { Self.item($0, &random) }
        let ids = try store.write { ctx in try inputs.map { try ctx.insert($0) } }
        try store.read { ctx in
            for (input, id) in zip(inputs, ids) {
                let read = try #require(try ctx.fetch(Library.Item.self, id: id))
                var expected = input
                expected.objectID = id
                #expect(read == expected, "item \(input.code)")
                // The dynamic API sees the same values.
                let object = try #require(try ctx.object(id, of: "Item"))
                #expect(object["code"] == .string(input.code))
                #expect(object["count"] == .int64(Int64(input.count)))
                #expect(object["note"] == (input.note.map(Value.string) ?? .null))
                #expect(object["kind"] == .string(input.kind.rawValue))
                #expect(object["size"] == (try Value.encoding(input.size)))
                #expect(object["scratch"] == .string("scratch"), "transient attributes read as their default")
            }
        }
    }

    @Test("values written with the dynamic API read back through the model type")
    func dynamicToTyped() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        let id = try store.write { ctx in
            try ctx.insert("Item", [
                "code": "dyn", "wide": 5, "medium": .int32(6), "small": .int16(7), "weight": .float(1), "added": .date(Date(timeIntervalSinceReferenceDate: 9)),
                "blob": .data(Data([9])), "uid": .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))),
                "link": .url(URL(string: "https://a.b")!), "price": .decimal(Decimal(3)), "size": .codable(Data("{\"height\":2,\"width\":1}".utf8)),
                "kind": "tool",
            ]).id
        }
        let item = try #require(try store.read { try $0.fetch(Library.Item.self, id: id) })
        #expect(item.code == "dyn" && item.count == 0 && item.ratio == 1.5 && item.isActive && item.kind == .tool)
        #expect(item.size == .init(width: 1, height: 2) && item.note == nil && item.rank == nil && item.scratch == "scratch")
    }

    @Test("updates, relationships both ways, delete rules")
    func updatesAndRelationships() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        var random = SeededGenerator(seed: 3)
        let (owner, tags) = try store.write { ctx -> (ObjectID, [ObjectID]) in
            let owner = try ctx.insert(Library.Owner(name: "Ann"))
            let tags = try (0..<3).map { try ctx.insert(Library.Tag(label: "t\($0)")) }
            return (owner, tags)
        }
        var item = Self.item(1, &random)
        item.owner = owner
        item.tags = [tags[0], tags[2]]
        let id = try store.write { try $0.insert(item) }
        try store.read { ctx in
            let read = try #require(try ctx.fetch(Library.Item.self, id: id))
            #expect(read.owner == owner && read.tags == [tags[0], tags[2]])
            #expect(try ctx.fetch(Library.Owner.self, id: owner)?.items == [id])
            #expect(try ctx.fetch(Library.Tag.self, id: tags[2])?.items == [id])
            #expect(try ctx.fetch(Library.Tag.self, id: tags[1])?.items == [])
        }
        // An update changes attributes and relationships; the old values are gone from indexes.
        var changed = try #require(try store.read { try $0.fetch(Library.Item.self, id: id) })
        changed.code = "renamed"
        changed.tags = [tags[1]]
        changed.owner = nil
        try store.write { try $0.update(changed) }
        try store.read { ctx in
            let read = try #require(try ctx.fetch(Library.Item.self, id: id))
            #expect(read.code == "renamed" && read.tags == [tags[1]] && read.owner == nil)
            #expect(try ctx.objects(Library.Item.self).filter(\.code == "item-1").count() == 0)
            #expect(try ctx.objects(Library.Item.self).filter(\.code == "renamed").ids() == [id])
            #expect(try ctx.fetch(Library.Owner.self, id: owner)?.items == [])
        }
        // A value without an identifier cannot be updated.
        #expect(throws: StoreError.self) { try store.write { try $0.update(Self.item(2, &random)) } }
        // Deleting the owner cascades to its items.
        changed.owner = owner
        try store.write { try $0.update(changed) }
        try store.write { ctx in try ctx.delete(try #require(try ctx.fetch(Library.Owner.self, id: owner))) }
        #expect(try store.read { try $0.fetch(Library.Item.self, id: id) } == nil)
    }

    @Test("a unique attribute refuses a duplicate through the model type")
    func uniqueness() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        var random = SeededGenerator(seed: 4)
        let first = try store.write { try $0.insert(Self.item(1, &random)) }
        do {
            try store.write { ctx in _ = try ctx.insert(Self.item(1, &random)) }
            Issue.record("a duplicate code was accepted")
        } catch let error as StoreError {
            #expect(error.code == .uniqueConstraintViolation && error.existingObjectID == first)
        }
        #expect(try store.read { try $0.count(Library.Item.self) } == 1)
    }

    @Test("a model type of another version of the entity is refused, not misread")
    func otherVersionRefused() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        #expect {
            try store.write { _ = try $0.insert(OtherItemVersion.Item(code: "x")) }
        } throws: { error in
            (error as? StoreError)?.code == .typeMismatch
        }
    }
}

extension Library.Item: Equatable {
    public static func == (a: Library.Item, b: Library.Item) -> Bool {
        a.code == b.code && a.count == b.count && a.wide == b.wide && a.medium == b.medium && a.small == b.small
            && a.ratio.bitPattern == b.ratio.bitPattern && a.weight.bitPattern == b.weight.bitPattern && a.isActive == b.isActive
            && a.added == b.added && a.blob == b.blob && a.uid == b.uid && a.link == b.link && a.price == b.price
            && a.note == b.note && a.rank == b.rank && a.size == b.size && a.kind == b.kind && a.owner == b.owner
            && a.tags == b.tags && a.objectID == b.objectID
    }
}

/// Another version of `Item` (fewer attributes): a store of `Library` refuses it.
enum OtherItemVersion {
    @Entity struct Item {
        var code: String
    }
}
