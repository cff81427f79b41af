import Foundation
import Synchronization
import Strata
import StrataTestSupport
import Testing

/// A dynamic policy's per-object calls — `inferredObject(for:)` for source objects of two entities in turn,
/// `makeObject`, inserts of objects and of named values, links by name — give each object its own entity's values,
/// across batches. The oracle is the test's own inputs: book `i` has title `"book i ✓"`, `10 * i` pages and
/// author `i % 3`, born in `1900 + a`.
@Suite struct DynamicPolicyTests {
    static func v1() throws -> Schema {
        try Schema("d1") {
            Entity("Author") {
                Attribute("name", .string)
                Attribute("born", .int32)
                Relationship("books", to: "Book", inverse: "author", toMany: true)
            }
            Entity("Book") {
                Attribute("title", .string)
                Attribute("pages", .int32)
                Relationship("author", to: "Author", inverse: "books")
            }
        }
    }

    static func v2() throws -> Schema {
        try Schema("d2") {
            Entity("Author") {
                Attribute("name", .string)
                Attribute("born", .int64)
                Relationship("books", to: "Book", inverse: "author", toMany: true)
            }
            Entity("Book") {
                Attribute("title", .string)
                Attribute("pages", .int64)
                Attribute("shelf", .string).defaultValue(.string("new"))
                Relationship("author", to: "Author", inverse: "books")
                Relationship("notes", to: "Note", inverse: "book", toMany: true)
            }
            Entity("Note") {
                Attribute("text", .string)
                Attribute("order", .int64)
                Relationship("book", to: "Book", inverse: "notes")
            }
        }
    }

    /// What the policy saw that differs from the oracle.
    final class Recorder: Sendable {
        let mismatches = Mutex<[String]>([])
        /// Every source book the policy was given, kept past its call (the pass decodes the next into reused storage).
        let keptBooks = Mutex<[DynamicObject]>([])
        /// Every note the policy made, kept past its insert.
        let keptNotes = Mutex<[DynamicObject]>([])
        func note(_ s: String) { mismatches.withLock { $0.append(s) } }
    }

    static func stage(_ recorder: Recorder) -> MigrationStage {
        MigrationStage.custom(from: "d1", to: "d2", entityMappings: [
            .transform("Book", destinations: ["Note"], instances: { book, ctx in
                let title = book["title"].stringValue ?? ""
                recorder.keptBooks.withLock { $0.append(book) }
                var kept = try ctx.inferredObject(for: book)
                if kept["pages"] != .int64(book["pages"].int64Value ?? -1) || kept["shelf"] != .string("new") {
                    recorder.note("\(title): inferred \(kept)")
                }
                kept["shelf"] = .string("shelf of \(title)")
                let id = try ctx.insert(kept)
                // The author's inferred object, between two books': the other entity's program.
                for author in try ctx.related(book, "author") {
                    let inferred = try ctx.inferredObject(for: author)
                    if inferred.entityName != "Author" || inferred["name"] != author["name"]
                        || inferred["born"] != .int64(author["born"].int64Value ?? -1) {
                        recorder.note("\(title): author inferred as \(inferred)")
                    }
                }
                var note = try ctx.makeObject("Note")
                note["text"] = .string("about \(title)")
                note["order"] = 1
                let first = try ctx.insert(note, keepingSourceID: false)
                let second = try ctx.insert("Note", ["text": .string("more on \(title)"), "order": .int64(2)])
                try ctx.link(first, of: "Note", "book", to: id)
                try ctx.link(id, of: "Book", "notes", to: second)
                // Not a destination of this mapping: refused by name, whatever the model holds.
                do {
                    _ = try ctx.insert("Author", ["name": .string("stray")])
                    recorder.note("\(title): inserted an Author")
                } catch let error as StoreError where error.code == .unknownEntity {}
            }),
        ])
    }

