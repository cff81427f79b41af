import Foundation
import Logging

/// How a migration runs.
///
/// ```swift
/// var options = MigrationOptions()
/// options.batchSize = 5_000
/// options.progress = { p in print(p) }
/// let store = try Store.open(at: url, schema: Posts.v4, plan: Posts.plan,
///                            configuration: StoreConfiguration(migration: options))
/// ```
public struct MigrationOptions: Sendable {
    /// Whether ``Store/open(at:schema:plan:configuration:)`` migrates a store written by an older model.
    /// When false it throws ``StoreError/migrationRequired(from:to:)`` instead, so the app can call
    /// ``Store/migrate(at:schema:plan:configuration:)`` on a background task with a progress UI.
    public var migratesAtOpen: Bool = true
    /// The most records one batch (one write transaction) reads. The default keeps a batch's commit well
    /// under 100 ms on a phone-class disk.
    public var batchSize: Int = 10_000
    /// The most bytes one batch writes, so that batches of large records stay bounded too.
    public var batchByteLimit: Int = 16 << 20
    /// When set, a compacted copy of the store is written into this directory (which must not exist)
    /// before a migration changes anything.
    public var backupDirectory: URL? = nil
    /// Called after every batch, step and phase.
    public var progress: (@Sendable (MigrationProgress) -> Void)? = nil
    /// Where debug-level lines about each step, entity and batch go (the analogue of Core Data's
    /// `-com.apple.CoreData.MigrationDebug`).
    public var logger: Logger = Logger(label: "strata.migration")
    /// Asked before every batch; when it returns true the migration stops after the batch it just committed
    /// and throws ``MigrationError/stopped(source:destination:)``. Running the migration again resumes it.
    public var shouldStop: (@Sendable () -> Bool)? = nil

    public init() {}
}
