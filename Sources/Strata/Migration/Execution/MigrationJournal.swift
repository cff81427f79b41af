import Foundation

/// The checkpoint of a migration step in progress, stored in the `journal` metadata record and rewritten
/// in the same write transaction as every batch, so that after a crash the step resumes exactly after the
/// last committed batch (redoing at most one batch's work, which never committed).
///
/// Everything the step writes before its switch goes to staging databases; the store's model, catalog and
/// live databases are untouched until the single switch transaction, so readers see the source version
/// whole until then and the destination version whole afterwards.
struct MigrationJournal: Codable, Equatable {
    static let formatVersion = 1

    var formatVersion = MigrationJournal.formatVersion
    var sourceVersion: String
    var destinationVersion: String
    var sourceFingerprint: String
    var destinationFingerprint: String
    /// The destination model's JSON (so a step can resume knowing only the store).
    var destinationModel: Data
    /// The catalog the store switches to.
    var destinationCatalog: Data
    /// Whether the step runs a custom stage (which a resume needs).
    var hasStage: Bool
    /// Databases created for the step, dropped if it rolls back.
    var stagingDatabases: [String]
    /// Databases of the source version emptied by the switch.
    var retiredDatabases: [String]
    var tasks: [MigrationTask]
    /// The planning options the step began with (absent in journals of earlier versions, which planned
    /// every change as a rewrite: a layout limit of 1 and indexes built by the step).
    var maximumLayouts: Int? = nil
    var indexesInBackground: Bool? = nil
    var taskIndex: Int = 0
    /// The last source object done in the current task.
    var cursor: UInt64? = nil
    /// Objects done in the current task.
    var completed: Int = 0
    /// What a check task found so far (duplicate values, offending objects), at most 100.
    var findings: [String] = []
    var findingsTotal: Int = 0
    var batches: Int = 0
    var ownerPID: Int32
    var startedAt: Double

    var currentTask: MigrationTask? { taskIndex < tasks.count ? tasks[taskIndex] : nil }

    mutating func advance() {
        taskIndex += 1
        cursor = nil
        completed = 0
        findings = []
        findingsTotal = 0
    }

    mutating func record(finding: String) {
        findingsTotal += 1
        if findings.count < 100 { findings.append(finding) }
    }

    func encoded() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Array(try encoder.encode(self))
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> MigrationJournal {
        do {
            let journal = try JSONDecoder().decode(MigrationJournal.self, from: Data(bytes))
            guard journal.formatVersion == formatVersion else { throw DecodeFailure("journal format \(journal.formatVersion)") }
            return journal
        } catch let failure as DecodeFailure {
            throw failure
        } catch {
            throw DecodeFailure("journal: \(error)")
        }
    }
}

/// One unit of a step's work, in the order the step runs them.
enum MigrationTask: Codable, Equatable, CustomStringConvertible {
    /// A custom stage's `willMigrate` script.
    case willMigrate
    /// Objects of `entity` (source name) linked to more than `maximum` objects through `relationship`.
    case checkMaximumLinks(entity: String, relationship: String, maximum: Int)
    /// Objects of `entity` (source name) linked to fewer than `minimum` objects.
    case checkMinimumLinks(entity: String, relationship: String, minimum: Int)
    /// Values shared by several objects in an existing index that becomes unique.
    case checkUniqueIndex(entity: String, attribute: String)
    /// Every record of source entity `source` rewritten as a record of destination entity `entity`.
    case rewrite(entity: String, source: String)
    /// A custom stage's instance pass for one entity mapping.
    case instances(pass: Int, mapping: Int)
    /// A custom stage's relationship pass for one entity mapping.
    case relationships(pass: Int, mapping: Int)
    /// An index of the destination, built from its entity's records.
    case buildIndex(entity: String, attribute: String)
    /// Required attributes and minimum relationship counts of a destination entity built by a stage.
    case checkRequired(entity: String)
    /// The switch to the destination version.
    case switchOver
    /// A custom stage's `didMigrate` script (after the switch).
    case didMigrate

    var phase: MigrationProgress.Phase {
        switch self {
        case .willMigrate: .willMigrate
        case .checkMaximumLinks, .checkMinimumLinks, .checkUniqueIndex, .checkRequired: .checking
        case .rewrite: .instances
        case .instances: .instances
        case .relationships: .relationships
        case .buildIndex: .indexing
        case .switchOver: .switching
        case .didMigrate: .didMigrate
        }
    }

    var entity: String? {
        switch self {
        case .checkMaximumLinks(let e, _, _), .checkMinimumLinks(let e, _, _), .checkUniqueIndex(let e, _),
             .rewrite(let e, _), .buildIndex(let e, _), .checkRequired(let e): e
        default: nil
        }
    }

    var description: String {
        switch self {
        case .willMigrate: "willMigrate"
        case .checkMaximumLinks(let e, let r, let m): "check \(e).\(r) ≤ \(m)"
        case .checkMinimumLinks(let e, let r, let m): "check \(e).\(r) ≥ \(m)"
        case .checkUniqueIndex(let e, let a): "check \(e).\(a) unique"
        case .rewrite(let e, let s): s == e ? "rewrite \(e)" : "rewrite \(s) as \(e)"
        case .instances(let p, let m): "instances (pass \(p + 1), mapping \(m + 1))"
        case .relationships(let p, let m): "relationships (pass \(p + 1), mapping \(m + 1))"
        case .buildIndex(let e, let a): "index \(e).\(a)"
        case .checkRequired(let e): "check \(e) required values"
        case .switchOver: "switch"
        case .didMigrate: "didMigrate"
        }
    }
}
