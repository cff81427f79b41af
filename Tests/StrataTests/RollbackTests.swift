import Foundation
import Strata
import StrataTestSupport
import Testing

/// A write that throws rolls back completely: no object, link, update, delete, index entry or identifier
/// of it is visible afterwards, and the store goes on working.
@Suite struct RollbackTests {
    struct Boom: Error, Equatable {}

    /// A library of 40 authors, its oracle, and a snapshot of the data file's logical content.
    static func library() throws -> (Store, Oracle) {
        let schema = try TestSchemas.library()
        let store = try Store.temporary(schema: schema)
        let oracle = Oracle(schema: schema)
        var generator = LibraryGenerator(seed: 42)
        try generator.fill(store, oracle: oracle, authors: 40, tags: 8)
        return (store, oracle)
    }

    @Test func throwingWriteLeavesNothingBehind() throws {
        let (store, oracle) = try Self.library()
        defer { store.close() }
        let authors = oracle.ids(of: "Author"), books = oracle.ids(of: "Book"), tags = oracle.ids(of: "Tag")
        var attemptedID: ObjectID?
        #expect(throws: Boom()) {
            try store.write { ctx in
                let author = try ctx.insert("Author", ["name": "ghost", "born": .date(.now)])
                attemptedID = author.id
                let book = try ctx.insert("Book", ["title": "ghost book", "pages": 1, "isbn": "ghost-isbn"])
                try ctx.link(book, "author", to: author)
                try ctx.link(book.id, of: "Book", "tags", to: tags[0])
                var first = try #require(try ctx.object(authors[0], of: "Author"))
                first["rating"] = 99.5
                first["name"] = "renamed in a failed write"
                try ctx.update(first)
                try ctx.delete(authors[1], of: "Author")
                try ctx.link(books[0], of: "Book", "author", to: authors[2])
                try ctx.unlink(books[1], of: "Book", "tags", from: tags[1])
                // Everything is visible inside the transaction …
                #expect(try ctx.object(authors[1], of: "Author") == nil)
                #expect(try ctx.objects("Author").where("name", equals: "ghost").fetch().count == 1)
                throw Boom()
            }
        }
        // … and nothing outside it.
        #expect(try oracle.mismatches(in: store) == [])
        #expect(try store.read { try $0.objects("Author").where("name", equals: "ghost").fetch() }.isEmpty)
        #expect(try store.read { try $0.objects("Book").where("isbn", equals: "ghost-isbn").fetch() }.isEmpty)
        #expect(try store.verify().isClean)
        // The identifier counter was not advanced: the next object gets the identifier the failed write used.
        let next = try store.write { try $0.insert("Tag", ["name": "after"]).id }
        #expect(next == attemptedID)
        // The unique value the failed write used is free.
        try store.write { ctx in _ = try ctx.insert("Book", ["title": "real", "pages": 2, "isbn": "ghost-isbn"]) }
    }

    @Test func storeErrorMidWriteRollsBackEarlierChanges() throws {
        let (store, oracle) = try Self.library()
        defer { store.close() }
        let existing = try #require(oracle.objects.first { $0.value.entity == "Tag" }?.value.values["name"])
        do {
            try store.write { ctx in
                for i in 0..<50 { try ctx.insert("Tag", ["name": .string("new \(i)")]) }
                try ctx.insert("Tag", ["name": existing])
            }
            Issue.record("a duplicate unique value was accepted")
        } catch let error as StoreError where error.code == .uniqueConstraintViolation {
            #expect(error.entity == "Tag" && error.attribute == "name")
        }
        #expect(try oracle.mismatches(in: store) == [])
    }

    @Test func asyncWriteRollsBackToo() async throws {
        let (store, oracle) = try Self.library()
        defer { store.close() }
        await #expect(throws: Boom.self) {
            try await store.write { ctx in
                try ctx.insert("Tag", ["name": "async ghost"])
                throw Boom()
            }
        }
        #expect(try oracle.mismatches(in: store) == [])
        // The writer is free again.
        let count = try await store.write { ctx in try ctx.insert("Tag", ["name": "async real"]); return try ctx.count("Tag") }
        #expect(count == oracle.ids(of: "Tag").count + 1)
    }

    @Test func nestedWriteIsRefusedAndOuterStillCommits() throws {
        let (store, oracle) = try Self.library()
        defer { store.close() }
        let id = try store.write { ctx -> ObjectID in
            #expect(throws: StoreError.nestedWriteTransaction) { try store.write { try $0.insert("Tag", ["name": "inner"]) } }
            return try ctx.insert("Tag", ["name": "outer"]).id
        }
        oracle.insert("Tag", id: id, ["name": "outer"])
        #expect(try oracle.mismatches(in: store) == [])
    }

    @Test func contextUsedAfterItsTransactionThrows() throws {
        let (store, _) = try Self.library()
        defer { store.close() }
        let escaped = try store.read { $0 }
        #expect(throws: StoreError.transactionEnded) { try escaped.count("Author") }
        let cursor = try store.read { try $0.objects("Author").makeCursor() }
        #expect(throws: StoreError.transactionEnded) { try cursor.next() }
    }
}
