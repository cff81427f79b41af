import Foundation
import Strata
import StrataTestKit
import StrataTutorials
import Testing

/// The books tutorial: an attribute becomes an entity through a lookup table (one Author per distinct name),
/// then an attribute becomes an entity per (book, reader) pair, with users mapped before books.
@Suite struct BooksAppTests {
    static let count = 10_000

    @Test(arguments: ["v1", "v2"])
    func migratesToV3(from version: String) throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let schema = try #require(BooksApp.plan.schema(version))
        let url = try kit.makeStore(version: schema) { try BooksApp.fill($0, version: version, count: Self.count) }
        let run = try kit.migrate(url, plan: BooksApp.plan)

        let (readerLinks, authorNames) = try run.before.read { old -> (Int, Set<String>) in
            var links = 0
            var names: Set<String> = []
            try old.objects("Book").forEach { book in
                links += try old.related(book, "readers").count
                if version == "v1" { names.insert(book["authorName"].stringValue ?? "") }
                else { names.formUnion(try old.relatedObjects(book, "authors").compactMap { $0["name"].stringValue }) }
            }
            return (links, names)
        }
        try run.after.read { new throws in
            #expect(try new.count("Book") == Self.count)
            #expect(try new.count("User") == Self.count / 10)
            #expect(try new.count("Author") == authorNames.count)
            #expect(try new.count("File") == readerLinks)
            // Exactly one Author per distinct name.
            let names = try new.objects("Author").fetch().compactMap { $0["name"].stringValue }
            #expect(Set(names) == authorNames)
            #expect(names.count == authorNames.count)
        }
        try run.before.read { old in
            try run.after.read { new throws in
                try old.objects("Book").forEach { before in
                    let after = try #require(try new.object(before.id, of: "Book"))
                    #expect(after["title"] == before["title"])
                    let authors = try new.relatedObjects(after, "authors")
                    #expect(authors.count == 1)
                    let expectedAuthor = version == "v1" ? before["authorName"] : try old.relatedObjects(before, "authors").first?["name"] ?? .null
                    #expect(authors.first?["name"] == expectedAuthor)
                    let readers = try old.related(before, "readers")
                    #expect(try new.related(after, "readers") == readers)
                    let files = try new.relatedObjects(after, "files")
                    #expect(files.count == readers.count)
                    var owners: [ObjectID] = []
                    for file in files {
                        #expect(file["url"] == before["fileURL"])
                        #expect(try new.related(file, "book") == [after.id])
                        let user = try #require(try new.relatedObjects(file, "user").first)
                        owners.append(user.id)
                        #expect(file["ownerDisplayName"] == user["displayName"])
                        #expect(user["displayName"] == .string((user["name"].stringValue ?? "").capitalized))
                    }
                    #expect(owners.sorted() == readers.sorted(), "one file per (book, reader) pair")
                }
            }
        }
        #expect(try run.after.verify().isClean)
    }

    @Test func mappingsInSeparatePassesGiveTheSameStore() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let passes = MigrationStage.custom(from: "v2", to: "v3", passes: [
            [EntityMapping(source: "User", policy: BooksApp.UserPolicy())],
            [EntityMapping(source: "Book", destinations: ["File"], policy: BooksApp.FilePolicy())],
        ])
        let plan = try MigrationPlan(schemas: BooksApp.versions, stages: [BooksApp.authorsStage, passes])
        let url = try kit.makeStore(version: BooksApp.v2) { try BooksApp.fill($0, version: "v2", count: 2_000) }
        let run = try kit.migrate(url, plan: plan)
        #expect(run.progress.contains { $0.passCount == 2 && $0.pass == 1 && $0.entity == "Book" })
        try run.after.read { new throws in
            #expect(try new.count("File") > 2_000)
            try new.objects("File").forEach { file throws in
                #expect(try new.related(file, "user").count == 1)
                #expect(try new.related(file, "book").count == 1)
            }
        }
        #expect(try run.after.verify().isClean)
    }

    @Test func booksBeforeUsersIsReportedNamingTheObject() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let wrongOrder = MigrationStage.custom(from: "v2", to: "v3", entityMappings: [
            EntityMapping(source: "Book", destinations: ["File"], policy: BooksApp.FilePolicy()),
            EntityMapping(source: "User", policy: BooksApp.UserPolicy()),
        ])
        let plan = try MigrationPlan(schemas: BooksApp.versions, stages: [BooksApp.authorsStage, wrongOrder])
        let url = try kit.makeStore(version: BooksApp.v2) { try BooksApp.fill($0, version: "v2", count: 200) }
        do {
            _ = try kit.migrate(url, plan: plan)
            Issue.record("the migration should fail")
        } catch let error as MigrationError where error.code == .stageFailed {
            #expect(error.sourceVersion == "v2" && error.destinationVersion == "v3")
            #expect(error.entity == "Book")
            #expect(error.objectID != nil)
            #expect("\(error.underlying.map { "\($0)" } ?? "")".contains("map users before books"))
            #expect(error.storeState == .at(version: "v2"))
        }
        // Rolled back: the store is whole at v2.
        let store = try Store.open(at: url, schema: BooksApp.v2)
        defer { store.close() }
        try store.read { context throws in #expect(try context.count("Book") == 200) }
        #expect(try store.verify().isClean)
    }
}
