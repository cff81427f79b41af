import Foundation
import Testing
@testable import Strata

@Suite struct CustomSmokeTests {
    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Post") {
                Attribute("postID", .uuid).unique()
                Attribute("hexColor", .string)
                Attribute("content", .string)
                Attribute("date", .date)
            }
        }
    }
    static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Post") {
                Attribute("postID", .uuid).unique()
                Attribute("hexColor", .string)
                Attribute("date", .date)
                Attribute("rank", .int64)
                Relationship("sections", to: "Section", inverse: "post", toMany: true, deleteRule: .cascade)
            }
            Entity("Section") {
                Attribute("title", .string)
                Attribute("body", .string)
                Attribute("index", .int64)
                Relationship("post", to: "Post", inverse: "sections")
            }
        }
    }

    @Test func split() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("custom-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            let store = try Store.open(at: dir, schema: try Self.v2())
            try store.write { ctx in
                for i in 0..<2500 {
                    try ctx.insert("Post", ["postID": .uuid(UUID()), "hexColor": "#\(i)", "content": "content number \(i)",
                                            "date": .date(Date(timeIntervalSinceReferenceDate: Double(i)))])
                }
            }
            store.close()
        }
        let stage = MigrationStage.custom(
            from: "v2", to: "v3",
            entityMappings: [
                .transform("Post", destinations: ["Section"], instances: { post, ctx in
                    var values = try ctx.inferredValues(for: post)
                    values["rank"] = .int64(Int64(post["hexColor"].stringValue?.count ?? 0))
                    try ctx.insert("Post", values, keepingSourceID: true)
                    let content = post["content"].stringValue ?? ""
                    try ctx.insert("Section", ["title": .string(String(content.prefix(4)) + "..."), "body": .string(content), "index": 0])
                }, relationships: { post, ctx in
                    let sections = try ctx.destinations(for: post.id, entity: "Section")
                    for s in sections { try ctx.link(post.id, of: "Post", "sections", to: s) }
                })
            ])
        let plan = try MigrationPlan(schemas: [try Self.v2(), try Self.v3()], stages: [stage])
        let store = try Store.open(at: dir, schema: try Self.v3(), plan: plan)
        try store.read { ctx in
            #expect(try ctx.count("Post") == 2500)
            #expect(try ctx.count("Section") == 2500)
            let post = try #require(try ctx.objects("Post").first())
            #expect(post["rank"] == .int64(2))
            let sections = try ctx.relatedObjects(post, "sections")
            #expect(sections.count == 1)
            #expect(sections.first?["title"] == "cont...")
            #expect(sections.first?["body"] == "content number 0")
            #expect(try ctx.related(try #require(sections.first), "post") == [post.id])
        }
    }

    @Test func scriptOnIntermediateModel() throws {
        let old = try Schema("v1") { Entity("Note") { Attribute("text", .string); Attribute("size", .string) } }
        let new = try Schema("v2") { Entity("Note") { Attribute("text", .string); Attribute("size", .int64); Attribute("words", .int64) } }
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("script-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            let store = try Store.open(at: dir, schema: old)
            try store.write { ctx in
                for i in 0..<100 { try ctx.insert("Note", ["text": "a b c \(i)", "size": "\(i)"]) }
            }
        }
        #expect(throws: MigrationError.self) {
            _ = try Store.open(at: dir, schema: new, plan: try MigrationPlan(schemas: [old, new]))
        }
        let stage = MigrationStage.custom(from: "v1", to: "v2", scripts: [
            ObjectScript("Note") { note in
                note["size"] = .int64(Int64(try note.previousValue("size").stringValue ?? "") ?? -1)
                note["words"] = .int64(Int64(note["text"].stringValue?.split(separator: " ").count ?? 0))
            },
        ])
        let store = try Store.open(at: dir, schema: new, plan: try MigrationPlan(schemas: [old, new], stages: [stage]))
        let notes = try store.read { try $0.objects("Note").fetch() }
        #expect(notes.count == 100)
        #expect(notes.allSatisfy { $0["words"] == .int64(4) })
        #expect(Set(notes.map { $0["size"] }) == Set((0..<100).map { Value.int64(Int64($0)) }))
    }
}
