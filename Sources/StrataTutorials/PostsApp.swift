import Foundation
import StrataModels
import StrataTestKit

/// The posts app of the progressive-migration tutorials, as the versions it shipped — each a namespace of
/// model types, frozen as it shipped.
///
/// - v1: `Post(postID, color, content, date)`
/// - v2: `color` renamed `hexColor` (a renaming identifier: lightweight)
/// - v3: `content` moves into a new `Section` entity (`title` = first 4 characters + "...", `body` = the
///   content, `index` = 0); `Post.sections` ↔ `Section.post` (a custom stage: a typed mapping that takes a
///   `V2.Post` and writes a `V3.Post` and its `V3.Section`)
/// - v4: `softDelete` added, default false (lightweight)
public enum PostsApp {
    public enum V1: SchemaVersion {
        public static let versionIdentifier = "v1"
        public static let models: [any EntityModel.Type] = [Post.self]

        @Entity public struct Post {
            @Field(.unique) public var postID: UUID
            public var color: String
            public var content: String
            @Field(.indexed) public var date: Date
        }
    }

    public enum V2: SchemaVersion {
        public static let versionIdentifier = "v2"
        public static let models: [any EntityModel.Type] = [Post.self]

        @Entity public struct Post {
            @Field(.unique) public var postID: UUID
            @Field(originalName: "color") public var hexColor: String
            public var content: String
            @Field(.indexed) public var date: Date
        }
    }

    public enum V3: SchemaVersion {
        public static let versionIdentifier = "v3"
        public static let models: [any EntityModel.Type] = [Post.self, Section.self]

        @Entity public struct Post {
            @Field(.unique) public var postID: UUID
            public var hexColor: String
            @Field(.indexed) public var date: Date
            @Related(inverse: \Section.post, deleteRule: .cascade) public var sections: [ObjectID] = []
        }

        @Entity public struct Section {
            public var title: String
            public var body: String
            public var index: Int
            @Related(to: Post.self, inverse: "sections") public var post: ObjectID?
        }
    }

    public enum V4: SchemaVersion {
        public static let versionIdentifier = "v4"
        public static let models: [any EntityModel.Type] = [Post.self, Section.self]

        @Entity public struct Post {
            @Field(.unique) public var postID: UUID
            public var hexColor: String
            @Field(.indexed) public var date: Date
            public var softDelete: Bool = false
            @Related(inverse: \Section.post, deleteRule: .cascade) public var sections: [ObjectID] = []
        }

        @Entity public struct Section {
            public var title: String
            public var body: String
            public var index: Int
            @Related(to: Post.self, inverse: "sections") public var post: ObjectID?
        }
    }

    public static let v1: Schema = frozen { try Schema(V1.self) }
    public static let v2: Schema = frozen { try Schema(V2.self) }
    public static let v3: Schema = frozen { try Schema(V3.self) }
    public static let v4: Schema = frozen { try Schema(V4.self) }

    /// Every version, oldest first.
    public static let versions = [v1, v2, v3, v4]

    /// v2 → v3: each post keeps its identity and loses `content`, which becomes its first section — the old
    /// type in, the new types out.
    public static let splitContent = MigrationStage.custom(from: V2.self, to: V3.self, entityMappings: [
        .each(V2.Post.self, creating: [V3.Section.self]) { post, context in
            let kept = try context.insert(V3.Post(postID: post.postID, hexColor: post.hexColor, date: post.date),
                                          keepingSourceID: true)
            let section = try context.insert(V3.Section(title: String(post.content.prefix(4)) + "...", body: post.content, index: 0))
            try context.link(section, \V3.Section.post, to: kept)
        },
    ])

    /// The same step as a dynamic entity policy (the form for tools and dynamic code).
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

    /// The plan an app shipping v4 opens its store with.
    public static let plan: MigrationPlan = frozen { try MigrationPlan(versions: [V1.self, V2.self, V3.self, V4.self], stages: [splitContent]) }

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
                try context.insert(V1.Post(postID: p.postID, color: p.colour, content: p.content, date: p.date))
            case "v2":
                try context.insert(V2.Post(postID: p.postID, hexColor: p.colour, content: p.content, date: p.date))
            default:
                let post = try context.insert(V3.Post(postID: p.postID, hexColor: p.colour, date: p.date))
                try context.insert(V3.Section(title: String(p.content.prefix(4)) + "...", body: p.content, index: 0, post: post))
            }
        }
    }
}

/// Builds a frozen schema or plan; a model that does not validate is a programming error in this module.
func frozen<T>(_ make: () throws -> T) -> T {
    do { return try make() } catch { fatalError("invalid tutorial model: \(error)") }
}
