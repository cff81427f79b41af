import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A record damaged on disk (bytes flipped inside `data.mdb` while the store is closed) is reported as
/// ``StoreError/corruptedRecord(entity:id:reason:)`` naming its entity and object — never a crash or a wrong
/// value — while every other record stays readable and `verify()` lists the damaged one.
@Suite struct CorruptedRecordTests {
    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("Note") {
                Attribute("text", .string)
                Attribute("n", .int64).indexed()
            }
            Entity("Other") { Attribute("x", .int64) }
        }
    }

    @Test func flippedBytesGiveATypedErrorNamingTheObject() throws {
        let dir = try TemporaryDirectory("corrupt")
        let marker = "needle-7f3a9c-unique-marker"
        var ids: [ObjectID] = []
        var damagedID = ObjectID(rawValue: 0)
        do {
            let store = try Store.open(at: dir.store, schema: try Self.schema())
            defer { store.close() }
            ids = try store.write { ctx in
                try (0..<300).map { i in
                    let text = i == 150 ? "prefix \(marker) suffix" : "ordinary note \(i)"
                    return try ctx.insert("Note", ["text": .string(text), "n": .int64(Int64(i))]).id
                }
            }
            damagedID = ids[150]
            try store.write { ctx in for i in 0..<20 { try ctx.insert("Other", ["x": .int64(Int64(i))]) } }
        }
        // With the store closed, flip bytes of the marker wherever it is in the file.
        let damaged = try StoreFileBytes.damage(marker, in: dir.store, count: 4)
        #expect(damaged >= 1)

        let store = try Store.open(at: dir.store, schema: try Self.schema())
        defer { store.close() }
        try store.read { ctx in
            do {
                _ = try ctx.object(damagedID, of: "Note")
                Issue.record("the damaged record was read")
            } catch let error as StoreError {
                guard error.code == .corruptedRecord else {
                    Issue.record("unexpected error \(error)")
                    return
                }
                #expect(error.entity == "Note")
                #expect(error.objectID == damagedID)
                #expect(!(error.reason ?? "").isEmpty)
                #expect(error.description.contains("Note"))
                #expect(error.description.contains(damagedID.description))
            }
            // Every other record reads back with its values.
            for (i, id) in ids.enumerated() where id != damagedID {
                let note = try #require(try ctx.object(id, of: "Note"))
                #expect(note["text"] == .string("ordinary note \(i)"))
                #expect(note["n"] == .int64(Int64(i)))
            }
            #expect(try ctx.count("Other") == 20)
            #expect(try ctx.objects("Other").fetch().count == 20)
            // A lookup through the index that reaches the damaged object reports it too.
            #expect(throws: StoreError.self) { try ctx.objects("Note").where("n", equals: 150).fetch() }
            #expect(try ctx.objects("Note").where("n", equals: 149).fetch().count == 1)
            // A scan that reaches it stops with the same typed error, not a wrong value.
            #expect(throws: StoreError.self) { try ctx.objects("Note").fetch() }
        }
        let report = try store.verify()
        let corrupted = report.problems.filter { $0.kind == .corruptedRecord }
        #expect(corrupted.count == 1)
        #expect(corrupted.first?.entity == "Note")
        #expect(corrupted.first?.objectID == damagedID.rawValue)
        #expect(report.objectsChecked == 320)
        // Writes to other objects still work, and deleting the damaged object is not blocked by its bytes.
        _ = try store.write { ctx in try ctx.insert("Note", ["text": "after", "n": 1000]) }
        #expect(try store.read { try $0.objects("Note").where("n", equals: 1000).fetch().count } == 1)
    }

    @Test func aRecordMovedUnderAnotherKeyIsDetected() throws {
        // The checksum covers the object ID: the bytes of one record stored under another ID are refused.
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        let (a, b) = try store.write { ctx in
            (try ctx.insert("Note", ["text": "a", "n": 1]).id, try ctx.insert("Note", ["text": "b", "n": 2]).id)
        }
        try store.write { ctx in
            let dbi = try ctx.binding("Note").dbi
            let bytes = try #require(try ObjectKey.with(a.rawValue) { try ctx.txn.get(dbi, key: $0).map { Array($0) } })
            try ObjectKey.with(b.rawValue) { key in
                try bytes.withUnsafeBytes { value in _ = try ctx.txn.put(dbi, key: key, value: value) }
            }
        }
        try store.read { ctx in
            #expect(throws: StoreError.corruptedRecord(entity: "Note", id: b, reason: "checksum mismatch")) {
                try ctx.object(b, of: "Note")
            }
            let text = try ctx.object(a, of: "Note")?["text"]
            #expect(text == "a")
        }
    }
}
