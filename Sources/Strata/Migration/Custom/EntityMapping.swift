/// Maps the objects of one source entity to destination objects in a custom stage, through a policy.
///
/// Entity mappings run in the order given (users before books when books' files need their users);
/// source entities without a mapping follow the inferred (lightweight) mapping.
///
/// ## Topics
/// ### Policies and closures
/// - ``init(source:destinations:policy:)``
/// - ``transform(_:destinations:instances:relationships:)``
/// - ``each(_:creating:instances:relationships:)``
/// ### Declared mappings (a streaming copy, no per-object code)
/// - ``extract(_:from:linkedBy:values:skippingNil:)``
/// - ``deduplicate(_:of:into:as:linkedBy:values:)``
/// - ``move(_:into:values:)``
/// - ``deduplicate(_:into:linkedBy:values:)`` (with key paths; `extract` and `move` take model types too)
/// - ``MappedValue``
public struct EntityMapping: Sendable {
    /// The source entity (its name in the source model).
    public let sourceEntity: String
    /// The destination entities the policy creates objects of. The destination entity that matches the
    /// source entity (same name, or renamed from it) is always included.
    public let destinationEntities: [String]
    /// The policy that creates destination objects and their relationships.
    public let policy: any EntityMigrationPolicy

    public init(source sourceEntity: String, destinations: [String] = [], policy: any EntityMigrationPolicy) {
        self.sourceEntity = sourceEntity
        self.destinationEntities = destinations
        self.policy = policy
    }

    /// A mapping whose policy is given as closures.
    public static func transform(
        _ sourceEntity: String,
        destinations: [String] = [],
        instances: @escaping @Sendable (DynamicObject, InstanceMigrationContext) throws -> Void,
        relationships: (@Sendable (DynamicObject, RelationshipMigrationContext) throws -> Void)? = nil
    ) -> EntityMapping {
        EntityMapping(source: sourceEntity, destinations: destinations,
                      policy: ClosurePolicy(instances: instances, relationships: relationships))
    }
}

/// Creates destination objects from each source object of an entity, then links them, in the spirit of
/// Core Data's `NSEntityMigrationPolicy`.
///
/// Both passes run over every source object in bounded batches. The instance pass of every mapping of a
/// pass runs before its relationship pass, so that relationships can find "the destination objects made
/// from this source object" for any entity.
public protocol EntityMigrationPolicy: Sendable {
    /// Creates zero, one or several destination objects for `source` (read under the source model).
    /// The default creates one object of the same-named destination entity with the inferred values,
    /// keeping the source's identifier.
    func createDestinationInstances(for source: DynamicObject, in context: InstanceMigrationContext) throws

    /// Links the destination objects made from `source`. The default translates each of the source
    /// object's links whose relationship still exists into links between the corresponding destination
    /// objects.
    func createRelationships(for source: DynamicObject, in context: RelationshipMigrationContext) throws
}

extension EntityMigrationPolicy {
    public func createDestinationInstances(for source: DynamicObject, in context: InstanceMigrationContext) throws {
        try context.insertInferred(for: source)
    }

    public func createRelationships(for source: DynamicObject, in context: RelationshipMigrationContext) throws {
        try context.linkInferred(for: source)
    }
}

struct ClosurePolicy: EntityMigrationPolicy {
    let instances: @Sendable (DynamicObject, InstanceMigrationContext) throws -> Void
    let relationships: (@Sendable (DynamicObject, RelationshipMigrationContext) throws -> Void)?

    func createDestinationInstances(for source: DynamicObject, in context: InstanceMigrationContext) throws {
        try instances(source, context)
    }

    func createRelationships(for source: DynamicObject, in context: RelationshipMigrationContext) throws {
        if let relationships { try relationships(source, context) } else { try context.linkInferred(for: source) }
    }
}
