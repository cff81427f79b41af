import BenchCore
import Foundation
import StrataModels

/// The posts model as macro models: the same schemas as ``PostModel``'s DSL (identical version hashes), read
/// and written field by field by the code `@Entity` generates.
public enum MacroPosts {
    public enum V1: SchemaVersion {
        public static let versionIdentifier = "v1"
        public static let models: [any EntityModel.Type] = [Post.self]

        @Entity public struct Post {
            public var postID: UUID
            public var date: Date
            public var color: String
            public var content: String
            public var views: Int32
        }
    }

    /// `views` widened to Int64 (``PostModel/widened()``): read over records still in v1's layout, the
    /// projection widens each value as it is decoded.
    public enum Widened: SchemaVersion {
        public static let versionIdentifier = "v2-rewrite"
        public static let models: [any EntityModel.Type] = [Post.self]

        @Entity public struct Post {
            public var postID: UUID
            public var date: Date
            public var color: String
            public var content: String
            public var views: Int64
        }
    }

    public enum Split: SchemaVersion {
        public static let versionIdentifier = "v2-split"
        public static let models: [any EntityModel.Type] = [Post.self, Section.self]

        @Entity public struct Post {
            public var postID: UUID
            public var date: Date
            public var color: String
            public var views: Int32
            @Related(inverse: \Section.post, deleteRule: .cascade) public var sections: [ObjectID] = []
        }

        @Entity public struct Section {
            public var title: String
            public var body: String
            public var index: Int
            @Related(to: Post.self, inverse: "sections") public var post: ObjectID?
        }
    }

    /// The split as a typed stage: a `V1.Post` in, a `Split.Post` and its `Split.Section` out, linked.
    public static func splitStage() -> MigrationStage {
        MigrationStage.custom(from: V1.self, to: Split.self, entityMappings: [
            .each(V1.Post.self, creating: [Split.Section.self]) { post, context in
                let kept = try context.insert(Split.Post(postID: post.postID, date: post.date, color: post.color, views: post.views),
                                              keepingSourceID: true)
                let section = try context.insert(Split.Section(title: DataSet.sectionTitle(post.content), body: post.content, index: 0))
                try context.link(section, \Split.Section.post, to: kept)
            },
        ])
    }

    /// The typed split with each post linked to its section in the mapping's relationship pass, once every post and
    /// section exists: the section found by its source post, as ``PostModel/splitStageLinkingInRelationshipPass()``
    /// finds it for the dynamic policy.
    public static func splitStageLinkingInRelationshipPass() -> MigrationStage {
        MigrationStage.custom(from: V1.self, to: Split.self, entityMappings: [
            .each(V1.Post.self, creating: [Split.Section.self], instances: { post, context in
                try context.insert(Split.Post(postID: post.postID, date: post.date, color: post.color, views: post.views),
                                   keepingSourceID: true)
                try context.insert(Split.Section(title: DataSet.sectionTitle(post.content), body: post.content, index: 0))
            }, relationships: { post, context in
                guard let id = post.objectID else { throw BenchFailure("a post of the relationship pass without its identifier") }
                for section in try context.destinations(for: id, as: Split.Section.self) {
                    try context.link(section, \Split.Section.post, to: id)
                }
            }),
        ])
    }
}

extension MacroPosts.V1.Post {
    public init(_ r: PostRecord) {
        self.init(postID: r.uuid, date: r.dateValue, color: r.color, content: r.content, views: r.views)
    }
}
