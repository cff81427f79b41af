import Foundation
import Strata
import StrataTestSupport
import Testing

/// A declared mapping composes with the rest of its stage: a policy of a later pass finds the sections the streaming
/// copy made from each post (`destinations(for:entity:)`, through the associations the copy records), and an entity
/// the stage does not map follows the inferred mapping with its links.
@Suite struct DeclaredCompositionTests {
    static func v1() throws -> Schema {
        try Schema("c1") {
            Entity("Post") {
                Attribute("content", .string).optional()
                Relationship("comments", to: "Comment", inverse: "post", toMany: true)
                Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
            }
            Entity("Comment") {
                Attribute("text", .string)
                Relationship("post", to: "Post", inverse: "comments")
            }
            Entity("Tag") {
                Attribute("label", .string)
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }
        }
    }

    static func v2() throws -> Schema {
        try Schema("c2") {
            Entity("Post") {
                Relationship("sections", to: "Section", inverse: "post", toMany: true)
                Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
            }
            Entity("Section") {
                Attribute("body", .string)
                Relationship("post", to: "Post", inverse: "sections")
                Relationship("comments", to: "Comment", inverse: "section", toMany: true)
            }
            Entity("Comment") {
                Attribute("text", .string)
                Relationship("section", to: "Section", inverse: "comments")
            }
            Entity("Tag") {
                Attribute("label", .string)
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }
        }
    }

    @Test(arguments: [1, 5, 1000])
    func aLaterPolicyFindsTheCopiedSectionsAndInferredLinksSurvive(batch: Int) throws {
        let dir = try TemporaryDirectory("declared-composition")
        var expected: [String: String] = [:]   // comment text → the body of the section it must end on ("" for none)
        var tagsOf: [String: Set<String>] = [:]  // post content (or "#id") → tag labels
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v1())
            defer { store.close() }
            try store.write { ctx in
                let tags = try (0..<3).map { try ctx.insert("Tag", ["label": .string("t\($0)")]) }
                for i in 0..<40 {
                    let content: Value = i % 4 == 0 ? .null : .string("body \(i) ✓")
                    let post = try ctx.insert("Post", ["content": content])
                    for c in 0..<(i % 3) {
                        let comment = try ctx.insert("Comment", ["text": .string("c\(i).\(c)")])
                        try ctx.link(comment, "post", to: post)
                        expected["c\(i).\(c)"] = content.stringValue ?? ""
                    }
                    let tag = tags[i % 3]
                    try ctx.link(post, "tags", to: tag)
                    tagsOf["#\(post.id.rawValue)", default: []].insert("t\(i % 3)")
                }
            }
        }
        let commentsPolicy = EntityMapping.transform("Comment", instances: { comment, ctx in
            try ctx.insert(try ctx.inferredObject(for: comment))
        }, relationships: { comment, ctx in
            for post in try ctx.related(comment, "post") {
                for section in try ctx.destinations(for: post.id, entity: "Section") {
                    try ctx.link(comment.id, of: "Comment", "section", to: section)
                }
            }
        })
        let stage = MigrationStage.custom(from: "c1", to: "c2", passes: [
            [.extract("Section", from: "Post", linkedBy: "post", values: ["body": .attribute("content")], skippingNil: "content")],
            [commentsPolicy],
        ])
        let store = try Store.open(at: dir.store, migratingFrom: try Self.v1(), to: try Self.v2(), stages: [stage], batchSize: batch)
        defer { store.close() }
        try store.read { ctx in
            var got: [String: String] = [:]
            for comment in try ctx.objects("Comment").fetch() {
                got[comment["text"].stringValue ?? "?"] = try ctx.relatedObjects(comment, "section").first?["body"].stringValue ?? ""
            }
            #expect(got == expected)
            var gotTags: [String: Set<String>] = [:]
            for post in try ctx.objects("Post").fetch() {
                gotTags["#\(post.id.rawValue)"] = Set(try ctx.relatedObjects(post, "tags").compactMap { $0["label"].stringValue })
            }
            #expect(gotTags == tagsOf)
        }
        #expect(try store.verify().problems.isEmpty)
    }
}
