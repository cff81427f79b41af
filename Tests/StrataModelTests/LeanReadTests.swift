import Foundation
@testable import Strata
import StrataModels
import StrataTestKit
import StrataTestSupport
import Testing

/// The lean read paths — every field located once per record and plain fields read in place (owned `@Entity`
/// values, borrowed records, record views, aggregates) — read exactly what the general decoder of the dynamic API
/// reads: every attribute type, texts whose length takes one, two or three bytes, older layouts through their
/// projections; damaged records give a typed error on every one of them.
@Suite struct LeanReadTests {
    /// Each stored type reads and writes the field type code the catalog gives its attribute type: the generated
    /// code's one source of it (`ModelScalar.fieldCode`) agrees with the store's (`TypeCode`).
    @Test("every stored type's field code is its attribute type's code in the catalog")
    func fieldCodesAreTheCatalogs() {
        let types: [any ModelScalar.Type] = [Int.self, Int64.self, Int32.self, Int16.self, Double.self, Float.self,
                                             Bool.self, String.self, Date.self, Data.self, UUID.self, URL.self, Decimal.self]
        for type in types {
            #expect(type.fieldCode == TypeCode.code(type.attributeType), "\(type)")
        }
    }

    /// Texts of every length class: empty, Unicode, a one-byte length (127), two (128, 300), three (20,000).
    static let texts = ["", "é🙂日本", String(repeating: "a", count: 127), String(repeating: "b", count: 128),
                        String(repeating: "ü", count: 150), String(repeating: "c", count: 20_000)]

    static func item(_ i: Int) -> Library.Item {
        var item = BorrowedRecordTests.item(i)
        item.code = "\(i)-" + texts[i % texts.count]
        item.note = i % 4 == 3 ? nil : texts[(i + 1) % texts.count]
        item.blob = Data(texts[(i + 2) % texts.count].utf8)
        if i % 7 == 0 { item.wide = i % 2 == 0 ? .max : .min }
        if i % 11 == 0 { item.ratio = -.infinity }
        return item
    }

    /// Each stored attribute of `o` as the dynamic API's value.
    static func values(_ o: Library.Item) -> [String: Value] {
        ["code": o.code.queryValue, "count": o.count.queryValue, "wide": o.wide.queryValue, "medium": o.medium.queryValue,
         "small": o.small.queryValue, "ratio": o.ratio.queryValue, "weight": o.weight.queryValue, "isActive": o.isActive.queryValue,
         "added": o.added.queryValue, "blob": o.blob.queryValue, "uid": o.uid.queryValue, "link": o.link.queryValue,
         "price": o.price.queryValue, "note": o.note.map(\.queryValue) ?? .null, "rank": o.rank.map(\.queryValue) ?? .null,
         "kind": .string(o.kind.rawValue)]
    }

    /// Each stored attribute of a borrowed record, as the dynamic API's value.
    static func values(_ r: Library.Item.Record) throws -> [String: Value] {
        ["code": try r.code.string().queryValue, "count": try r.count.queryValue, "wide": try r.wide.queryValue,
         "medium": try r.medium.queryValue, "small": try r.small.queryValue, "ratio": try r.ratio.queryValue,
         "weight": try r.weight.queryValue, "isActive": try r.isActive.queryValue, "added": try r.added.queryValue,
         "blob": try r.blob.queryValue, "uid": try r.uid.queryValue, "link": try r.link.queryValue, "price": try r.price.queryValue,
         "note": try r.note.map { try $0.string().queryValue } ?? .null, "rank": try r.rank.map(\.queryValue) ?? .null,
         "kind": .string(try r.kind.rawValue)]
    }

    /// Each stored attribute of a dynamic object (the general decoder's values).
    static func values(general g: DynamicObject) -> [String: Value] {
        var out: [String: Value] = [:]
        for name in ["code", "count", "wide", "medium", "small", "ratio", "weight", "isActive", "added", "blob", "uid", "link",
                     "price", "note", "rank", "kind"] { out[name] = g[name] }
        return out
    }

