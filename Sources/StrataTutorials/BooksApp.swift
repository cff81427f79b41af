import Foundation
import Strata
import StrataTestKit

/// The books app of the heavyweight-migration tutorials.
///
/// - v1: `User(name)`, `Book(title, authorName, fileURL)`, `User.books` ↔ `Book.readers`
/// - v2: `Book.authorName` becomes an `Author` entity, many-to-many with `Book`, exactly one `Author` per
///   distinct name (a custom stage with a lookup table)
/// - v3: `Book.fileURL` becomes a `File` entity: one file per (book, reader) pair, each linked to its book and
///   its user; users gain a `displayName` and are mapped before books, whose files copy the reader's
///   destination `displayName` (a custom stage whose mapping order matters)
public enum BooksApp {
    public static let v1: Schema = frozen {
        try Schema("v1") {
            Entity("User") {
                Attribute("name", .string).unique()
                Relationship("books", to: "Book", inverse: "readers", toMany: true)
            }
            Entity("Book") {
                Attribute("title", .string)
                Attribute("authorName", .string)
                Attribute("fileURL", .url)
                Relationship("readers", to: "User", inverse: "books", toMany: true)
            }
        }
    }

    public static let v2: Schema = frozen {
        try Schema("v2") {
            Entity("User") {
                Attribute("name", .string).unique()
                Relationship("books", to: "Book", inverse: "readers", toMany: true)
            }
            Entity("Book") {
                Attribute("title", .string)
                Attribute("fileURL", .url)
                Relationship("readers", to: "User", inverse: "books", toMany: true)
                Relationship("authors", to: "Author", inverse: "books", toMany: true)
            }
            Entity("Author") {
                Attribute("name", .string).unique()
                Relationship("books", to: "Book", inverse: "authors", toMany: true)
            }
        }
    }

    public static let v3: Schema = frozen {
        try Schema("v3") {
            Entity("User") {
                Attribute("name", .string).unique()
                Attribute("displayName", .string)
                Relationship("books", to: "Book", inverse: "readers", toMany: true)
                Relationship("files", to: "File", inverse: "user", toMany: true, deleteRule: .cascade)
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("readers", to: "User", inverse: "books", toMany: true)
                Relationship("authors", to: "Author", inverse: "books", toMany: true)
                Relationship("files", to: "File", inverse: "book", toMany: true, deleteRule: .cascade)
            }
            Entity("Author") {
                Attribute("name", .string).unique()
                Relationship("books", to: "Book", inverse: "authors", toMany: true)
            }
            Entity("File") {
                Attribute("url", .url)
                Attribute("ownerDisplayName", .string)
                Relationship("book", to: "Book", inverse: "files")
                Relationship("user", to: "User", inverse: "files")
            }
        }
    }

    public static let versions = [v1, v2, v3]

    /// v1 → v2: one `Author` per distinct `authorName`, found through a lookup table kept in the store.
    public struct AuthorPolicy: EntityMigrationPolicy {
        public init() {}

        public func createDestinationInstances(for book: DynamicObject, in context: InstanceMigrationContext) throws {
            try context.insertInferred(for: book)
            let name = book["authorName"]
            _ = try context.lookupOrInsert("authors", key: name, entity: "Author", values: ["name": name])
        }

        public func createRelationships(for book: DynamicObject, in context: RelationshipMigrationContext) throws {
            try context.linkInferred(for: book)
            if let author = try context.lookup("authors", book["authorName"]) {
                try context.link(book.id, of: "Book", "authors", to: author)
            }
        }
    }

    /// v2 → v3, first mapping: users gain a display name.
    public struct UserPolicy: EntityMigrationPolicy {
        public init() {}

        public func createDestinationInstances(for user: DynamicObject, in context: InstanceMigrationContext) throws {
            var values = try context.inferredValues(for: user)
            values["displayName"] = .string((user["name"].stringValue ?? "").capitalized)
            try context.insert("User", values, keepingSourceID: true)
        }
    }

    /// v2 → v3, second mapping: one file per (book, reader), copying the reader's destination display name —
    /// which is why users are mapped first.
    public struct FilePolicy: EntityMigrationPolicy {
        public init() {}

        public func createDestinationInstances(for book: DynamicObject, in context: InstanceMigrationContext) throws {
            try context.insertInferred(for: book)
            for reader in try context.related(book, "readers") {
                guard let destUser = try context.destinations(for: reader.id, entity: "User").first,
                      let user = try context.destinationObject(destUser, of: "User") else {
                    throw BooksMigrationError.readerNotMigratedYet(reader.id)
                }
                try context.insert("File", ["url": book["fileURL"], "ownerDisplayName": user["displayName"]])
            }
        }

