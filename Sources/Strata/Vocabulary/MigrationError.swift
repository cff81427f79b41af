/// An error from a migration, with the state the store is really in and the next step that works.
///
/// Every migration error says, in ``storeState``, where the failure left the store — read back from the
/// store after the failure, not assumed — and its ``description`` ends with what to do next:
/// - ``StoreState/at(version:)``: the store is whole at that version (nothing was written, or the failed
///   step was rolled back; only what a custom stage's `willMigrate` committed on it stays). An app of that
///   version opens it as usual.
/// - ``StoreState/migrating(source:destination:)``: a step was stopped between two batches (a kill, a full
///   disk, an I/O error, ``MigrationOptions/shouldStop``). The store still reads as `source`; opening it
///   with the plan resumes the step from its last committed batch.
/// - ``StoreState/switched(version:)``: the step's switch committed, so the store is at the destination
///   version, but its custom stage's `didMigrate` did not complete: it runs again at the next open with the
///   plan.
///
/// Branch on ``code``; a `switch` over it needs a `default` case, since later releases may add codes.
///
/// ## Topics
/// ### What failed
/// - ``code``
/// - ``Code``
/// - ``sourceVersion``
/// - ``destinationVersion``
/// - ``diagnostics``
/// - ``entity``
/// - ``objectID``
/// - ``phase``
/// - ``underlying``
/// ### Where the store is
/// - ``storeState``
/// - ``StoreState``
public struct MigrationError: Error, Sendable, CustomStringConvertible {
    /// What kind of migration failure an error is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name (`"cannotInfer"`, …).
        public let name: String
        init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A step cannot be inferred from the two models; nothing was written (see ``MigrationError/diagnostics``).
        public static let cannotInfer = Code("cannotInfer")
        /// Existing data does not allow the step (duplicates for a new unique constraint, too many links for a
        /// to-one, required values missing); the step was rolled back.
        public static let dataCheckFailed = Code("dataCheckFailed")
        /// A custom stage's policy or script threw (the error is in ``MigrationError/underlying``).
        public static let stageFailed = Code("stageFailed")
        /// The store failed underneath the migration (disk full, I/O error, the map's ceiling); the step is
        /// resumable from its last committed batch (the store error is in ``MigrationError/underlying``).
        public static let interrupted = Code("interrupted")
        /// The plan has no route from the store's version to the app's; nothing was written.
        public static let noRoute = Code("noRoute")
        /// ``MigrationOptions/shouldStop`` asked the migration to stop; it stopped between two batches.
        public static let stopped = Code("stopped")
    }

    /// Where a failed migration left the store, as read back from the store.
    public enum StoreState: Sendable, Hashable, CustomStringConvertible {
        /// The store is whole at this version, with no migration in progress.
        case at(version: String)
        /// A step from `source` to `destination` is in progress: the store reads as `source`, and opening it
        /// with the plan resumes the step from its last committed batch.
        case migrating(source: String, destination: String)
        /// The step's switch committed: the store is at `version`, and the custom stage's `didMigrate` runs
        /// again at the next open with the plan.
        case switched(version: String)
        /// The store's state could not be read after the failure (the reason is given).
        case unknown(reason: String)

        public var description: String {
            switch self {
            case .at(let v):
                "The store is at \(v), with no migration in progress"
            case .migrating(let s, let d):
                "The store still reads as \(s) and keeps the committed batches of the step \(s) → \(d); opening it again with the plan resumes the step from the last committed batch"
            case .switched(let v):
                "The store is at \(v) (the step's switch committed); its didMigrate script runs again at the next open with the plan"
            case .unknown(let reason):
                "The store's state could not be read afterwards (\(reason)); open it again to see where it is"
            }
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// The failing step's source version (for ``Code-swift.struct/noRoute``: the store's version).
    public let sourceVersion: String
    /// The failing step's destination version (for ``Code-swift.struct/noRoute``: the app's version).
    public let destinationVersion: String
    /// Why the step cannot be inferred or is not allowed by the data.
    public let diagnostics: [MigrationDiagnostic]
    /// The entity being migrated when the failure happened, if known.
    public let entity: String?
    /// The source object whose policy or script threw, if known.
    public let objectID: ObjectID?
    /// The task being run (`instances`, `rewrite`, `didMigrate`, …), if known.
    public let phase: String?
    /// What a custom stage threw (kept as thrown), or the ``StoreError`` that interrupted the step.
    public let underlying: (any Error & Sendable)?
    /// Where the failure left the store (read from the store after the failure); nil for an error that
    /// involved no store (``InferredMapping/infer(from:to:through:scriptedEntities:policyEntities:)`` alone).
    public internal(set) var storeState: StoreState?

    init(_ code: Code, source: String, destination: String, diagnostics: [MigrationDiagnostic] = [],
         entity: String? = nil, object: ObjectID? = nil, phase: String? = nil,
         underlying: (any Error & Sendable)? = nil, storeState: StoreState?) {
        self.code = code
        self.sourceVersion = source
        self.destinationVersion = destination
        self.diagnostics = diagnostics
        self.entity = entity
        self.objectID = object
        self.phase = phase
        self.underlying = underlying
        self.storeState = storeState
    }

    /// The ``StoreError`` underneath an ``Code-swift.struct/interrupted`` migration.
    public var storeError: StoreError? { underlying as? StoreError }

    public var description: String {
        let step = "\(sourceVersion) → \(destinationVersion)"
        let what: String
        switch code {
        case .cannotInfer:
            what = "The migration \(step) cannot be inferred; nothing was written:\n" + listed(diagnostics)
                + "\nAdd a custom stage for \(step) to the plan (MigrationStage.custom), or change the model so that the step can be inferred."
        case .dataCheckFailed:
            what = "The migration \(step) is not possible with the stored data; the step was rolled back:\n" + listed(diagnostics)
                + "\nFix the data (or the model) and open the store again."
        case .stageFailed:
            let at = [entity, objectID?.description].compactMap { $0 }.joined(separator: " ")
            let thrown = underlying.map { "\($0)" } ?? "an error"
            what = "The custom stage \(step) failed\(phase.map { " in \($0)" } ?? "")\(at.isEmpty ? "" : " at \(at)"): \(thrown)."
        case .interrupted:
            let cause = underlying.map { "\($0)" } ?? "a storage error"
            what = "The migration \(step) stopped during \(phase ?? "a batch")\(entity.map { " of \($0)" } ?? ""): \(cause)"
        case .noRoute:
            what = "The migration plan has no route from \(sourceVersion) to \(destinationVersion); nothing was written. Add the store's version to the plan, or a route from it."
        case .stopped:
            what = "The migration \(step) was asked to stop and stopped after its last committed batch."
        default:
            what = "The migration \(step) failed (\(code))."
        }
        guard let storeState else { return what }
        return what + "\n" + storeState.description + "."
    }

    private func listed(_ diagnostics: [MigrationDiagnostic]) -> String {
        diagnostics.map { "  - \($0)" }.joined(separator: "\n")
    }
}

// The engine makes errors with these; ``MigrationDriver`` fills in ``MigrationError/storeState`` from the
// store before any error reaches the caller.
extension MigrationError {
    static let stateNotRead: StoreState? = nil

    static func cannotInfer(source: String, destination: String, diagnostics: [MigrationDiagnostic]) -> MigrationError {
        MigrationError(.cannotInfer, source: source, destination: destination, diagnostics: diagnostics, storeState: stateNotRead)
    }

    static func dataCheckFailed(source: String, destination: String, diagnostics: [MigrationDiagnostic]) -> MigrationError {
        MigrationError(.dataCheckFailed, source: source, destination: destination, diagnostics: diagnostics, storeState: stateNotRead)
    }

    static func stageFailed(source: String, destination: String, phase: String?, entity: String?, object: ObjectID?,
                            underlying: any Error) -> MigrationError {
        MigrationError(.stageFailed, source: source, destination: destination, entity: entity, object: object, phase: phase,
                       underlying: underlying, storeState: stateNotRead)
    }

    static func interrupted(source: String, destination: String, phase: String, entity: String?, underlying: StoreError) -> MigrationError {
        MigrationError(.interrupted, source: source, destination: destination, entity: entity, phase: phase,
                       underlying: underlying, storeState: stateNotRead)
    }

    static func noRoute(from: String, to: String) -> MigrationError {
        MigrationError(.noRoute, source: from, destination: to, storeState: stateNotRead)
    }

    static func stopped(source: String, destination: String) -> MigrationError {
        MigrationError(.stopped, source: source, destination: destination, storeState: stateNotRead)
    }
}
