import Foundation
import Logging

/// How a migration runs.
///
/// ```swift
/// var options = MigrationOptions()
/// options.batchByteLimit = 8 << 20
/// options.progress = { p in print(p) }
/// let store = try Store.open(at: url, schema: Posts.v4, plan: Posts.plan,
///                            configuration: StoreConfiguration(migration: options))
/// ```
public struct MigrationOptions: Sendable {
    /// Whether ``Store/open(at:schema:plan:configuration:)`` migrates a store written by an older model.
    /// When false it throws ``StoreError/migrationRequired(from:to:)`` instead, so the app can call
    /// ``Store/migrate(at:schema:plan:configuration:)`` on a background task with a progress UI.
    public var migratesAtOpen: Bool = true
    /// The most records one batch (one write transaction) reads. No limit by default: a batch ends when it
    /// has written ``batchByteLimit`` bytes or run for ``batchDuration`` seconds, whichever comes first, so
    /// that small records are not paid for with thousands of durable commits and large ones stay bounded.
    public var batchSize: Int = .max
    /// The most bytes one batch writes (records, links, index and bookkeeping entries). It bounds the memory
    /// a batch holds (LMDB keeps a write transaction's dirty pages in memory until it commits) and what a
    /// crash can make the migration redo.
    public var batchByteLimit: Int = 32 << 20
    /// The longest one batch runs, in seconds: progress is reported, ``shouldStop`` is asked, and the work
    /// is made durable at least this often.
    public var batchDuration: Double = 1.0
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
    /// The most physical layouts an entity keeps. Steps that only widen, rename, add or remove attributes
    /// change metadata: old records keep their layout and are read through projections. A step that would
    /// give an entity more layouts than this rewrites its records into one layout instead.
    public var maximumLayoutsPerEntity: Int = StepPlanner.defaultMaximumLayouts
    /// Whether a new index (not unique) of an entity whose records a step keeps is built after the step, by the
    /// store's maintenance — the step then changes metadata only, and queries scan until the index is complete
    /// — or by the step itself, before the store opens. Default true. (Unique indexes are always built, and
    /// checked, by the step.)
    public var buildsIndexesInBackground: Bool = true
    /// Whether a custom stage's entity policies and typed mappings have their source objects read and decoded on a
    /// second thread while the migration runs them (in the instance and the relationship pass), writes and commits (on devices with more than one core; a
    /// declared mapping copies records without decoding them). Default true. Only where the decoding runs
    /// changes — the closures still run on the migrating thread, for every object in order, and what is written,
    /// committed and thrown is as without it — so turn it off only to keep a migration on one thread.
    public var decodesAhead: Bool = true
    /// What opening does while another process migrates the store. A handle with the model the store is at
    /// (the step's source) opens at once and reads that version (its writes throw
    /// ``StoreError/Code-swift.struct/migrationInProgress`` until the migration ends, and ``StoreError/Code-swift.struct/modelChanged``
    /// after its switch). Any other model waits for the migration to end, reporting its progress through
    /// ``progress``, when this is true (the default), and throws ``StoreError/Code-swift.struct/migrationInProgress``
    /// at once when false.
    public var waitsForOtherProcesses: Bool = true
    /// The longest opening waits for another process's migration before throwing
    /// ``StoreError/Code-swift.struct/migrationInProgress`` (nil: as long as it takes).
    public var otherProcessTimeout: Double? = nil

    public init() {}

    /// Makes every step rewrite the records of the entities it changes into one layout, and build its new
    /// indexes itself, instead of changing metadata only: the store has one layout per entity when the
    /// migration ends, its records packed into new pages, and no background work follows. Slower to open than a
    /// metadata-only step, but faster than the background sweep that would follow one, and smaller on disk: a
    /// sweep of records that grow leaves them on about twice as many pages (<doc:Migrations>).
    public mutating func rewritesEveryRecord() {
        maximumLayoutsPerEntity = 1
        buildsIndexesInBackground = false
    }
}
