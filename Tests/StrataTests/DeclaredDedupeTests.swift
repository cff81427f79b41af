import Foundation
import Strata
import StrataTestSupport
import Testing

/// A declared lookup-table dedupe: books' `authorName` becomes one `Author(name:)` per distinct name, each book
/// linked to its author, across many tiny batches and a resumed migration.
@Suite struct DeclaredDedupeTests {
    static func v1() throws -> Schema {
        try Schema("b1") {
            Entity("Book") {
                Attribute("title", .string)
                Attribute("authorName", .string).optional()
            }
        }
    }

    static func v2() throws -> Schema {
        try Schema("b2") {
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Author", inverse: "books")
            }
            Entity("Author") {
                Attribute("name", .string).unique()
                Attribute("country", .string)
                Relationship("books", to: "Book", inverse: "author", toMany: true)
            }
        }
    }

    static let mapping = EntityMapping.deduplicate("authorName", of: "Book", into: "Author", as: "name", linkedBy: "author",
                                                   values: ["country": .constant("unknown")])

    static func plan() throws -> MigrationPlan {
        try MigrationPlan(schemas: [try v1(), try v2()], stages: [.custom(from: "b1", to: "b2", entityMappings: [mapping])])
    }

    /// `count` books by a few dozen authors (unicode names, some without an author).
    static func books(_ count: Int, seed: UInt64) -> [(title: String, author: String?)] {
        var rng = SplitMix(seed: seed)
        let names = (0..<37).map { "\(DeclaredFixtures.texts[$0 % DeclaredFixtures.texts.count]) #\($0 % 29)" }
        return (0..<count).map { i in
            let r = rng.next() % 8
            return ("book \(i)", r == 0 ? nil : names[Int(rng.next() % UInt64(names.count))])
        }
    }

    static func makeStore(_ url: URL, _ books: [(title: String, author: String?)]) throws {
        let store = try Store.open(at: url, schema: try v1())
        defer { store.close() }
        try store.write { ctx in
            for b in books { try ctx.insert("Book", ["title": .string(b.title), "authorName": b.author.map(Value.string) ?? .null]) }
        }
    }

    /// Everything wrong with the migrated store, against the inputs.
    static func mismatches(_ store: Store, _ books: [(title: String, author: String?)]) throws -> [String] {
        try store.read { ctx in
            var out: [String] = []
            let authors = try ctx.objects("Author").fetch()
            let expectedNames = Set(books.compactMap(\.author))
            if authors.count != expectedNames.count { out.append("\(authors.count) authors for \(expectedNames.count) names") }
            if Set(authors.compactMap { $0["name"].stringValue }) != expectedNames { out.append("author names differ") }
            if !authors.allSatisfy({ $0["country"] == "unknown" }) { out.append("a country is not the constant") }
            let stored = try ctx.objects("Book").fetch().sorted { $0.id.rawValue < $1.id.rawValue }
            if stored.count != books.count { out.append("\(stored.count) books") }
            for (book, input) in zip(stored, books) {
                if book["title"] != .string(input.title) { out.append("book \(book.id) title") }
                let linked = try ctx.relatedObjects(book, "author")
                if linked.map({ $0["name"] }) != (input.author.map { [Value.string($0)] } ?? []) {
                    out.append("book \(book.id) (\(input.author ?? "nil")) is linked to \(linked.map { $0["name"] })")
                }
            }
            for author in authors {
                let titles = Set(try ctx.relatedObjects(author, "books").compactMap { $0["title"].stringValue })
                if titles != Set(books.filter { $0.author == author["name"].stringValue }.map(\.title)) {
                    out.append("author \(author["name"]) has the wrong books")
                }
            }
            return out
        }
    }

    @Test(arguments: [(0, 1), (1, 1), (200, 3), (200, 1000)])
    func oneAuthorPerDistinctNameEveryLinkRight(_ count: Int, _ batch: Int) throws {
        let books = Self.books(count, seed: UInt64(count * 31 + batch))
        let dir = try TemporaryDirectory("declared-dedupe")
        try Self.makeStore(dir.store, books)
        let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: try Self.plan(),
                                   configuration: DeclaredFixtures.configuration(batchSize: batch))
        defer { store.close() }
        #expect(try Self.mismatches(store, books) == [])
        #expect(try store.verify().problems.isEmpty)
    }

    @Test(arguments: [1, 3, 8])
    func aStoppedDedupeResumesWithoutDuplicates(stopAfter: Int) throws {
        let books = Self.books(150, seed: 77)
        let dir = try TemporaryDirectory("declared-dedupe-resume")
        try Self.makeStore(dir.store, books)
        let batches = Counter()
        #expect(throws: MigrationError.self) {
            _ = try Store.open(at: dir.store, schema: try Self.v2(), plan: try Self.plan(),
                               configuration: DeclaredFixtures.configuration(batchSize: 10) { batches.increment() > stopAfter })
        }
        let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: try Self.plan(),
                                   configuration: DeclaredFixtures.configuration(batchSize: 10))
        defer { store.close() }
        #expect(try Self.mismatches(store, books) == [])
    }
}
