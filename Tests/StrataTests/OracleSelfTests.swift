import Foundation
import Strata
import StrataTestSupport
import Testing

/// The oracle the other suites rely on notices every kind of difference: a wrong value, a missing or extra
/// object, a link missing on either side, an index that does not find an object.
@Suite struct OracleSelfTests {
    @Test func detectsEveryKindOfDifference() throws {
        let schema = try TestSchemas.library()
        let store = try Store.temporary(schema: schema)
        defer { store.close() }
        let oracle = Oracle(schema: schema)
        var generator = LibraryGenerator(seed: 5)
        try generator.fill(store, oracle: oracle, authors: 20, tags: 5)
        #expect(try oracle.mismatches(in: store) == [])

        let book = oracle.ids(of: "Book")[0]
        let author = try #require(oracle.targets(book, "author").first)

        let wrongValue = oracle.copy()
        wrongValue.set(book, "pages", .int32(-1))
        #expect(try wrongValue.mismatches(in: store).count >= 1)

        let missing = oracle.copy()
        missing.remove(oracle.ids(of: "Tag")[0])
        #expect(try missing.mismatches(in: store).contains { $0.hasPrefix("unexpected Tag") })

        let extra = oracle.copy()
        extra.insert("Tag", id: ObjectID(rawValue: 999_999), ["name": "ghost"])
        #expect(try extra.mismatches(in: store).contains { $0.hasPrefix("missing Tag") })

        let unlinked = oracle.copy()
        unlinked.unlink(book, "author", author)
        let differences = try unlinked.mismatches(in: store)
        #expect(differences.contains { $0.hasPrefix("Book \(book).author") })
        #expect(differences.contains { $0.hasPrefix("Author \(author).books") })

        // A store whose index lost an entry: the lookup check sees it (an update through a model without the
        // index leaves the old key behind — simulated here by changing the oracle's value instead).
        let stale = oracle.copy()
        stale.set(author, "name", "not the stored name")
        #expect(try stale.mismatches(in: store).contains { $0.hasPrefix("lookup Author.name") })
    }

    /// The oracle's expectations come from what the test gave: a left-out attribute takes the default the
    /// model declares, a number its attribute's type by the oracle's own rule — and a store that filled or
    /// converted otherwise disagrees with it.
    @Test func expectationsComeFromTheInputs() throws {
        let schema = try TestSchemas.library()
        let store = try Store.temporary(schema: schema)
        defer { store.close() }
        let oracle = Oracle(schema: schema)
        let values: [String: Value] = ["name": "ann", "born": .date(Date(timeIntervalSinceReferenceDate: 0))]
        let author = try store.write { try $0.insert("Author", values).id }
        oracle.insert("Author", id: author, values)
        #expect(oracle.objects[author]?.values["rating"] == .double(0))
        let book: [String: Value] = ["title": "t", "pages": .int64(300)]
        let bookID = try store.write { try $0.insert("Book", book).id }
        oracle.insert("Book", id: bookID, book)
        #expect(oracle.objects[bookID]?.values["pages"] == .int32(300))
        #expect(oracle.objects[bookID]?.values["price"] == .null)
        #expect(try oracle.mismatches(in: store) == [])
        // The store holding another value than the one the test gave is a mismatch.
        try store.write { ctx in
            var a = try #require(try ctx.object(author, of: "Author"))
            a["rating"] = .double(1)
            try ctx.update(a)
        }
        let differences = try oracle.mismatches(in: store)
        #expect(differences.count == 1 && differences.first?.hasPrefix("Author \(author).rating") == true, "\(differences)")
    }
}
