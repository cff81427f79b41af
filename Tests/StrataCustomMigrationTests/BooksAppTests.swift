import Foundation
import Strata
import StrataTestKit
import StrataTutorials
import Testing

/// The books tutorial: an attribute becomes an entity through a lookup table (one Author per distinct name),
/// then an attribute becomes an entity per (book, reader) pair, with users mapped before books.
@Suite struct BooksAppTests {
    static let count = 10_000

    /// Checks a store migrated to v3 against what `fill` wrote (the test's input, not the store before the
    /// migration): one author per distinct name, each book with its own title, author and readers, one file
    /// per (book, reader) pair linked to both, and users with their display names.
    static func expectV3(_ store: Store, _ contents: BooksApp.Contents, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try store.read { new throws in
            let authorNames = Set(contents.books.map(\.author))
            #expect(try new.count("Book") == contents.books.count, sourceLocation: sourceLocation)
            #expect(try new.count("User") == contents.users.count, sourceLocation: sourceLocation)
            #expect(try new.count("Author") == authorNames.count, sourceLocation: sourceLocation)
            #expect(try new.count("File") == contents.books.reduce(0) { $0 + $1.readers.count }, sourceLocation: sourceLocation)
            var users: [String: DynamicObject] = [:]
            try new.objects("User").forEach { if let name = $0["name"].stringValue { users[name] = $0 } }
            var usersByID: [ObjectID: String] = [:]
            let userIndex = Dictionary(uniqueKeysWithValues: contents.users.enumerated().map { ($1, $0) })
            for (r, name) in contents.users.enumerated() {
                let user = try #require(users[name], "user \(name) is missing", sourceLocation: sourceLocation)
                #expect(user["displayName"] == .string("Reader \(r)"), sourceLocation: sourceLocation)
                usersByID[user.id] = name
            }
            // Exactly one Author per distinct name.
            let names = try new.objects("Author").fetch().compactMap { $0["name"].stringValue }
            #expect(Set(names) == authorNames && names.count == authorNames.count, sourceLocation: sourceLocation)
            var books: [String: DynamicObject] = [:]
            try new.objects("Book").forEach { if let title = $0["title"].stringValue { books[title] = $0 } }
            for input in contents.books {
                let book = try #require(books[input.title], "\(input.title) is missing", sourceLocation: sourceLocation)
                let readers = input.readers.map { contents.users[$0] }
                #expect(try new.relatedObjects(book, "authors").map { $0["name"] } == [.string(input.author)], sourceLocation: sourceLocation)
                #expect(Set(try new.related(book, "readers").compactMap { usersByID[$0] }) == Set(readers), sourceLocation: sourceLocation)
                var owners: [String] = []
                for file in try new.relatedObjects(book, "files") {
                    #expect(file["url"] == .url(input.fileURL), sourceLocation: sourceLocation)
                    #expect(try new.related(file, "book") == [book.id], sourceLocation: sourceLocation)
                    let user = try new.related(file, "user")
                    let owner = user.count == 1 ? usersByID[user[0]] ?? "?" : "\(user.count) users"
                    owners.append(owner)
                    let r = userIndex[owner].map { "Reader \($0)" } ?? "?"
                    #expect(file["ownerDisplayName"] == .string(r), sourceLocation: sourceLocation)
                }
                #expect(owners.sorted() == readers.sorted(), "\(input.title): one file per (book, reader) pair", sourceLocation: sourceLocation)
            }
        }
        #expect(try store.verify().isClean, sourceLocation: sourceLocation)
    }

    @Test(arguments: ["v1", "v2"])
    func migratesToV3(from version: String) throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let schema = try #require(BooksApp.plan.schema(version))
        let url = try kit.makeStore(version: schema) { try BooksApp.fill($0, version: version, count: Self.count) }
        let run = try kit.migrate(url, plan: BooksApp.plan)
        try Self.expectV3(run.after, BooksApp.contents(count: Self.count))
    }

    /// The same store, every object and link, whether users and books are mapped in one pass or in two.
    static func canonical(_ store: Store) throws -> [String] {
        try store.read { ctx in
            func names(_ objects: [DynamicObject], _ key: String) -> String {
                objects.map { $0[key].stringValue ?? "?" }.sorted().joined(separator: ",")
            }
            var lines: [String] = []
            try ctx.objects("User").forEach { u in
                lines.append("User \(u.id) \(u["name"]) \(u["displayName"]) books=\(names(try ctx.relatedObjects(u, "books"), "title"))")
            }
            try ctx.objects("Book").forEach { b in
                lines.append("Book \(b.id) \(b["title"]) authors=\(names(try ctx.relatedObjects(b, "authors"), "name")) readers=\(names(try ctx.relatedObjects(b, "readers"), "name"))")
            }
            try ctx.objects("Author").forEach { a in lines.append("Author \(a.id) \(a["name"]) books=\(names(try ctx.relatedObjects(a, "books"), "title"))") }
            try ctx.objects("File").forEach { f in
                lines.append("File \(f["url"]) \(f["ownerDisplayName"]) book=\(names(try ctx.relatedObjects(f, "book"), "title")) user=\(names(try ctx.relatedObjects(f, "user"), "name"))")
            }
            return lines.sorted()
        }
    }

    @Test func mappingsInSeparatePassesGiveTheSameStore() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let passes = MigrationStage.custom(from: "v2", to: "v3", passes: [
            [EntityMapping(source: "User", policy: BooksApp.UserPolicy())],
            [EntityMapping(source: "Book", destinations: ["File"], policy: BooksApp.FilePolicy())],
        ])
        let plan = try MigrationPlan(schemas: BooksApp.versions, stages: [BooksApp.authorsStage, passes])
        let count = 2_000
        let single = try kit.makeStore(named: "single", version: BooksApp.v2) { try BooksApp.fill($0, version: "v2", count: count) }
        let separate = try kit.makeStore(named: "passes", version: BooksApp.v2) { try BooksApp.fill($0, version: "v2", count: count) }
        let onePass = try kit.migrate(single, plan: BooksApp.plan)
        let twoPasses = try kit.migrate(separate, plan: plan)
        #expect(twoPasses.progress.contains { $0.passCount == 2 && $0.pass == 1 && $0.entity == "Book" })
        #expect(!onePass.progress.contains { $0.passCount == 2 })
        // The two stores are the same, object for object, and both what the input says.
        let expected = try Self.canonical(onePass.after)
        let got = try Self.canonical(twoPasses.after)
        #expect(got.count == expected.count)
        #expect(got == expected, "first difference: \(zip(got, expected).first { $0 != $1 }.map { "\($0) vs \($1)" } ?? "-")")
        try Self.expectV3(twoPasses.after, BooksApp.contents(count: count))
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
