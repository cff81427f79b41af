import Foundation
import Strata
import StrataTestKit
import StrataTutorials
import Testing

/// The posts tutorial: v1 → v2 (rename) → v3 (custom split into sections) → v4 (added default), from every
/// older version, with 10,000 posts.
@Suite struct PostsAppTests {
    static let count = 10_000

    @Test(arguments: ["v1", "v2", "v3"])
    func migratesToV4(from version: String) throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let schema = try #require(PostsApp.plan.schema(version))
        let url = try kit.makeStore(version: schema) { try PostsApp.fill($0, version: version, count: Self.count) }
        let run = try kit.migrate(url, plan: PostsApp.plan)

        #expect(run.after.schema.versionIdentifier == "v4")
        try run.after.read { context throws in
            #expect(try context.count("Post") == Self.count)
            #expect(try context.count("Section") == Self.count)
        }
        // Every post, found by its postID, holds what `fill` gave it (the test's input, not the store before).
        var checked = 0
        try run.after.read { new throws in
            var posts: [UUID: DynamicObject] = [:]
            try new.objects("Post").forEach { post in if let id = post["postID"].uuidValue { posts[id] = post } }
            for input in PostsApp.contents(count: Self.count) {
                let after = try #require(posts[input.postID], "post \(input.postID) is missing")
                #expect(after["hexColor"] == .string(input.colour))
                #expect(after["date"] == .date(input.date))
                #expect(after["softDelete"] == false)
                let sections = try new.relatedObjects(after, "sections")
                #expect(sections.count == 1)
                let section = try #require(sections.first)
                #expect(section["body"] == .string(input.content))
                #expect(section["title"] == .string(String(input.content.prefix(4)) + "..."))
                #expect(section["index"] == 0)
                #expect(try new.related(section, "post") == [after.id])
                checked += 1
            }
        }
        #expect(checked == Self.count)
        #expect(try run.after.verify().isClean)
        let steps = Set(run.progress.map { "\($0.sourceVersion)→\($0.destinationVersion)" })
        let expected: Set<String> = ["v1": ["v1→v2", "v2→v3", "v3→v4"], "v2": ["v2→v3", "v3→v4"], "v3": ["v3→v4"]][version] ?? []
        #expect(steps == expected)
    }

    @Test func customStageReportsProgressPerPhaseAndEntity() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let url = try kit.makeStore(version: PostsApp.v2) { try PostsApp.fill($0, version: "v2", count: 2_500) }
        var options = MigrationOptions()
        options.batchSize = 500
        let run = try kit.migrate(url, plan: PostsApp.plan, options: options)
        let split = run.progress.filter { $0.sourceVersion == "v2" }
        let instances = split.filter { $0.phase == .instances && $0.entity == "Post" }
        let relationships = split.filter { $0.phase == .relationships && $0.entity == "Post" }
        #expect(instances.count >= 5, "one report per batch of 500")
        #expect(instances.last?.completed == 2_500 && instances.last?.total == 2_500)
        #expect(relationships.last?.completed == 2_500)
        #expect(split.contains { $0.phase == .switching })
        #expect(split.last?.phase == .completed)
        #expect(split.allSatisfy { $0.stepCount == 2 })
    }
}
