import Foundation
import Strata

/// Models shared by several test files.
public enum TestSchemas {
    /// Every attribute type, in declaration order (the codable one named `"TestDocument"`).
    public static let allTypes: [AttributeType] = [
        .int64, .int32, .int16, .double, .float, .bool, .string, .date, .data, .uuid, .url, .decimal, .codable("TestDocument"),
    ]

    /// The attribute name used for `type` in ``everyType(version:optional:)``.
    public static func attributeName(_ type: AttributeType) -> String { "a_" + type.name }

    /// One entity `Sample` with one attribute of every type (optional unless `optional` is false) and an
    /// `label` string.
    public static func everyType(version: String = "v1", optional: Bool = true, indexed: Bool = false) throws -> Schema {
        try Schema(version) {
            Entity("Sample", attributes: [Attribute("label", .string)] + allTypes.map { type in
                var a = Attribute(attributeName(type), type, isOptional: optional)
                if indexed { a = a.indexed() }
                return a
            })
        }
    }

    /// A small library: authors write books, books carry tags, an author has at most one portrait.
    ///
    /// - `Author` (name unique, born indexed, rating) — `books` to-many ↔ `Book.author`, cascade;
    ///   `portrait` to-one ↔ `Portrait.author`, cascade.
    /// - `Book` (title, pages Int32 indexed, price Decimal optional, isbn unique optional) — `author` to-one,
    ///   nullify; `tags` to-many ↔ `Tag.books`.
    /// - `Tag` (name unique) — `books` to-many, nullify.
    /// - `Portrait` (caption) — `author` to-one, nullify.
    public static func library(version: String = "v1") throws -> Schema {
        try Schema(version) {
            Entity("Author") {
                Attribute("name", .string).unique()
                Attribute("born", .date).indexed()
                Attribute("rating", .double).defaultValue(0.0)
                Relationship("books", to: "Book", inverse: "author", toMany: true, deleteRule: .cascade)
                Relationship("portrait", to: "Portrait", inverse: "author", deleteRule: .cascade)
            }
            Entity("Book") {
                Attribute("title", .string)
                Attribute("pages", .int32).indexed()
                Attribute("price", .decimal).optional()
                Attribute("isbn", .string).optional().unique()
                Relationship("author", to: "Author", inverse: "books")
                Relationship("tags", to: "Tag", inverse: "books", toMany: true)
            }
            Entity("Tag") {
                Attribute("name", .string).unique()
                Relationship("books", to: "Book", inverse: "tags", toMany: true)
            }
            Entity("Portrait") {
                Attribute("caption", .string)
                Relationship("author", to: "Author", inverse: "portrait")
            }
        }
    }
}

/// Builds a random library (``TestSchemas/library(version:)``) in a store and records it in an oracle.
public struct LibraryGenerator {
    public var rng: SeededGenerator
    public let seed: UInt64

    public init(seed: UInt64) {
        self.seed = seed
        rng = SeededGenerator(seed: seed)
    }

    /// Inserts `authors` authors, about three books each, `tags` tags and some portraits, with random links,
    /// in one write transaction.
    public mutating func fill(_ store: Store, oracle: Oracle, authors: Int, tags: Int) throws {
        var rng = self.rng
        defer { self.rng = rng }
        // The oracle is updated after the commit: a write closure may run more than once (map growth).
        let log = try store.write { ctx -> OracleLog in
            var log: OracleLog = []
            var tagIDs: [ObjectID] = []
            for t in 0..<tags {
                let tag = try ctx.insert("Tag", ["name": .string("tag-\(t)-\(rng.string(length: 3))")], log: &log)
                tagIDs.append(tag.id)
            }
            for a in 0..<authors {
                let author = try ctx.insert("Author", [
                    "name": .string("author \(a) \(rng.string(length: 5))"),
                    "born": .date(Date(timeIntervalSinceReferenceDate: Double(rng.int(2_000_000_000)) - 1_000_000_000)),
                    "rating": .double(Double(rng.int(50)) / 10),
                ], log: &log)
                for b in 0..<rng.int(6) {
                    let book = try ctx.insert("Book", [
                        "title": .string("\(rng.string(length: 8)) \(b)"),
                        "pages": .int32(Int32(rng.int(900) + 10)),
                        "price": rng.chance(0.7) ? .decimal(Decimal(rng.int(10_000)) / 100) : .null,
                        "isbn": rng.chance(0.5) ? .string("isbn-\(a)-\(b)") : .null,
                    ], log: &log)
                    try ctx.link(book, "author", to: author)
                    log.append { $0.link(book.id, "author", author.id) }
                    for _ in 0..<rng.int(4) where !tagIDs.isEmpty {
                        let tag = rng.pick(tagIDs)
                        try ctx.link(book.id, of: "Book", "tags", to: tag)
                        log.append { $0.link(book.id, "tags", tag) }
                    }
                }
                if rng.chance(0.3) {
                    let portrait = try ctx.insert("Portrait", ["caption": .string("portrait of \(a)")], log: &log)
                    try ctx.link(author, "portrait", to: portrait)
                    log.append { $0.link(author.id, "portrait", portrait.id) }
                }
            }
            return log
        }
        for apply in log { apply(oracle) }
    }
}
