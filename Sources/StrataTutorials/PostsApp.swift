import Foundation
import Strata
import StrataTestKit

/// The posts app of the progressive-migration tutorials, as the versions it shipped.
///
/// - v1: `Post(postID, color, content, date)`
/// - v2: `color` renamed `hexColor` (a renaming identifier: lightweight)
/// - v3: `content` moves into a new `Section` entity (`title` = first 4 characters + "...", `body` = the
///   content, `index` = 0); `Post.sections` ↔ `Section.post` (a custom stage with an entity policy)
/// - v4: `softDelete` added, default false (lightweight)
public enum PostsApp {
    public static let v1: Schema = frozen {
        try Schema("v1") {
            Entity("Post") {
                Attribute("postID", .uuid).unique()
                Attribute("color", .string)
                Attribute("content", .string)
                Attribute("date", .date).indexed()
            }
        }
    }

    public static let v2: Schema = frozen {
        try Schema("v2") {
            Entity("Post") {
                Attribute("postID", .uuid).unique()
                Attribute("hexColor", .string).renamed(from: "color")
                Attribute("content", .string)
                Attribute("date", .date).indexed()
            }
        }
    }

    public static let v3: Schema = frozen {
        try Schema("v3") {
            Entity("Post") {
                Attribute("postID", .uuid).unique()
                Attribute("hexColor", .string)
                Attribute("date", .date).indexed()
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

    public static let v4: Schema = frozen {
        try Schema("v4") {
            Entity("Post") {
                Attribute("postID", .uuid).unique()
                Attribute("hexColor", .string)
                Attribute("date", .date).indexed()
                Attribute("softDelete", .bool).defaultValue(false)
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

    /// Every version, oldest first.
    public static let versions = [v1, v2, v3, v4]

    /// v2 → v3: each post keeps its identity and loses `content`, which becomes its first section.
    public struct SplitContentPolicy: EntityMigrationPolicy {
        public init() {}

        public func createDestinationInstances(for post: DynamicObject, in context: InstanceMigrationContext) throws {
            try context.insertInferred(for: post)
            let content = post["content"].stringValue ?? ""
            try context.insert("Section", [
                "title": .string(String(content.prefix(4)) + "..."),
                "body": .string(content),
                "index": 0,
            ])
        }

        public func createRelationships(for post: DynamicObject, in context: RelationshipMigrationContext) throws {
            for section in try context.destinations(for: post.id, entity: "Section") {
                try context.link(post.id, of: "Post", "sections", to: section)
            }
        }
    }

    public static let splitContent = MigrationStage.custom(
        from: "v2", to: "v3",
        entityMappings: [EntityMapping(source: "Post", destinations: ["Section"], policy: SplitContentPolicy())])

    /// The plan an app shipping v4 opens its store with.
    public static let plan: MigrationPlan = frozen { try MigrationPlan(schemas: versions, stages: [splitContent]) }

    /// What ``fill(_:version:count:seed:)`` writes for one post, whatever the version: tests derive what a
    /// migrated store must hold from these, not from the store before the migration.
    public struct PostContent: Sendable, Equatable {
        public var postID: UUID
        public var colour: String
        public var content: String
        public var date: Date
    }

    /// The posts `fill` writes, deterministically from `seed`.
    public static func contents(count: Int, seed: UInt64 = 1) -> [PostContent] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { i in
            let colour = String(format: "#%06X", Int(random.next() % 0xFFFFFF))
            let content = "Post \(i): " + TutorialText.sentence(&random, bytes: 60)
            let date = Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(i) * 60)
            return PostContent(postID: random.uuid(), colour: colour, content: content, date: date)
        }
    }

    /// Fills a store at `version` (v1, v2 or v3) with `count` posts, deterministically from `seed`.
    public static func fill(_ context: WriteContext, version: String, count: Int, seed: UInt64 = 1) throws {
        for p in contents(count: count, seed: seed) {
            switch version {
            case "v1":
                try context.insert("Post", ["postID": .uuid(p.postID), "color": .string(p.colour),
                                            "content": .string(p.content), "date": .date(p.date)])
            case "v2":
                try context.insert("Post", ["postID": .uuid(p.postID), "hexColor": .string(p.colour),
                                            "content": .string(p.content), "date": .date(p.date)])
            default:
                let post = try context.insert("Post", ["postID": .uuid(p.postID), "hexColor": .string(p.colour), "date": .date(p.date)])
                let section = try context.insert("Section", ["title": .string(String(p.content.prefix(4)) + "..."),
                                                             "body": .string(p.content), "index": 0])
                try context.link(post, "sections", to: section)
            }
        }
    }
}

/// Builds a frozen schema or plan; a model that does not validate is a programming error in this module.
func frozen<T>(_ make: () throws -> T) -> T {
    do { return try make() } catch { fatalError("invalid tutorial model: \(error)") }
}
