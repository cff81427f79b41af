/// One shipped version of an app's model, as a Swift namespace holding that version's model types: the
/// counterpart of SwiftData's `VersionedSchema`.
///
/// ```swift
/// enum PostsV1: SchemaVersion {
///     static let versionIdentifier = "v1"
///     static let models: [any EntityModel.Type] = [Post.self]
///
///     @Entity struct Post {
///         @Field(.unique) var postID: UUID
///         var color: String
///         var content: String
///         @Field(.indexed) var date: Date
///     }
/// }
///
/// let plan = try MigrationPlan(versions: [PostsV1.self, PostsV2.self, PostsV3.self], stages: [...])
/// let store = try Store.open(at: url, schema: try Schema(PostsV3.self), plan: plan)
/// ```
///
/// Keep every shipped version's types as they shipped (GRDB's rule: migrations describe the past). A
/// version's ``Schema`` is identical — JSON and version hashes — to the same model written with the schema
/// DSL, so stores written through either form open with the other.
public protocol SchemaVersion {
    /// The version's identifier, such as `"v3"`.
    static var versionIdentifier: String { get }
    /// The version's model types, one per entity, in the order the schema lists its entities.
    static var models: [any EntityModel.Type] { get }
}

extension Schema {
    /// The schema of a version declared as Swift model types.
    /// - Throws: ``SchemaValidationError`` listing every problem (a relationship without its inverse, …).
    public init(_ version: any SchemaVersion.Type) throws(SchemaValidationError) {
        try self.init(version.versionIdentifier, entities: version.models.map { $0.entity })
    }
}
