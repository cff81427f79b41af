/// What happens to related objects when an object is deleted.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
    /// The deleted object is removed from the related objects' inverse relationship.
    case nullify
    /// The related objects are deleted too.
    case cascade
    /// Deleting fails with ``StoreError/deleteDenied(entity:id:relationship:count:)`` while related objects exist.
    case deny
}

/// A link from objects of one entity to objects of another (or the same) entity.
///
/// Every relationship names its ``inverse`` on the destination entity; Strata keeps both sides in step,
/// so a link added from either side is visible from the other.
///
/// ```swift
/// Relationship("sections", to: "Section", inverse: "post", toMany: true, deleteRule: .cascade)
/// Relationship("post", to: "Post", inverse: "sections")
/// ```
public struct Relationship: Sendable, Hashable {
    /// The relationship's name, unique among the entity's attributes and relationships.
    public var name: String
    /// The name of the destination entity.
    public var destination: String
    /// The name of the relationship on the destination entity that points back.
    public var inverse: String
    /// Whether an object may be linked to several destination objects.
    public var isToMany: Bool
    /// What deleting an object does to the objects it is linked to.
    public var deleteRule: DeleteRule
    /// The fewest destination objects an object must be linked to (checked when a write commits).
    public var minCount: Int?
    /// The most destination objects an object may be linked to (checked when a link is added).
    public var maxCount: Int?
    /// The name this relationship had in the previous model version, if it was renamed.
    public var renamingIdentifier: String?
    /// A string mixed into the version hash.
    public var versionHashModifier: String?

    /// Creates a relationship.
    public init(
        _ name: String,
        to destination: String,
        inverse: String,
        toMany: Bool = false,
        deleteRule: DeleteRule = .nullify,
        minCount: Int? = nil,
        maxCount: Int? = nil,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = toMany
        self.deleteRule = deleteRule
        self.minCount = minCount
        self.maxCount = maxCount
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
    }

    /// The relationship, renamed from `previousName` (its renaming identifier).
    public func renamed(from previousName: String) -> Relationship { var r = self; r.renamingIdentifier = previousName; return r }
    /// The relationship with a version hash modifier.
    public func versionHashModifier(_ modifier: String) -> Relationship { var r = self; r.versionHashModifier = modifier; return r }

    /// The largest number of links an object may have, counting a to-one as 1.
    var effectiveMaxCount: Int? { isToMany ? maxCount : 1 }
}
