import Foundation
import StrataModels
import StrataTestKit

/// The books app of the heavyweight-migration tutorials.
///
/// - v1: `User(name)`, `Book(title, authorName, fileURL)`, `User.books` ↔ `Book.readers`
/// - v2: `Book.authorName` becomes an `Author` entity, many-to-many with `Book`, exactly one `Author` per
///   distinct name (a custom stage with a lookup table)
/// - v3: `Book.fileURL` becomes a `File` entity: one file per (book, reader) pair, each linked to its book and
///   its user; users gain a `displayName` and are mapped before books, whose files copy the reader's
///   destination `displayName` (a custom stage whose mapping order matters)
///
/// The versions are Swift model types; the stages are typed mappings (`V1.Book` in, `V2.Book` and
/// `V2.Author` out). The dynamic policies of the same stages follow, for comparison.
public enum BooksApp {
    public enum V1: SchemaVersion {
        public static let versionIdentifier = "v1"
        public static let models: [any EntityModel.Type] = [User.self, Book.self]

        @Entity public struct User {
            @Field(.unique) public var name: String
            @Related(inverse: \Book.readers) public var books: [ObjectID] = []
        }

        @Entity public struct Book {
            public var title: String
            public var authorName: String
            public var fileURL: URL
            @Related(to: User.self, inverse: "books") public var readers: [ObjectID] = []
        }
    }

    public enum V2: SchemaVersion {
        public static let versionIdentifier = "v2"
        public static let models: [any EntityModel.Type] = [User.self, Book.self, Author.self]

        @Entity public struct User {
            @Field(.unique) public var name: String
            @Related(inverse: \Book.readers) public var books: [ObjectID] = []
        }

        @Entity public struct Book {
            public var title: String
            public var fileURL: URL
            @Related(to: User.self, inverse: "books") public var readers: [ObjectID] = []
            @Related(inverse: \Author.books) public var authors: [ObjectID] = []
        }

        @Entity public struct Author {
            @Field(.unique) public var name: String
            @Related(to: Book.self, inverse: "authors") public var books: [ObjectID] = []
        }
    }

    public enum V3: SchemaVersion {
        public static let versionIdentifier = "v3"
        public static let models: [any EntityModel.Type] = [User.self, Book.self, Author.self, File.self]

        @Entity public struct User {
            @Field(.unique) public var name: String
            public var displayName: String
            @Related(inverse: \Book.readers) public var books: [ObjectID] = []
            @Related(inverse: \File.user, deleteRule: .cascade) public var files: [ObjectID] = []
        }

        @Entity public struct Book {
            public var title: String
            @Related(to: User.self, inverse: "books") public var readers: [ObjectID] = []
            @Related(inverse: \Author.books) public var authors: [ObjectID] = []
            @Related(inverse: \File.book, deleteRule: .cascade) public var files: [ObjectID] = []
        }

        @Entity public struct Author {
            @Field(.unique) public var name: String
            @Related(to: Book.self, inverse: "authors") public var books: [ObjectID] = []
        }

        @Entity public struct File {
            public var url: URL
            public var ownerDisplayName: String
            @Related(to: Book.self, inverse: "files") public var book: ObjectID?
            @Related(to: User.self, inverse: "files") public var user: ObjectID?
        }
    }

    public static let v1: Schema = frozen { try Schema(V1.self) }
    public static let v2: Schema = frozen { try Schema(V2.self) }
    public static let v3: Schema = frozen { try Schema(V3.self) }

    public static let versions = [v1, v2, v3]

    /// v1 → v2 as a typed mapping: one `Author` per distinct `authorName`, found through a lookup table kept
    /// in the store.
    public static let authorsStage = MigrationStage.custom(from: V1.self, to: V2.self, entityMappings: [
        .each(V1.Book.self, creating: [V2.Author.self], instances: { book, context in
            try context.insert(V2.Book(title: book.title, fileURL: book.fileURL), keepingSourceID: true)
            _ = try context.lookupOrInsert("authors", key: .string(book.authorName)) { V2.Author(name: book.authorName) }
        }, relationships: { book, context in
            try context.linkInferred()
            if let id = book.objectID, let author = try context.lookup("authors", .string(book.authorName)) {
                try context.link(id, \V2.Book.authors, to: author)
            }
        }),
    ])

    /// v2 → v3 as typed mappings: users first (they gain a display name), then books, whose files copy their
    /// reader's display name as the destination already holds it.
    public static let filesStage = MigrationStage.custom(from: V2.self, to: V3.self, entityMappings: [
        .each(V2.User.self, instances: { user, context in
            try context.insert(V3.User(name: user.name, displayName: user.name.capitalized), keepingSourceID: true)
        }),
        .each(V2.Book.self, creating: [V3.File.self], instances: { book, context in
            try context.insert(V3.Book(title: book.title), keepingSourceID: true)
            for reader in try context.related(book, \V2.Book.readers) {
                guard let destination = try context.destinations(for: reader, as: V3.User.self).first,
                      let user = try context.destination(V3.User.self, id: destination) else {
                    throw BooksMigrationError.readerNotMigratedYet(reader)
                }
                try context.insert(V3.File(url: book.fileURL, ownerDisplayName: user.displayName))
            }
        }, relationships: { book, context in
            try context.linkInferred()
            guard let id = book.objectID else { return }
            let files = try context.destinations(for: id, as: V3.File.self)
            let readers = try context.related(book, \V2.Book.readers)
            for (file, reader) in zip(files, readers) {
                try context.link(file, \V3.File.book, to: id)
                if let user = try context.destinations(for: reader, as: V3.User.self).first {
                    try context.link(file, \V3.File.user, to: user)
                }
            }
        }),
    ])

    /// v1 → v2 as a dynamic policy: one `Author` per distinct `authorName`, through a lookup table.
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

    /// The authors stage as dynamic policies.
    public static let dynamicAuthorsStage = MigrationStage.custom(
        from: "v1", to: "v2",
        entityMappings: [EntityMapping(source: "Book", destinations: ["Author"], policy: AuthorPolicy())])

    /// The files stage as dynamic policies.
    public static let dynamicFilesStage = MigrationStage.custom(
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
        let users = try contents.users.map { name in
            try context.insert("User", version == "v3" ? ["name": .string(name), "displayName": .string(name.capitalized)] : ["name": .string(name)])
        }
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
    }
}
