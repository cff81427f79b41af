/// How far a migration is: reported after every batch through ``MigrationOptions/progress`` and
/// ``Migrator/progress``.
public struct MigrationProgress: Sendable, Hashable, CustomStringConvertible {
    /// What the migration is doing.
    public enum Phase: String, Sendable, Hashable {
        /// Checking existing data (unique values, to-many to to-one).
        case checking
        /// Running a custom stage's `willMigrate` script.
        case willMigrate
        /// Creating destination objects (rewriting records, or a policy's instance pass).
        case instances
        /// A policy's relationship pass.
        case relationships
        /// Building indexes.
        case indexing
        /// Running a per-object script on the intermediate model.
        case script
        /// Switching the store to the new version.
        case switching
        /// Running a custom stage's `didMigrate` script.
        case didMigrate
        /// The step is complete.
        case completed
    }

    /// The step's position in the route (0-based) and the number of steps.
    public var stepIndex: Int
    public var stepCount: Int
    /// The step's source and destination version identifiers.
    public var sourceVersion: String
    public var destinationVersion: String
    public var phase: Phase
    /// The pass of a custom stage (0 otherwise) and the number of passes.
    public var pass: Int
    public var passCount: Int
    /// The entity being processed, if any.
    public var entity: String?
    /// Records done and total for the entity (or the phase).
    public var completed: Int
    public var total: Int

    public init(stepIndex: Int, stepCount: Int, sourceVersion: String, destinationVersion: String,
                phase: Phase, pass: Int = 0, passCount: Int = 1, entity: String? = nil,
                completed: Int = 0, total: Int = 0) {
        self.stepIndex = stepIndex
        self.stepCount = stepCount
        self.sourceVersion = sourceVersion
        self.destinationVersion = destinationVersion
        self.phase = phase
        self.pass = pass
        self.passCount = passCount
        self.entity = entity
        self.completed = completed
        self.total = total
    }

    /// The fraction of the current entity (or phase) done, from 0 to 1.
    public var fractionCompleted: Double { total > 0 ? min(1, Double(completed) / Double(total)) : 1 }

    public var description: String {
        var s = "step \(stepIndex + 1)/\(stepCount) \(sourceVersion) → \(destinationVersion): \(phase.rawValue)"
        if passCount > 1 { s += " (pass \(pass + 1)/\(passCount))" }
        if let entity { s += " \(entity)" }
        if total > 0 { s += " \(completed)/\(total)" }
        return s
    }
}