        public func createRelationships(for book: DynamicObject, in context: RelationshipMigrationContext) throws {
            try context.linkInferred(for: book)
            let files = try context.destinations(for: book.id, entity: "File")
            let readers = try context.related(book, "readers")
            for (file, reader) in zip(files, readers) {
                try context.link(file, of: "File", "book", to: book.id)
                if let user = try context.destinations(for: reader.id, entity: "User").first {
                    try context.link(file, of: "File", "user", to: user)
                }
            }
        }
    }

    public enum BooksMigrationError: Error, CustomStringConvertible {
        case readerNotMigratedYet(ObjectID)
        public var description: String {
            switch self {
            case .readerNotMigratedYet(let id): "user \(id) has no destination object yet: map users before books"
            }
        }
    }

    public static let authorsStage = MigrationStage.custom(
        from: "v1", to: "v2",
        entityMappings: [EntityMapping(source: "Book", destinations: ["Author"], policy: AuthorPolicy())])

    public static let filesStage = MigrationStage.custom(
        from: "v2", to: "v3",
        entityMappings: [
            EntityMapping(source: "User", policy: UserPolicy()),
            EntityMapping(source: "Book", destinations: ["File"], policy: FilePolicy()),
        ])

    public static let plan: MigrationPlan = frozen { try MigrationPlan(schemas: versions, stages: [authorsStage, filesStage]) }

    /// The number of distinct author names `fill` uses.
    public static let authorCount = 97

    /// What ``fill(_:version:count:seed:)`` writes, whatever the version: tests derive what a migrated store
    /// must hold from these, not from the store before the migration.
    public struct Contents: Sendable {
        public struct Book: Sendable {
            public var title: String
            /// The author's name (`authorName` at v1, an `Author` from v2 on).
            public var author: String
            public var fileURL: URL
            /// Indexes into `users`, ascending.
            public var readers: [Int]
        }
        /// User names.
        public var users: [String]
        public var books: [Book]
    }

    /// The users and books `fill` writes, deterministically from `seed`.
    public static func contents(count: Int, seed: UInt64 = 2) -> Contents {
        var random = SeededGenerator(seed: seed)
        let userCount = max(1, count / 10)
        let users = (0..<userCount).map { "reader \($0)" }
        let books = (0..<count).map { i -> Contents.Book in
            let author = Int(random.next() % UInt64(authorCount))
            let readerCount = 1 + Int(random.next() % 3)
            var chosen: Set<Int> = []
            while chosen.count < readerCount { chosen.insert(Int(random.next() % UInt64(userCount))) }
            return Contents.Book(title: "Book \(i)", author: "Author \(author)", fileURL: URL(string: "file:///books/\(i).epub")!,
                                 readers: chosen.sorted())
        }
        return Contents(users: users, books: books)
    }

    /// Fills a store at `version` with `count` books and `count / 10` users; each book has 1–3 readers.
    public static func fill(_ context: WriteContext, version: String, count: Int, seed: UInt64 = 2) throws {
        let contents = contents(count: count, seed: seed)
        let users = try contents.users.map { try context.insert("User", ["name": .string($0)]) }
        var authors: [String: DynamicObject] = [:]
        for b in contents.books {
            var values: [String: Value] = ["title": .string(b.title)]
            if version == "v1" { values["authorName"] = .string(b.author) }
            if version != "v3" { values["fileURL"] = .url(b.fileURL) }
            let book = try context.insert("Book", values)
            for r in b.readers { try context.link(book, "readers", to: users[r]) }
            if version != "v1" {
                if authors[b.author] == nil { authors[b.author] = try context.insert("Author", ["name": .string(b.author)]) }
                try context.link(book, "authors", to: authors[b.author]!)
            }
            if version == "v3" {
                for r in b.readers {
                    let file = try context.insert("File", ["url": .url(b.fileURL), "ownerDisplayName": .string(contents.users[r].capitalized)])
                    try context.link(file, "book", to: book)
                    try context.link(file, "user", to: users[r])
                }
            }
        }
        if version == "v3" {
            for user in users {
                var u = user
                u["displayName"] = .string((user["name"].stringValue ?? "").capitalized)
                try context.update(u)
            }
        }
    }
}
