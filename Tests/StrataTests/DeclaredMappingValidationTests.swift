import Foundation
import Strata
import StrataTestSupport
import Testing

/// A declared mapping that does not fit the stage's models is refused with a typed error that says what is wrong,
/// before anything is written: the store's files are byte for byte what they were.
@Suite struct DeclaredMappingValidationTests {
    static let cases: [(mapping: EntityMapping, says: [String])] = [
        (.extract("Sektion", from: "Post", linkedBy: "post", values: ["body": .attribute("content")]), ["no entity Sektion"]),
        (.extract("Section", from: "Postt", linkedBy: "post", values: ["body": .attribute("content")]), ["no entity Postt"]),
        (.extract("Section", from: "Post", linkedBy: "post", values: ["bdy": .attribute("content")]), ["Section", "no stored attribute bdy"]),
        (.extract("Section", from: "Post", linkedBy: "post", values: ["body": .attribute("contents")]), ["Post has no stored attribute contents"]),
        (.extract("Section", from: "Post", linkedBy: "posts", values: ["body": .attribute("content"), "index": .constant(1)]), ["Section has no relationship posts"]),
        (.extract("Section", from: "Post", linkedBy: "post", values: ["body": .attribute("views")]), ["Post.views", "int32", "Section.body"]),
        (.extract("Section", from: "Post", linkedBy: "post", values: ["body": .attribute("content"), "index": .constant("seven")]),
         ["Section.index", "the constant"]),
        (.extract("Section", from: "Post", linkedBy: "post", values: ["title": .constant("t")]), ["Section.body is required"]),
        (.extract("Section", from: "Post", linkedBy: "post", values: ["body": .prefix(of: "views", length: 3)]), ["a prefix reads and writes strings"]),
        (.extract("Section", from: "Post", linkedBy: "post", values: ["body": .attribute("content"), "index": .constant(1)], skippingNil: "title"),
         ["skippingNil names Post.title"]),
        (.deduplicate("content", of: "Post", into: "Section", as: "body", linkedBy: "sections", values: ["index": .constant(1)]), ["Section.post is to-one", "several Post objects can share one Section"]),
        (.deduplicate("content", of: "Post", into: "Section", as: "body", linkedBy: "Section.post", values: ["index": .constant(1)]), ["declared by Section, not by Post"]),
        (.move("Post", into: "Section", values: ["body": .attribute("content")]), ["Section.index is required"]),
    ]

    @Test(arguments: cases.indices)
    func aBadDeclarationIsATypedErrorAndTheStoreIsUntouched(_ i: Int) throws {
        let (mapping, says) = Self.cases[i]
        let dir = try TemporaryDirectory("declared-invalid")
        let posts = DeclaredFixtures.posts(20, seed: 5)
        try DeclaredFixtures.makePosts(dir.store, posts)
        let before = StoreFileBytes.snapshot(dir.store)
        let plan = try MigrationPlan(schemas: [try DeclaredFixtures.postsV1(), try Self.destination()],
                                     stages: [.custom(from: "p1", to: "p2", entityMappings: [mapping])])
        do {
            _ = try Store.open(at: dir.store, schema: try Self.destination(), plan: plan)
            Issue.record("case \(i) was accepted")
        } catch let error as StoreError {
            #expect(error.code == .invalidEntityMapping, "\(error)")
            for s in says { #expect(error.description.contains(s), "case \(i): \(error.description) should say \(s)") }
        }
        #expect(StoreFileBytes.snapshot(dir.store) == before)
        // explainMigration refuses it the same way.
        #expect(throws: StoreError.self) { _ = try Store.explainMigration(at: dir.store, schema: try Self.destination(), plan: plan) }
    }

    @Test func aCreatedEntityThatAlreadyHoldsObjectsIsRefusedUnlessMapped() throws {
        let v1 = try Schema("a1") {
            Entity("Book") { Attribute("authorName", .string).optional() }
            Entity("Author") { Attribute("name", .string) }
        }
        let v2 = try Schema("a2") {
            Entity("Book") { Relationship("author", to: "Author", inverse: "books") }
            Entity("Author") { Attribute("name", .string); Relationship("books", to: "Book", inverse: "author", toMany: true) }
        }
        let dir = try TemporaryDirectory("declared-existing")
        let store = try Store.open(at: dir.store, schema: v1)
        try store.write { ctx in
            try ctx.insert("Author", ["name": "kept"])
            try ctx.insert("Book", ["authorName": "new"])
        }
        store.close()
        let before = StoreFileBytes.snapshot(dir.store)
        let dedupe = EntityMapping.deduplicate("authorName", of: "Book", into: "Author", as: "name", linkedBy: "author")
        do {
            _ = try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2], stages: [
                .custom(from: "a1", to: "a2", entityMappings: [dedupe]),
            ]))
            Issue.record("the existing authors would have been dropped")
        } catch let error as StoreError {
            #expect(error.code == .invalidEntityMapping && error.description.contains("its objects would be lost"), "\(error)")
        }
        #expect(StoreFileBytes.snapshot(dir.store) == before)
        // Mapped too, the existing author is kept beside the new one.
        let migrated = try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2], stages: [
            .custom(from: "a1", to: "a2", entityMappings: [.move("Author", into: "Author"), dedupe]),
        ]))
        defer { migrated.close() }
        #expect(Set(try migrated.read { try $0.objects("Author").fetch().compactMap { $0["name"].stringValue } }) == ["kept", "new"])
    }

    /// The posts split's destination, with `Section.body` required and `Post.sections` to-one (one section per post:
    /// a dedupe through it is the wrong cardinality).
    static func destination() throws -> Schema {
        try Schema("p2") {
            Entity("Post") {
                Attribute("title", .string)
                Attribute("views", .int32)
                Relationship("sections", to: "Section", inverse: "post", deleteRule: .cascade)
            }
            Entity("Section") {
                Attribute("title", .string).optional()
                Attribute("body", .string)
                Attribute("index", .int64)
                Relationship("post", to: "Post", inverse: "sections")
            }
        }
    }
}
