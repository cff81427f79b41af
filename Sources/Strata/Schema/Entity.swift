/// A kind of object: its attributes and relationships.
///
/// ```swift
/// Entity("Post") {
///     Attribute("postID", .uuid).unique()
///     Attribute("hexColor", .string).renamed(from: "color")
///     Relationship("sections", to: "Section", inverse: "post", toMany: true, deleteRule: .cascade)
/// }
/// ```
public struct Entity: Sendable, Hashable {
    /// The entity's name, unique in the schema.
    public var name: String
    /// The attributes, in declaration order.
    public var attributes: [Attribute]
    /// The relationships, in declaration order.
    public var relationships: [Relationship]
    /// The name this entity had in the previous model version, if it was renamed.
    public var renamingIdentifier: String?
    /// A string mixed into the version hash.
    public var versionHashModifier: String?

    /// Creates an entity from lists of attributes and relationships.
    public init(
        _ name: String,
        attributes: [Attribute] = [],
        relationships: [Relationship] = [],
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil
    ) {
        self.name = name
        self.attributes = attributes
        self.relationships = relationships
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
    }

    /// Creates an entity whose attributes and relationships are listed in a builder.
    public init(
        _ name: String,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        @EntityMemberBuilder members: () -> [EntityMember]
    ) {
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        for member in members() {
            switch member {
            case .attribute(let a): attributes.append(a)
            case .relationship(let r): relationships.append(r)
            }
        }
        self.init(name, attributes: attributes, relationships: relationships,
                  renamingIdentifier: renamingIdentifier, versionHashModifier: versionHashModifier)
    }

    /// The attribute named `name`.
    public func attribute(named name: String) -> Attribute? { attributes.first { $0.name == name } }
    /// The relationship named `name`.
    public func relationship(named name: String) -> Relationship? { relationships.first { $0.name == name } }

    /// The entity, renamed from `previousName` (its renaming identifier).
    public func renamed(from previousName: String) -> Entity { var e = self; e.renamingIdentifier = previousName; return e }

    /// The attributes that are stored in records (not transient), in declaration order.
    var storedAttributes: [Attribute] { attributes.filter { !$0.isTransient } }
}

/// An attribute or a relationship, as listed in an ``Entity`` builder.
public enum EntityMember: Sendable, Hashable {
    case attribute(Attribute)
    case relationship(Relationship)
}

/// Collects the attributes and relationships of an ``Entity``.
@resultBuilder
public enum EntityMemberBuilder {
    public static func buildExpression(_ attribute: Attribute) -> [EntityMember] { [.attribute(attribute)] }
    public static func buildExpression(_ relationship: Relationship) -> [EntityMember] { [.relationship(relationship)] }
    public static func buildBlock(_ parts: [EntityMember]...) -> [EntityMember] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [EntityMember]?) -> [EntityMember] { part ?? [] }
    public static func buildEither(first: [EntityMember]) -> [EntityMember] { first }
    public static func buildEither(second: [EntityMember]) -> [EntityMember] { second }
    public static func buildArray(_ parts: [[EntityMember]]) -> [EntityMember] { parts.flatMap { $0 } }
}

/// Collects the entities of a ``Schema``.
@resultBuilder
public enum SchemaEntityBuilder {
    public static func buildExpression(_ entity: Entity) -> [Entity] { [entity] }
    public static func buildBlock(_ parts: [Entity]...) -> [Entity] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [Entity]?) -> [Entity] { part ?? [] }
    public static func buildEither(first: [Entity]) -> [Entity] { first }
    public static func buildEither(second: [Entity]) -> [Entity] { second }
    public static func buildArray(_ parts: [[Entity]]) -> [Entity] { parts.flatMap { $0 } }
}
