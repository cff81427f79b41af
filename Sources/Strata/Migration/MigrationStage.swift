/// How one step of a ``MigrationPlan`` runs when it cannot be inferred, in the spirit of SwiftData's
/// `MigrationStage.custom` and Core Data's mapping models with `NSEntityMigrationPolicy`.
///
/// A stage may have:
/// - a `willMigrate` script, run on the store at the source version before anything else;
/// - per-object ``ObjectScript``s that run on an automatic *intermediate model* (for a required attribute
///   added without a default, or an attribute whose type changes);
/// - ``EntityMapping``s with ``EntityMigrationPolicy`` objects, in one or more passes, for objects that
///   change shape (split, merge, or move into other entities);
/// - a `didMigrate` script, run on the store at the destination version.
///
/// Everything a stage writes goes to staging databases and becomes visible in one atomic switch when the
/// stage completes; see <doc:CustomMigrations>.
public struct MigrationStage: Sendable {
    /// The step's source version identifier.
    public let source: String
    /// The step's destination version identifier.
    public let destination: String
    /// Runs first, on the store at the source version, in one write transaction.
    public let willMigrate: (@Sendable (WriteContext) throws -> Void)?
    /// Per-object scripts on the intermediate model.
    public let scripts: [ObjectScript]
    /// Entity mappings, in passes; entities not mapped follow the inferred mapping.
    public let passes: [[EntityMapping]]
    /// Runs last, on the store at the destination version, in one write transaction.
    public let didMigrate: (@Sendable (WriteContext) throws -> Void)?
    /// Whether the step's entry in the change history lists, object by object, what the stage's entity mappings
    /// and scripts made: the objects created (inserted), kept (updated, every property) and not carried over
    /// (deleted, with their tombstones). Without it, the entry says "read these entities again". See
    /// ``recordingChangesInHistory()``.
    public private(set) var recordsChangesInHistory = false

    /// A stage with any of scripts, entity mappings (in one pass) and `willMigrate`/`didMigrate`.
    public static func custom(
        from source: String,
        to destination: String,
        willMigrate: (@Sendable (WriteContext) throws -> Void)? = nil,
        scripts: [ObjectScript] = [],
        entityMappings: [EntityMapping] = [],
        didMigrate: (@Sendable (WriteContext) throws -> Void)? = nil
    ) -> MigrationStage {
        MigrationStage(source: source, destination: destination, willMigrate: willMigrate, scripts: scripts,
                       passes: entityMappings.isEmpty ? [] : [entityMappings], didMigrate: didMigrate)
    }

    /// A stage whose entity mappings run in several passes (Core Data's "multiple mapping models" for large
    /// data sets): each pass creates its destination objects and then their relationships before the next.
    public static func custom(
        from source: String,
        to destination: String,
        willMigrate: (@Sendable (WriteContext) throws -> Void)? = nil,
        scripts: [ObjectScript] = [],
        passes: [[EntityMapping]],
        didMigrate: (@Sendable (WriteContext) throws -> Void)? = nil
    ) -> MigrationStage {
        MigrationStage(source: source, destination: destination, willMigrate: willMigrate, scripts: scripts,
                       passes: passes, didMigrate: didMigrate)
    }

    /// A step made explicit but inferred (documents a lightweight step in the plan).
    public static func lightweight(from source: String, to destination: String) -> MigrationStage {
        MigrationStage(source: source, destination: destination, willMigrate: nil, scripts: [], passes: [], didMigrate: nil)
    }

    /// The stage, listing in the change history the objects its entity mappings and scripts create, keep and
    /// drop (see <doc:ChangeHistory>), so that a consumer applies them as changes instead of reading the entities
    /// again. The listing is computed when the step switches, from the identifiers of the source and destination
    /// objects (a pass over their keys).
    public func recordingChangesInHistory() -> MigrationStage {
        var stage = self
        stage.recordsChangesInHistory = true
        return stage
    }

    /// Whether the stage has nothing custom: the step is inferred.
    var isLightweight: Bool { willMigrate == nil && scripts.isEmpty && passes.isEmpty && didMigrate == nil }
}
