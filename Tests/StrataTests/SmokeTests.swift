import Foundation
import Testing
@testable import Strata

@Suite struct SmokeTests {
    static func v1() throws -> Schema {
        try Schema("v1") {
            Entity("Post") {
                Attribute("postID", .uuid).unique()
                Attribute("color", .string)
                Attribute("content", .string)
                Attribute("views", .int16).defaultValue(0)
                Attribute("date", .date).indexed()
                Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
            }
            Entity("Tag") {
                Attribute("name", .string).unique()
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }
        }
    }

    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Post") {
                Attribute("postID", .uuid).unique()
                Attribute("hexColor", .string).renamed(from: "color")
                Attribute("views", .int16).defaultValue(0)
                Attribute("date", .date).indexed()
                Attribute("softDelete", .bool).defaultValue(false)
                Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
            }
            Entity("Tag") {
                Attribute("name", .string).unique()
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }
        }
    }

    static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Post") {
                Attribute("postID", .uuid).unique()
                Attribute("hexColor", .string).renamed(from: "color")
                Attribute("views", .int64).defaultValue(0)
                Attribute("date", .date).indexed()
                Attribute("softDelete", .bool).defaultValue(false)
                Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
            }
            Entity("Tag") {
                Attribute("name", .string).unique()
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }
        }
    }

    @Test func endToEnd() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("smoke-\(UUID())")
        defer { try? FileManager.default.removeItem(at: dir) }
        do {
            let store = try Store.open(at: dir, schema: try Self.v1())
            try store.write { ctx in
                let tag = try ctx.insert("Tag", ["name": "swift"])
                for i in 0..<3000 {
                    let p = try ctx.insert("Post", ["postID": .uuid(UUID()), "color": "#\(i)", "content": "hello \(i)",
                                                    "date": .date(Date(timeIntervalSinceReferenceDate: Double(i))), "views": .int16(Int16(i % 100))])
                    if i % 10 == 0 { try ctx.link(p, "tags", to: tag) }
                }
            }
            let count = try store.read { try $0.count("Post") }
            #expect(count == 3000)
            let tagged = try store.read { ctx in try ctx.related(try #require(try ctx.objects("Tag").first()), "posts").count }
            #expect(tagged == 300)
            store.close()
        }
        #expect(throws: StoreError.self) { try Store.open(at: dir, schema: try Self.v2()) }
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), try Self.v3()])
        let store = try Store.open(at: dir, schema: try Self.v3(), plan: plan)
        try store.read { ctx in
            #expect(try ctx.count("Post") == 3000)
            let first = try #require(try ctx.objects("Post").first())
            #expect(first["hexColor"] == "#0")
            #expect(first["softDelete"] == false)
            #expect(first["views"] == .int64(0))
            let some = try ctx.objects("Post").where("hexColor", equals: "#42").fetch()
            #expect(some.count == 1)
            #expect(some.first?["views"] == .int64(42))
            let tag = try #require(try ctx.objects("Tag").first())
            #expect(try ctx.related(tag, "posts").count == 300)
        }
    }
}
