import Foundation

/// One transaction of the change history as it is stored: when and by whom it was committed, the model that
/// wrote it, and what it changed per entity tag (the same net changes observers see, with every object listed
/// and the tombstones of deleted objects). A migration's entry also says what the step did to each entity.
struct HistoryEntry: Sendable {
    enum Kind: UInt8, Sendable {
        case commit = 0
        case migration = 1
    }

    /// What a migration step did to one entity (the stored form of ``HistoryMigration/Step``).
    struct MigrationPart: Sendable {
        /// The model the store was at before the step.
        var sourceModelID: UInt64
        /// By tag, ascending.
        var steps: [(tag: UInt32, step: HistoryMigration.Step)]
    }

    var kind: Kind
    /// When the transaction committed, in milliseconds since 1970.
    var time: Int64
    /// The name the app gave the write (nil: none).
    var author: String?
    /// The ``HistoryModel`` that names the changes: the model of the handle that wrote them (for a migration,
    /// the destination model).
    var modelID: UInt64
    /// What changed, by entity tag. For deletions of entities with preserved attributes, `tombstones` holds the
    /// preserved values of each deleted object, in the order of `deleted`.
    var entities: [UInt32: EntityChanges]
    var migration: MigrationPart?

    /// The number of objects the transaction inserted, updated and deleted.
    var changeCount: Int {
        entities.values.reduce(0) { $0 + $1.inserted.count + $1.updated.count + $1.deleted.count }
    }

    /// The author of the entries Strata writes for a migration (its scripts' commits, and the step itself).
    static let migrationAuthor = "strata.migration"
}
