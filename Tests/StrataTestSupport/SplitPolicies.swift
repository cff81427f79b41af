import Strata

/// The posts split (`content` → a `Section` per post, linked back) as a dynamic closure policy, the form the declared
/// and typed splits are compared with: the post keeps its identity with its inferred values, a post without content
/// gets no section, a section's title is the first four characters of its body and "...", its index 7.
public enum SplitPolicies {
    public static let closureSplit = EntityMapping.transform("Post", destinations: ["Section"], instances: { post, ctx in
        guard let section = try insertPostAndSection(post, ctx) else { return }
        try ctx.link(post.id, of: "Post", "sections", to: section)
    })

    /// The split's instance work for one post: the post with its inferred values, and its section if it has content
    /// (returned).
    @discardableResult
    static func insertPostAndSection(_ post: DynamicObject, _ ctx: InstanceMigrationContext) throws -> ObjectID? {
        try ctx.insert(try ctx.inferredObject(for: post))
        guard let content = post["content"].stringValue else { return nil }
        var section = try ctx.makeObject("Section")
        section["body"] = .string(content)
        section["title"] = .string(String(content.prefix(4)) + "...")
        section["index"] = .int64(7)
        return try ctx.insert(section, keepingSourceID: false)
    }

    /// The split of ``closureSplit`` with each post linked to its section in the relationship pass, as a Core Data
    /// policy links in `createRelationships(forDestination:in:manager:)`: the section found by its source post.
    /// The pass checks that the post it was handed is the one it asked about (its content is the body of the
    /// section made from it) and fails the stage with ``HandedOverWrongPost`` otherwise.
    public static let closureSplitLinkingInRelationshipPass = EntityMapping.transform("Post", destinations: ["Section"], instances: { post, ctx in
        try insertPostAndSection(post, ctx)
    }, relationships: { post, ctx in
        let sections = try ctx.destinations(for: post.id, entity: "Section")
        let bodies = try sections.map { try ctx.destinationObject($0, of: "Section")?["body"].stringValue }
        guard bodies == (post["content"].stringValue.map { [$0] } ?? []) else { throw HandedOverWrongPost(post: post.id) }
        for section in sections { try ctx.link(post.id, of: "Post", "sections", to: section) }
    })

    /// A relationship pass was handed a post whose values are not those of the post it was made from.
    public struct HandedOverWrongPost: Error, Equatable {
        public let post: ObjectID
        public init(post: ObjectID) { self.post = post }
    }
}
