import Foundation

/// What one transaction of the change history did to the objects of one entity: the objects it inserted,
/// updated (with the properties that changed) and deleted (with the tombstone of each: the values of the
/// attributes the model preserves on deletion).
///
/// Entities and properties are named as the model that wrote the transaction names them: after a migration,
/// by the new model's names. Each object appears once per transaction: one inserted and changed in the same
/// transaction is inserted; one inserted and deleted in it does not appear.
public struct HistoryEntityChanges: Sendable, Hashable {
    /// The entity's name in the model that wrote the transaction.
    public let entity: String
    /// Objects that did not exist before, ascending.
    public let inserted: [ObjectID]
    /// Objects whose attributes or links changed, ascending, each with the properties that changed.
    public let updated: [HistoryUpdate]
    /// Objects that no longer exist, ascending, each with its tombstone.
    public let deleted: [HistoryDeletion]
    /// False when the objects are not listed one by one and a consumer should read the entity again: the
    /// entity's records were rewritten by a migration step (see ``HistoryMigration``).
    public let isComplete: Bool

    /// The number of objects listed.
    public var count: Int { inserted.count + updated.count + deleted.count }
}

/// An object a transaction updated, and the attributes and relationships that changed (named as the model that
/// wrote the transaction names them).
public struct HistoryUpdate: Sendable, Hashable {
    /// The object.
    public let id: ObjectID
    /// The attributes whose values changed and the relationships whose links changed. (For an entity with more
    /// than 63 properties, a change to any property from the 64th on names all of those.)
    public let properties: [String]
}

/// An object a transaction deleted, and the last values of the attributes its model preserves on deletion
/// (``Attribute/preservesValueOnDeletion``, `@Field(.preserveValueOnDeletion)`).
public struct HistoryDeletion: Sendable, Hashable {
    /// The object.
    public let id: ObjectID
    /// The preserved attributes' values when the object was deleted, by attribute name (empty when the model
    /// preserves none).
    public let tombstone: [String: Value]
}
