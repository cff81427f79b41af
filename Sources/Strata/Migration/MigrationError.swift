/// An error from a migration.
///
/// Two outcomes are possible, and each case says which:
/// - **rolled back** — the store is at the step's source version, as before the step (a diagnostic found
///   before anything was written, a check of existing data that failed, a policy or script that threw);
///   only what a custom stage's `willMigrate` committed on the source version stays;
/// - **resumable** — an environmental failure (disk full, I/O error, the map's ceiling) stopped the step
///   between batches; the store still reads as the source version, and the next open resumes the step
///   from its last committed batch.
public enum MigrationError: Error, Sendable, CustomStringConvertible {
    /// The step cannot be inferred; nothing was written.
    case cannotInfer(source: String, destination: String, diagnostics: [MigrationDiagnostic])
    /// Existing data does not allow the step (duplicates for a new unique constraint, too many links for a
    /// to-one); the step was rolled back and the store is intact at `source`.
    case dataCheckFailed(source: String, destination: String, diagnostics: [MigrationDiagnostic])
    /// A custom stage's policy or script threw at an object; the stage was rolled back and the store is
    /// intact at `source`.
    case stageFailed(source: String, destination: String, entity: String?, object: ObjectID?, underlying: String)
    /// The store failed underneath the migration; the step is resumable from its last committed batch.
    case interrupted(source: String, destination: String, phase: String, entity: String?, underlying: StoreError)
    /// The plan has no route from the store's version to the app's.
    case noRoute(from: String, to: String)
    /// ``MigrationOptions/shouldStop`` asked the migration to stop; it stopped between two batches and
    /// resumes from there when run again.
    case stopped(source: String, destination: String)

    public var description: String {
        switch self {
        case .cannotInfer(let s, let d, let diagnostics):
            return "The migration \(s) → \(d) cannot be inferred; nothing was changed:\n" + diagnostics.map { "  - \($0)" }.joined(separator: "\n")
        case .dataCheckFailed(let s, let d, let diagnostics):
            return "The migration \(s) → \(d) is not possible with the stored data; the store is unchanged at \(s):\n" + diagnostics.map { "  - \($0)" }.joined(separator: "\n")
        case .stageFailed(let s, let d, let entity, let object, let underlying):
            let at = [entity, object?.description].compactMap { $0 }.joined(separator: " ")
            return "The custom stage \(s) → \(d) failed\(at.isEmpty ? "" : " at \(at)"): \(underlying). The store is unchanged at \(s)."
        case .interrupted(let s, let d, let phase, let entity, let underlying):
            return "The migration \(s) → \(d) stopped during \(phase)\(entity.map { " of \($0)" } ?? ""): \(underlying) Open the store again to resume from the last committed batch."
        case .noRoute(let from, let to):
            return "The migration plan has no route from \(from) to \(to)."
        case .stopped(let s, let d):
            return "The migration \(s) → \(d) stopped after its last committed batch; run it again (or open the store) to resume."
        }
    }
}