    @Test("owned values, fetches by ID, borrowed records and record views read what the general decoder reads")
    func leanReadsEqualTheGeneralDecoder() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        try store.write { ctx in for i in 0..<60 { try ctx.insert(Self.item(i)) } }
        try store.read { ctx in
            let general = try ctx.objects("Item").fetch()
            let owned = try ctx.objects(Library.Item.self).fetch()
            #expect(owned.count == 60 && general.count == 60)
            for (o, g) in zip(owned, general) {
                #expect(o.objectID == g.id)
                #expect(Self.values(o) == Self.values(general: g))
                let byID = try #require(try ctx.fetch(Library.Item.self, id: g.id))
                #expect(Self.values(byID) == Self.values(o))
            }
            var n = 0
            try ctx.objects(Library.Item.self).forEachRecord { r in
                let g = general[n]
                n += 1
                let code = try r.code
                #expect(try code.string() == g["code"].stringValue)
                #expect(try code.equals(g["code"].stringValue ?? "-"))
                #expect(try code.utf8Count == g["code"].stringValue?.utf8.count)
                #expect(try Self.values(r) == Self.values(general: g))
            }
            #expect(n == 60)
            n = 0
            try ctx.forEachView(of: "Item") { v in
                let g = general[n]
                n += 1
                var read: [String: Value] = [:]
                for name in ["count", "wide", "medium", "small", "rank"] { read[name] = try v.int64(name).map(Value.int64) ?? .null }
                for name in ["ratio", "weight", "count"] { read[name + ".double"] = try v.double(name).map(Value.double) ?? .null }
                read["isActive"] = try v.bool("isActive").map(Value.bool) ?? .null
                read["added"] = try v.date("added").map(Value.date) ?? .null
                read["uid"] = try v.uuid("uid").map(Value.uuid) ?? .null
                for name in ["code", "note"] { read[name] = try v.withBytes(of: name) { Value.string(String(decoding: $0, as: UTF8.self)) } ?? .null }
                for name in ["price", "link", "blob"] { read[name] = try v.value(name) }
                var expected: [String: Value] = [:]
                for name in ["count", "wide", "medium", "small", "rank"] { expected[name] = g[name].int64Value.map(Value.int64) ?? .null }
                for name in ["ratio", "weight", "count"] { expected[name + ".double"] = g[name].doubleValue.map(Value.double) ?? .null }
                for name in ["isActive", "added", "uid", "code", "note", "price", "link", "blob"] { expected[name] = g[name] }
                #expect(read == expected)
            }
            #expect(n == 60)
        }
    }

    @Test("older layouts (renamed, added, defaulted, widened) read alike through every path")
    func olderLayoutsReadAlike() throws {
        let dir = try TemporaryDirectory("lean-projection")
        let store = try Self.journalOfOlderLayouts(dir, count: 30) { i in
            Journal.V1.Note(title: Self.texts[i % Self.texts.count], body: "b\(i)", words: Int32(i - 15) * 1000)
        }
        defer { store.close() }
        try store.read { ctx in
            let general = try ctx.objects("Note").fetch()
            let owned = try ctx.objects(Journal.V3.Note.self).fetch()
            #expect(general.count == 31 && owned.count == 31)
            for (o, g) in zip(owned, general) {
                #expect(g["headline"] == .string(o.headline) && g["body"] == .string(o.body) && g["words"] == .int64(o.words))
                #expect(g["pinned"] == .bool(o.pinned) && g["mood"] == (o.mood.map(Value.string) ?? .null))
            }
            var n = 0
            try ctx.objects(Journal.V3.Note.self).forEachRecord { r throws in
                let o = owned[n]
                n += 1
                #expect(try r.headline.string() == o.headline)
                #expect(try r.words == o.words)
                #expect(try r.pinned == o.pinned)
                #expect(try r.mood?.string() == o.mood)
            }
            #expect(n == 31)
            #expect(try ctx.objects(Journal.V3.Note.self).sum(\.words) == owned.reduce(0) { $0 + $1.words })
            #expect(try ctx.objects(Journal.V3.Note.self).filter(\.words >= 0).max(\.words) == owned.map(\.words).max())
            #expect(try ctx.objects(Journal.V3.Note.self).filter(\.pinned == false).min(\.words) == owned.filter { !$0.pinned }.map(\.words).min())
        }
    }

    /// A journal of `count` notes written as v1 (`note(i)`), opened as v3 (`words` widened, `pinned` and `mood` added)
    /// without the sweep, so that they keep v1's layout, and one note written as v3 (`words` 2^40, pinned).
    static func journalOfOlderLayouts(_ dir: TemporaryDirectory, count: Int, _ note: (Int) -> Journal.V1.Note) throws -> Store {
        do {
            let v1 = try Store.open(at: dir.store, schema: try Schema(Journal.V1.self))
            try v1.write { ctx in
                for i in 0..<count { try ctx.insert(note(i)) }
            }
            v1.close()
        }
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        let store = try Store.open(at: dir.store, schema: try Schema(Journal.V3.self),
                                   plan: try MigrationPlan(versions: [Journal.V1.self, Journal.V2.self, Journal.V3.self]),
                                   configuration: configuration)
        _ = try store.write { ctx in try ctx.insert(Journal.V3.Note(headline: "new", body: "n", words: 1 << 40, pinned: true, mood: "ok")) }
        return store
    }

    @Test("aggregates with and without field conditions equal a fold over the general decoder's values", arguments: [1, 2, 3])
    func aggregatesEqualAGeneralFold(seed: UInt64) throws {
        typealias Entry = AggregateTests.Ledger.Entry
        let store = try Store.temporary(schema: try Schema(AggregateTests.Ledger.self))
        defer { store.close() }
        try AggregateTests.fill(store, count: 400, seed: seed, extremes: true)
        try store.read { ctx in
            let all = try ctx.objects("Entry").fetch()
            func check(_ query: ModelQuery<Entry>, _ keep: (DynamicObject) -> Bool, _ label: String) throws {
                let kept = all.filter(keep)
                let deltas = kept.compactMap { $0["delta"].int64Value }
                let amounts = kept.compactMap { $0["amount"].int64Value }
                #expect(try query.count() == kept.count, "\(label) count")
                #expect(try query.sum(\.delta, as: Int64.self) == deltas.reduce(0, +), "\(label) sum")
                #expect(try query.min(\.delta).map(Int64.init) == deltas.min(), "\(label) min")
                #expect(try query.max(\.delta).map(Int64.init) == deltas.max(), "\(label) max")
                #expect(try query.min(\.amount).map(Int64.init) == amounts.min(), "\(label) min amount")
                #expect(try query.average(\.delta) == (deltas.isEmpty ? nil : deltas.reduce(0.0) { $0 + Double($1) } / Double(deltas.count)), "\(label) average")
                #expect(try query.max(\.note) == kept.compactMap { $0["note"].stringValue }.max(by: AggregateTests.utf8Less), "\(label) max note")
                #expect(try query.sum(\.rate) == kept.reduce(0.0) { $0 + ($1["rate"].doubleValue ?? 0) }, "\(label) sum of doubles")
            }
            let q = try ctx.objects(Entry.self)
            try check(q, { _ in true }, "all")
            try check(q.filter(\.delta >= 0), { ($0["delta"].int64Value ?? -1) >= 0 }, "delta >= 0")
            try check(q.filter(\.label >= "b"), { $0["label"].stringValue.map { !AggregateTests.utf8Less($0, "b") } ?? false }, "label >= b")
            try check(q.filter(\.rate < 0 || \.label == "🙂"), { ($0["rate"].doubleValue ?? 0) < 0 || $0["label"] == .string("🙂") }, "or")
            try check(q.filter(\.delta > 5000), { _ in false }, "nothing")
        }
    }

    @Test("a record view and a borrowed record used after their closure throw transactionEnded")
    func viewsEndWithTheirClosure() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        try store.write { ctx in for i in 0..<3 { try ctx.insert(Self.item(i)) } }
        var view: ObjectView?
        var record: Library.Item.Record?
        try store.read { ctx in
            try ctx.forEachView(of: "Item") { view = $0 }
            try ctx.objects(Library.Item.self).forEachRecord { record = $0 }
            // Still inside the read, but after the closures.
            BorrowedRecordTests.expectEnded { _ = try view?.int64("wide") }
            BorrowedRecordTests.expectEnded { _ = try record?.wide }
            BorrowedRecordTests.expectEnded { _ = try record?.code }
        }
        BorrowedRecordTests.expectEnded { _ = try view?.withBytes(of: "code") { $0.count } }
        BorrowedRecordTests.expectEnded { _ = try record?.note }
        BorrowedRecordTests.expectEnded { _ = try record?.model() }
    }

    /// Replaces the stored record of `id` with `edit(bytes)`, resealed with the checksum its key needs (so the
    /// damage reaches the field walk).
    static func damage(_ store: Store, _ id: ObjectID, _ edit: ([UInt8]) -> [UInt8]) throws {
        try store.write { ctx in
            let binding = try ctx.binding("Item")
            let bytes = try #require(try ObjectKey.with(id.rawValue) { try ctx.txn.get(binding.dbi, key: $0).map { Array($0) } })
            var body = edit(Array(bytes.dropLast(4)))
            let crc = body.withUnsafeBytes { RecordCodec.checksum(body: $0, entityTag: binding.tag, id: id.rawValue) }
            withUnsafeBytes(of: crc.littleEndian) { body.append(contentsOf: $0) }
            try ObjectKey.with(id.rawValue) { key in try body.withUnsafeBytes { _ = try ctx.txn.put(binding.dbi, key: key, value: $0) } }
        }
    }

    @Test("damaged records (resealed) give a typed error through every lean path", arguments: ["trailing", "truncated", "boolean", "utf8"])
    func damagedRecordsGiveTypedErrors(damage: String) throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        let ids = try store.write { ctx in try (0..<5).map { try ctx.insert(BorrowedRecordTests.item($0)) } }
        let victim = ids[2]
        try Self.damage(store, victim) { body in
            switch damage {
            case "trailing": return body + [0xAB]
            case "truncated": return Array(body.dropLast(3))
            case "boolean": return Self.settingBoolean(body)
            default:
                // The code's bytes ("code-2") made invalid UTF-8.
                var b = body
                if let i = b.firstIndex(of: UInt8(ascii: "-")) { b[i] = 0xFF }
                return b
            }
        }
        func expectCorrupted(_ label: String, _ body: () throws -> Void) {
            do {
                try body()
                Issue.record("\(damage): \(label) read the damaged record")
            } catch let error as StoreError {
                #expect(error.code == .corruptedRecord, "\(damage): \(label): \(error)")
                #expect(error.objectID == victim || error.objectID == nil, "\(damage): \(label): \(error)")
            } catch {
                Issue.record("\(damage): \(label): untyped error \(error)")
            }
        }
        try store.read { ctx in
            let q = try ctx.objects(Library.Item.self)
            expectCorrupted("fetch") { _ = try q.fetch() }
            expectCorrupted("fetch by ID") { _ = try ctx.fetch(Library.Item.self, id: victim) }
            if damage != "utf8" {
                // Invalid UTF-8 is found where text is decoded (owned values); the walk and in-place reads do not decode it.
                expectCorrupted("borrowed records") { try q.forEachRecord { _ = try $0.wide } }
                expectCorrupted("record views") { try ctx.forEachView(of: "Item") { _ = try $0.int64("wide") } }
                expectCorrupted("sum") { _ = try q.sum(\.medium) }
                expectCorrupted("filtered max") { _ = try q.filter(\.count >= 0).max(\.wide) }
                expectCorrupted("filtered count") { _ = try q.filter(\.isActive == true || \.isActive == false).count() }
                expectCorrupted("average") { _ = try q.average(\.ratio) }
            } else {
                expectCorrupted("borrowed model()") { try q.forEachRecord { _ = try $0.model() } }
                expectCorrupted("min of the damaged string") { _ = try q.min(\.code) }
            }
            // The other objects still read.
            for id in ids where id != victim { #expect(try ctx.fetch(Library.Item.self, id: id)?.objectID == id) }
        }
    }

    /// A record body of `Library.Item` with its Boolean field's byte (`isActive`, the 8th field) set to 2, found by
    /// skipping the fields before it: format, layout ID, a 3-byte null bitmap, then the fields in layout order.
    static func settingBoolean(_ body: [UInt8]) -> [UInt8] {
        var b = body
        b.withUnsafeMutableBytes { raw in
            var reader = BinaryReader(UnsafeRawBufferPointer(raw))
            _ = try? reader.u8()
            _ = try? reader.varint()
            reader.offset += 3
            for type: AttributeType in [.string, .int64, .int64, .int32, .int16, .double, .float] { _ = try? FieldCodec.skip(type, in: &reader) }
            raw[reader.offset] = 2
        }
        return b
    }
}
