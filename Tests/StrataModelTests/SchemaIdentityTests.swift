import Foundation
import Testing
import StrataModels
import StrataTutorials

/// A model declared with the macros is the same model as the DSL declares: same JSON, same version hashes,
/// same fingerprint — so stores written through one form open through the other without a migration.
@Suite struct SchemaIdentityTests {
    static func expectIdentical(_ macro: Schema, _ dsl: Schema?, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let dsl = try #require(dsl, "the DSL form does not validate", sourceLocation: sourceLocation)
        #expect(macro.jsonData(prettyPrinted: true) == dsl.jsonData(prettyPrinted: true),
                "\(String(decoding: macro.jsonData(prettyPrinted: true), as: UTF8.self))\nvs\n\(String(decoding: dsl.jsonData(prettyPrinted: true), as: UTF8.self))",
                sourceLocation: sourceLocation)
        #expect(macro.entityVersionHashes == dsl.entityVersionHashes, sourceLocation: sourceLocation)
        #expect(macro.fingerprint == dsl.fingerprint, sourceLocation: sourceLocation)
        #expect(macro == dsl, sourceLocation: sourceLocation)
    }

    @Test("every tutorial version, declared both ways, is the same model")
    func tutorials() throws {
        let pairs: [(String, Schema, Schema?)] = [
            ("posts v1", PostsApp.v1, TutorialDSL.Posts.v1), ("posts v2", PostsApp.v2, TutorialDSL.Posts.v2),
            ("posts v3", PostsApp.v3, TutorialDSL.Posts.v3), ("posts v4", PostsApp.v4, TutorialDSL.Posts.v4),
            ("books v1", BooksApp.v1, TutorialDSL.Books.v1), ("books v2", BooksApp.v2, TutorialDSL.Books.v2),
            ("books v3", BooksApp.v3, TutorialDSL.Books.v3),
            ("notes v1", NotesApp.v1, TutorialDSL.Notes.v1), ("notes v2", NotesApp.v2, TutorialDSL.Notes.v2),
            ("notes v3", NotesApp.v3, TutorialDSL.Notes.v3), ("notes v4", NotesApp.v4, TutorialDSL.Notes.v4),
        ]
        for (label, macro, dsl) in pairs {
            try Self.expectIdentical(macro, dsl)
            #expect(macro.versionIdentifier == dsl?.versionIdentifier, "\(label)")
        }
    }

    /// Every attribute type and option, written with the DSL.
    static func libraryDSL() throws -> Schema {
        try Schema("v1") {
            Entity("Item") {
                Attribute("code", .string).unique()
                Attribute("count", .int64).defaultValue(0)
                Attribute("wide", .int64)
                Attribute("medium", .int32)
                Attribute("small", .int16)
                Attribute("ratio", .double).defaultValue(1.5)
                Attribute("weight", .float)
                Attribute("isActive", .bool).defaultValue(true)
                Attribute("added", .date).indexed()
                Attribute("blob", .data)
                Attribute("uid", .uuid)
                Attribute("link", .url)
                Attribute("price", .decimal)
                Attribute("note", .string).optional()
                Attribute("rank", .int64).optional()
                Attribute("size", .codable("Dimensions"))
                Attribute("kind", .string).defaultValue("book")
                Attribute("scratch", .string).defaultValue("scratch").transient()
                Relationship("owner", to: "Owner", inverse: "items")
                Relationship("tags", to: "Tag", inverse: "items", toMany: true)
            }
            Entity("Owner") {
                Attribute("name", .string)
                Relationship("items", to: "Item", inverse: "owner", toMany: true, deleteRule: .cascade)
            }
            Entity("Tag") {
                Attribute("label", .string).indexed()
                Relationship("items", to: "Item", inverse: "tags", toMany: true)
            }
        }
    }

    @Test("every attribute type, optionals, literal defaults, codable, raw values, transient and relationships")
    func everyOption() throws {
        try Self.expectIdentical(try Schema(Library.self), try Self.libraryDSL())
    }

    @Test("renames, hash modifiers, entity names, delete rules and counts")
    func renamesAndModifiers() throws {
        let dsl = try Schema("v7") {
            Entity("Article", renamingIdentifier: "Post", versionHashModifier: "b") {
                Attribute("headline", .string).renamed(from: "title").versionHashModifier("2")
                Attribute("wordCount", .int32).defaultValue(.int32(-3))
                Attribute("score", .float).defaultValue(.float(0.5)).optional()
                Attribute("amount", .decimal).defaultValue(.decimal(Decimal(12)))
                Relationship("notes", to: "Remark", inverse: "article", toMany: true, deleteRule: .deny, minCount: 1, maxCount: 5)
                    .renamed(from: "comments")
            }
            Entity("Remark") {
                Attribute("text", .string)
                Relationship("article", to: "Article", inverse: "notes", deleteRule: .nullify, versionHashModifier: "x")
            }
        }
        try Self.expectIdentical(try Schema(Renamed.self), dsl)
    }
}

enum Renamed: SchemaVersion {
    static let versionIdentifier = "v7"
    static let models: [any EntityModel.Type] = [Story.self, Remark.self]

    @Entity("Article", originalName: "Post", hashModifier: "b")
    struct Story {
        @Field(originalName: "title", hashModifier: "2") var headline: String
        var wordCount: Int32 = -3
        var score: Float? = 0.5
        var amount: Decimal = 12
        @Related(inverse: \Remark.article, deleteRule: .deny, minCount: 1, maxCount: 5, originalName: "comments")
        var notes: [ObjectID] = []
    }

    @Entity struct Remark {
        var text: String
        @Related(to: Story.self, inverse: "notes", deleteRule: .nullify, hashModifier: "x") var article: ObjectID?
    }
}
