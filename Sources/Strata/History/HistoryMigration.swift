import Foundation

/// What a migration step did, as its entry in the change history says: the versions it went from and to, and
/// what it did to each entity.
///
/// The migration's entry comes after every transaction committed at the source version and before every one at
/// the destination version, so a consumer holding a token from before the migration always receives it before
/// changes that name the new model's properties. What to do with each entity:
///
/// | step | the objects | a consumer |
/// |---|---|---|
/// | ``Step/inferred`` | kept, values carried (renames, added attributes with defaults, removed ones) | migrates its own copy the same way, or ignores the new attributes until it does |
/// | ``Step/rewritten`` | kept, every record rewritten (scripts, type changes) | reads the entity again (``HistoryEntityChanges/isComplete`` is false) |
/// | ``Step/custom`` | made by a custom stage's entity mappings | reads the entity again, or applies the listed changes when the stage records them (``MigrationStage/recordingChangesInHistory()``) |
/// | ``Step/added`` | a new entity (no objects until the stage or later commits make some) | nothing to do |
/// | ``Step/removed`` | gone | deletes every object of it it holds |
public struct HistoryMigration: Sendable, Hashable {
    /// What a migration step did to one entity.
    public enum Step: String, Sendable, Hashable, Codable, CaseIterable {
        /// The objects were kept; the step changed metadata only (inferred from the models).
        case inferred
        /// The objects were kept and every record rewritten (an object script, a type change).
        case rewritten
        /// The objects were made by a custom stage's entity mappings.
        case custom
        /// A new entity.
        case added
        /// The entity is gone.
        case removed

        var code: UInt8 {
            switch self {
            case .inferred: 0
            case .rewritten: 1
            case .custom: 2
            case .added: 3
            case .removed: 4
            }
        }

        init?(code: UInt8) {
            switch code {
            case 0: self = .inferred
            case 1: self = .rewritten
            case 2: self = .custom
            case 3: self = .added
            case 4: self = .removed
            default: return nil
            }
        }
    }

    /// The model version the store was at before the step.
    public let sourceVersion: String
    /// The model version the store is at after it.
    public let destinationVersion: String
    /// What the step did to each entity: by the destination model's names, and the source model's for removed
    /// entities.
    public let steps: [String: Step]
}