    @Test(arguments: [1, 7, 1000])
    func eachObjectGetsItsOwnEntitysValues(batch: Int) throws {
        let dir = try TemporaryDirectory("dynamic-policy")
        let books = 60
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v1())
            defer { store.close() }
            try store.write { ctx in
                let authors = try (0..<3).map { a in
                    try ctx.insert("Author", ["name": .string("author \(a) ✍︎"), "born": .int32(Int32(1900 + a))])
                }
                for i in 0..<books {
                    let book = try ctx.insert("Book", ["title": .string("book \(i) ✓"), "pages": .int32(Int32(10 * i))])
                    try ctx.link(book, "author", to: authors[i % 3])
                }
            }
        }
        let recorder = Recorder()
        let store = try Store.open(at: dir.store, migratingFrom: try Self.v1(), to: try Self.v2(), stages: [Self.stage(recorder)], batchSize: batch)
        defer { store.close() }
        #expect(recorder.mismatches.withLock { $0 } == [])
        // Kept source objects keep their own values: titles and pages still agree, every book among them.
        let kept = recorder.keptBooks.withLock { $0 }
        #expect(Set(kept.map { $0["title"].stringValue ?? "?" }) == Set((0..<books).map { "book \($0) ✓" }))
        for book in kept {
            #expect(book["title"].stringValue == "book \((book["pages"].int64Value ?? -1) / 10) ✓")
        }
        try store.read { ctx in
            let authors = try ctx.objects("Author").fetch()
            #expect(Set(authors.map { "\($0["name"].stringValue ?? "?") \($0["born"])" })
                    == Set((0..<3).map { "author \($0) ✍︎ \(Value.int64(Int64(1900 + $0)))" }))
            var seen = 0
            for book in try ctx.objects("Book").fetch() {
                let title = book["title"].stringValue ?? "?"
                guard let i = Int(title.dropFirst(5).dropLast(2)) else { Issue.record("title \(title)"); continue }
                seen += 1
                #expect(book["pages"] == .int64(Int64(10 * i)))
                #expect(book["shelf"] == .string("shelf of \(title)"))
                #expect(try ctx.relatedObjects(book, "author").map { $0["name"] } == [.string("author \(i % 3) ✍︎")])
                let notes = try ctx.relatedObjects(book, "notes").map { "\($0["order"]) \($0["text"].stringValue ?? "?")" }.sorted()
                #expect(notes == ["\(Value.int64(1)) about \(title)", "\(Value.int64(2)) more on \(title)"])
            }
            #expect(seen == books)
            #expect(try ctx.objects("Note").count() == 2 * books)
        }
        #expect(try store.verify().problems.isEmpty)
    }

    /// A policy's made objects reuse the values arrays its inserts hand back: each object made still starts from its
    /// entity's defaults (no value, where a value left over from the note before would show), and an object the
    /// policy keeps past its insert (sharing the array the insert hands back), or changes and inserts again, is left
    /// as it was.
    @Test(arguments: [1, 1000])
    func madeObjectsStartFromDefaultsAndKeptOnesStayAsTheyWere(batch: Int) throws {
        let dir = try TemporaryDirectory("dynamic-policy-reuse")
        let books = 40
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v1())
            defer { store.close() }
            try store.write { ctx in
                for i in 0..<books {
                    try ctx.insert("Book", ["title": .string("book \(i) ✓"), "pages": .int32(Int32(10 * i))])
                }
            }
        }
        let recorder = Recorder()
        let stage = MigrationStage.custom(from: "d1", to: "d2", entityMappings: [
            .transform("Book", destinations: ["Note"], instances: { book, ctx in
                try ctx.insertInferred(for: book)
                let title = book["title"].stringValue ?? ""
                var note = try ctx.makeObject("Note")
                if note["text"] != .null || note["order"] != .null { recorder.note("\(title): made \(note)") }
                note["text"] = .string("about \(title)")
                note["order"] = .int64((book["pages"].int64Value ?? 0) % 20 == 0 ? 1 : 2)
                // Inserted, then changed and inserted again: the first insert is given a copy.
                try ctx.insert(note, keepingSourceID: false)
                note["text"] = .string("again \(title)")
                // Kept, then inserted as its last use: the insert hands back the array the kept note shares.
                recorder.keptNotes.withLock { $0.append(note) }
                try ctx.insert(note, keepingSourceID: false)
            }),
        ])
        let store = try Store.open(at: dir.store, migratingFrom: try Self.v1(), to: try Self.v2(), stages: [stage], batchSize: batch)
        defer { store.close() }
        #expect(recorder.mismatches.withLock { $0 } == [])
        let expectedOrder = { (i: Int) -> Value in .int64(i % 2 == 0 ? 1 : 2) }
        let kept = recorder.keptNotes.withLock { $0 }.map { "\($0["text"].stringValue ?? "?") \($0["order"])" }
        #expect(kept == (0..<books).map { "again book \($0) ✓ \(expectedOrder($0))" })
        try store.read { ctx in
            let notes = try ctx.objects("Note").fetch().map { "\($0["text"].stringValue ?? "?") \($0["order"])" }
            #expect(notes.sorted() == (0..<books).flatMap { i in
                ["about", "again"].map { "\($0) book \(i) ✓ \(expectedOrder(i))" }
            }.sorted())
            #expect(try ctx.objects("Book").fetch().map(\.["shelf"]) == Array(repeating: .string("new"), count: books))
        }
        #expect(try store.verify().problems.isEmpty)
    }
}
