import Foundation
import Strata
import StrataModels
import StrataTestSupport
import Testing

/// Borrowed records (`Model.Record`, from `forEachRecord`): every property reads what the owned value holds, on
/// every attribute type and through older layouts' projections; a view used after its read — or, in a write,
/// after the write changes anything — throws `transactionEnded`; borrowed strings compare in place.
@Suite struct BorrowedRecordTests {
    static func item(_ i: Int) -> Library.Item {
        Library.Item(code: "code-\(i)", count: i, wide: Int64(i) << 40, medium: Int32(-i), small: Int16(i % 300), ratio: Double(i) / 7,
                     weight: Float(i) / 3, isActive: i % 2 == 0, added: Date(timeIntervalSinceReferenceDate: Double(i) * 1000),
                     blob: Data([UInt8(i % 256), 1, 2]), uid: UUID(), link: URL(string: "https://example.com/\(i)")!,
                     price: Decimal(i) / 100, note: i % 3 == 0 ? nil : "note \(i) é", rank: i % 4 == 0 ? nil : i,
                     size: .init(width: Double(i), height: 2), kind: [.book, .disc, .tool][i % 3])
    }

    @Test("every property of a borrowed record equals the owned value's, every attribute type")
    func borrowedEqualsOwned() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        let owner = try store.write { ctx -> ObjectID in
            let owner = try ctx.insert(Library.Owner(name: "Ada"))
            for i in 0..<120 {
                var item = Self.item(i)
                if i % 5 == 0 { item.owner = owner }
                try ctx.insert(item)
            }
            return owner
        }
        try store.read { ctx in
            let owned = try ctx.objects(Library.Item.self).fetch()
            var n = 0
            try ctx.objects(Library.Item.self).forEachRecord { r in
                let o = owned[n]
                n += 1
                #expect(r.objectID == o.objectID)
                #expect(try r.code.string() == o.code && r.code.equals(o.code))
                #expect(try r.count == o.count && r.wide == o.wide && r.medium == o.medium && r.small == o.small)
                #expect(try r.ratio == o.ratio && r.weight == o.weight && r.isActive == o.isActive && r.added == o.added)
                #expect(try r.blob == o.blob && r.uid == o.uid && r.link == o.link && r.price == o.price)
                #expect(try r.note?.string() == o.note)
                #expect(try r.rank == o.rank && r.size == o.size && r.kind == o.kind)
                #expect(try r.owner == o.owner && r.tags == o.tags)
                var copy = try r.model()
                copy.scratch = o.scratch
                #expect(copy.code == o.code && copy.objectID == o.objectID && copy.owner == o.owner)
            }
            #expect(n == owned.count)
            #expect(owned.filter { $0.owner == owner }.count == 24)
        }
    }

    @Test("borrowed strings compare, test prefixes and suffixes, search and hash in place")
    func borrowedStrings() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        _ = try store.write { ctx in try ctx.insert(Self.item(7)) }
        try store.read { ctx in
            try ctx.objects(Library.Item.self).forEachRecord { r in
                let note = try #require(try r.note)
                #expect(try note.equals("note 7 é") && !note.equals("note 7 e"))
                #expect(try note.hasPrefix("note") && note.hasSuffix("é") && !note.hasPrefix("é"))
                #expect(try note.contains("7 é") && !note.contains("8"))
                #expect(try note.utf8Count == "note 7 é".utf8.count && !note.isEmpty)
                var a = Hasher(), b = Hasher()
                try note.hash(into: &a)
                "note 7 é".utf8.withContiguousStorageIfAvailable { b.combine(bytes: UnsafeRawBufferPointer($0)) }
                #expect(a.finalize() == b.finalize())
            }
        }
    }

    /// Expects `body` to throw `StoreError` with code `transactionEnded`.
    static func expectEnded(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("no error: the view was read after its transaction ended or changed", sourceLocation: sourceLocation)
        } catch let error as StoreError {
            #expect(error.code == .transactionEnded, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("a view or a borrowed string used after its read throws transactionEnded; in a write, after a change")
    func viewsDoNotOutliveTheirRead() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        try store.write { ctx in for i in 0..<3 { try ctx.insert(Self.item(i)) } }
        var kept: Library.Item.Record?
        var keptCode: BorrowedString?
        try store.read { ctx in
            try ctx.objects(Library.Item.self).forEachRecord { r in
                kept = r
                keptCode = try r.code
            }
        }
        let view = try #require(kept)
        Self.expectEnded { _ = try view.count }
        Self.expectEnded { _ = try keptCode?.string() }
        try store.write { ctx in
            try ctx.objects(Library.Item.self).forEachRecord { r in
                let code = try r.code
                #expect(try code.hasPrefix("code-"))
                try ctx.insert(Library.Owner(name: "changes the store"))
                Self.expectEnded { _ = try code.string() }
                Self.expectEnded { _ = try r.count }
            }
        }
    }

    @Test("a borrowed string kept past its read stays ended while later transactions reuse its lease slot")
    func keptStringsStayEndedWhenTheirLeaseSlotIsReused() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        try store.write { ctx in for i in 0..<3 { try ctx.insert(Self.item(i)) } }
        var kept: [BorrowedString] = []
        try store.read { ctx in
            try ctx.objects(Library.Item.self).forEachRecord { kept.append(try $0.code) }
        }
        #expect(kept.count == 3)
        // A transaction takes the slot freed last: the kept strings' slot now belongs to a running transaction that
        // has made as many changes (none) as theirs had.
        for round in 0..<3 {
            try store.read { ctx in
                try ctx.objects(Library.Item.self).forEachRecord { r in
                    let code = try r.code
                    #expect(try code.hasPrefix("code-"))
                    for s in kept { Self.expectEnded { _ = try s.string() } }
                }
            }
            try store.write { ctx in
                for s in kept { Self.expectEnded { _ = try s.utf8Count } }
                try ctx.insert(Library.Owner(name: "owner \(round)"))
                for s in kept { Self.expectEnded { _ = try s.equals("code-0") } }
            }
        }
        for s in kept { Self.expectEnded { _ = try s.string() } }
    }

    @Test("records of an older layout read through its projection, borrowed as owned")
    func olderLayoutsThroughProjections() throws {
        let dir = try TemporaryDirectory("borrowed-projection")
        do {
            let v1 = try Store.open(at: dir.store, schema: try Schema(Journal.V1.self))
            try v1.write { ctx in for i in 0..<40 { try ctx.insert(Journal.V1.Note(title: "t\(i)", body: "body \(i)", words: Int32(i))) } }
            v1.close()
        }
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        let store = try Store.open(at: dir.store, schema: try Schema(Journal.V2.self),
                                   plan: try MigrationPlan(versions: [Journal.V1.self, Journal.V2.self]), configuration: configuration)
        defer { store.close() }
        try store.read { ctx in
            let owned = try ctx.objects(Journal.V2.Note.self).fetch()
            var n = 0
            try ctx.objects(Journal.V2.Note.self).forEachRecord { r in
                let o = owned[n]
                n += 1
                let headline = try r.headline.string(), words = try r.words, pinned = try r.pinned, mood = try r.mood
                #expect(headline == o.headline && words == o.words && pinned == o.pinned)
                #expect(mood == nil && o.mood == nil)
            }
            #expect(n == 40)
            let total = try ctx.objects(Journal.V2.Note.self).reduce(into: 0) { sum, r in sum += Int(try r.words) }
            #expect(total == (0..<40).reduce(0, +))
        }
    }
}
