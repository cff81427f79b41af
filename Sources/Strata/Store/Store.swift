import Foundation
import Synchronization

/// A store of objects on disk, which knows the model that wrote it.
///
/// Open a store with the app's current schema. When the store was written by an older model, pass a
/// ``MigrationPlan`` and the store migrates itself in place before `open` returns; without a plan, `open`
/// throws ``StoreError/migrationRequired(from:to:)`` and writes nothing.
///
/// ```swift
/// let store = try Store.open(at: url, schema: Posts.v4, plan: Posts.plan)
/// try store.write { context in
///     try context.insert("Post", ["postID": .uuid(UUID()), "hexColor": "#FF0000", "date": .date(.now)])
/// }
/// let count = try store.read { try $0.count("Post") }
/// ```
///
/// `Store` is `Sendable`: share one handle between threads and tasks. Reads run concurrently with each other
/// and with the (single) writer. Opening the same files again in the process returns a handle on the same
/// LMDB environment, as LMDB requires.
///
/// ## Topics
/// ### Opening
/// - ``open(at:schema:configuration:)``
/// - ``open(at:schema:plan:configuration:)``
/// - ``openRecorded(at:configuration:)``
/// - ``temporary(schema:)``
/// ### Transactions
/// - ``read(_:)``
/// - ``write(author:_:)``
/// ### Change history
/// - ``fetchHistory(after:limit:)``
/// - ``history(after:)``
/// - ``currentHistoryToken()``
/// - ``deleteHistory(before:)``
/// - ``pruneHistory()``
/// - ``historyInfo()``
/// ### Maintenance
/// - ``backup(to:compact:)``
/// - ``info()``
/// - ``verify()``
/// - ``close()``
/// ### App lifecycle
/// - ``suspend()``
/// - ``resume()``
/// - ``isSuspended``
public final class Store: Sendable {
    /// The store's directory.
    public let url: URL
    let environment: Environment
    let model: BoundModel
    private let closed = Atomic<Bool>(false)
    private let removesDirectoryOnClose: Bool
    /// Opened with ``StoreConfiguration/readOnly``: refuses writes even when it shares its environment with
    /// a writable handle of the same process.
    let readOnly: Bool
    /// The background maintenance this handle runs (see ``StoreConfiguration/backgroundMaintenance``).
    private let maintenance: MaintenanceWorker?
    /// The author of this handle's writes in the change history, unless a write names one
    /// (``StoreConfiguration/historyAuthor``).
    let historyAuthor: String?
    /// Whether this handle prunes the change history in the background after commits
    /// (``StoreConfiguration/backgroundMaintenance``).
    private let prunesHistory: Bool

    /// `historyOverItsLimits`: ``HistoryPruning/mayBeOverLimits(_:in:)`` as the open read it (nil: read it here).
    init(url: URL, environment: Environment, model: BoundModel, removesDirectoryOnClose: Bool = false, readOnly: Bool = false,
         backgroundMaintenance: Bool = false, historyAuthor: String? = nil, historyOverItsLimits: Bool? = nil) {
        self.url = url
        self.environment = environment
        self.model = model
        self.removesDirectoryOnClose = removesDirectoryOnClose
        self.readOnly = readOnly
        self.historyAuthor = historyAuthor
        self.prunesHistory = backgroundMaintenance && !readOnly
        self.maintenance = backgroundMaintenance && !readOnly && model.needsMaintenance
            ? MaintenanceWorker(model: model, environment: environment) : nil
        if prunesHistory && (historyOverItsLimits ?? opened(withHistoryOverItsLimits: environment)) {
            environment.historyPruner.schedule(environment: environment, meta: model.meta)
        }
    }

    /// A handle on what ``StoreOpener`` opened, as `configuration` asks.
    convenience init(url: URL, opened: StoreOpener.Opened, configuration: StoreConfiguration, removesDirectoryOnClose: Bool = false) {
        self.init(url: url, environment: opened.environment, model: opened.model, removesDirectoryOnClose: removesDirectoryOnClose,
                  readOnly: configuration.readOnly, backgroundMaintenance: configuration.backgroundMaintenance,
                  historyAuthor: configuration.historyAuthor, historyOverItsLimits: opened.historyOverItsLimits)
    }

    /// Whether the store keeps a history that may have outgrown its retention while no handle pruned it.
    private func opened(withHistoryOverItsLimits environment: Environment) -> Bool {
        (try? environment.read { try HistoryPruning.mayBeOverLimits(model.meta, in: $0) }) ?? false
    }

    deinit { close() }

    /// The model this handle reads and writes with. For an older model opening a store a newer model wrote
    /// (see ``downgradedFrom``), the older model with the newer attributes it keeps after its own.
    public var schema: Schema { model.schema }

    /// The store's model version when an older model opened it as it is (every change since the older model
    /// is additive, see <doc:Migrations>); nil when the store is at the app's model. Such a handle reads
    /// objects as the older model declares them, gives the objects it inserts the newer attributes'
    /// defaults, keeps their values in the objects it updates, and leaves the store's maintenance to the
    /// newer app.
    public var downgradedFrom: String? { model.downgradedFrom }

    // MARK: Opening

    /// Opens (or creates) the store at `url` for `schema`.
    ///
    /// Fails with ``StoreError/migrationRequired(from:to:)`` when the store was written by a model with other
    /// version hashes, and with ``StoreError/storeNewerThanModel(store:app:)`` when by a newer one; in both
    /// cases the store's files are not written. Differences that do not change how objects are stored
    /// (indexes, unique constraints, default values) are applied at open.
    public static func open(at url: URL, schema: Schema, configuration: StoreConfiguration = StoreConfiguration()) throws -> Store {
        Store(url: url, opened: try StoreOpener(url: url, configuration: configuration).open(schema: schema, plan: nil), configuration: configuration)
    }

    /// Opens (or creates) the store at `url` for `schema`, migrating it along `plan` when it was written by
    /// an earlier model version (unless ``MigrationOptions/migratesAtOpen`` is false).
    public static func open(at url: URL, schema: Schema, plan: MigrationPlan,
                            configuration: StoreConfiguration = StoreConfiguration()) throws -> Store {
        Store(url: url, opened: try StoreOpener(url: url, configuration: configuration).open(schema: schema, plan: plan), configuration: configuration)
    }

    /// Opens an existing store with the model recorded in it, for tools that inspect stores they did not
    /// write (the dynamic API only). Never creates a store.
    public static func openRecorded(at url: URL, configuration: StoreConfiguration = StoreConfiguration()) throws -> Store {
        var configuration = configuration
        configuration.createIfMissing = false
        let opened = try StoreOpener(url: url, configuration: configuration).openRecorded()
        return Store(url: url, environment: opened.environment, model: opened.model, readOnly: configuration.readOnly,
                     historyAuthor: configuration.historyAuthor)
    }

    /// A new store in a fresh temporary directory, removed when the store is closed: the equivalent of
    /// Core Data's in-memory store, for tests and previews.
    public static func temporary(schema: Schema, configuration: StoreConfiguration = StoreConfiguration()) throws -> Store {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-\(UUID().uuidString)")
        var configuration = configuration
        configuration.createIfMissing = true
        configuration.initialMapSize = min(configuration.initialMapSize, 64 << 20)
        return Store(url: url, opened: try StoreOpener(url: url, configuration: configuration).open(schema: schema, plan: nil),
                     configuration: configuration, removesDirectoryOnClose: true)
    }

    /// Closes the handle. Other handles on the same files stay open; the files close with the last one.
    /// Using the handle afterwards throws ``StoreError/closed``.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        maintenance?.stop()
        environment.observations.endObservations(of: ObjectIdentifier(self))
        environment.release()
        if removesDirectoryOnClose, environment.isClosed {
            try? FileManager.default.removeItem(at: url)
        }
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { closed.load(ordering: .acquiring) }

    // MARK: Transactions

    /// Runs `body` with a read context on a consistent snapshot of the store.
    ///
    /// Read transactions run concurrently with each other and with writes; `body` sees none of the writes
    /// that commit while it runs.
    /// - Throws: what `body` throws; ``StoreError/modelChanged(path:)`` when the store was migrated by another
    ///   handle or process since this one opened.
    public func read<T>(_ body: (ReadContext) throws -> T) throws -> T {
        if isClosed { throw StoreError.closed }
        return try environment.read { txn in
            try checkGeneration(txn)
            let context = ReadContext(txn: txn, model: model)
            return try body(context)
        }
    }

    /// Runs `body` with a write context; everything it does commits together when it returns, or nothing
    /// when it throws.
    ///
    /// Writes are serialized. `body` runs on the calling thread and may run more than once: when the store
    /// must grow its map, the transaction is rolled back, the map grown, and `body` run again, so `body`
    /// should have no effects outside the context.
    ///
    /// When the store keeps a change history (<doc:ChangeHistory>), the transaction's changes are recorded in it,
    /// in the same transaction, under `author`.
    /// - Parameters:
    ///   - author: the name of the writer in the change history (`"app"`, `"widget"`, `"sync"`), so that a
    ///     consumer can tell its own writes from others'; nil: the handle's ``StoreConfiguration/historyAuthor``.
    ///   - body: the work.
    /// - Throws: what `body` throws; ``StoreError/migrationInProgress(ownerPID:)`` while another process
    ///   migrates the store; ``StoreError/nestedWriteTransaction`` inside another write on this thread;
    ///   ``StoreError/readOnly`` when the handle was opened read-only.
    public func write<T>(author: String? = nil, _ body: (WriteContext) throws -> T) throws -> T {
        if isClosed { throw StoreError.closed }
        if readOnly { throw StoreError.readOnly }
        var commit: CommitChanges?
        var prunes = false
        let result = try environment.write { txn in
            let state = try checkGeneration(txn)
            if state.migrating { throw migrationInProgress(txn) }
            let history = try HistoryRecording.activeState(model.meta, in: txn)
            let context = WriteContext(txn: txn, model: model, recordsHistory: history != nil)
            let result = try body(context)
            try context.finish()
            commit = nil
            prunes = false
            if !context.changes.isEmpty {
                let changes = HistoryRecording.changes(of: context, model: model, txn: txn)
                if !changes.entities.isEmpty {
                    if let history {
                        prunes = try HistoryRecording.record(changes, model: model, author: author ?? historyAuthor, state: history, in: txn)
                    }
                    let observed = changes.forObservers(downgraded: model.downgradedFrom != nil)
                    try ChangeLog.append(observed, in: txn)
                    commit = observed
                }
            }
            return result
        }
        if let commit, environment.observations.isObserved { environment.observations.committed(commit) }
        if prunes && prunesHistory { environment.historyPruner.schedule(environment: environment, meta: model.meta) }
        return result
    }

    /// Runs `body` in a read transaction on a background thread.
    public func read<T: Sendable>(_ body: @escaping @Sendable (ReadContext) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Store.readQueue.async {
                continuation.resume(with: Result { try self.read(body) })
            }
        }
    }

    /// Runs `body` in the write transaction on the store's writer thread. No `await` can happen inside a
    /// write transaction: LMDB requires it to begin and end on one thread.
    /// - Parameter author: the name of the writer in the change history (see ``write(author:_:)``).
    public func write<T: Sendable>(author: String? = nil, _ body: @escaping @Sendable (WriteContext) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Store.writeQueue.async {
                continuation.resume(with: Result { try self.write(author: author, body) })
            }
        }
    }

    private static let readQueue = DispatchQueue(label: "strata.read", attributes: .concurrent)
    private static let writeQueue = DispatchQueue(label: "strata.write")

    @discardableResult
    func checkGeneration(_ txn: Transaction) throws -> StateRecord {
        guard let state = try model.meta.read(.state, in: txn, StateRecord.init(decoding:)) else {
            throw StoreError.corrupted(path: url.path, reason: .metadata("the state record is missing"))
        }
        if state.generation != model.generation { throw modelChanged(state, txn) }
        return state
    }

    /// The error for a store migrated since this handle opened it, naming the store's model now (or the step
    /// in progress) and the handle's.
    private func modelChanged(_ state: StateRecord, _ txn: Transaction) -> StoreError {
        guard let identity = try? model.meta.read(.identity, in: txn, IdentityRecord.init(decoding:)) else {
            return StoreError.modelChanged(path: url.path)
        }
        return StoreError.modelChanged(path: url.path, store: identity.versionIdentifier, handle: model.schema.versionIdentifier,
                                       migrating: state.migrating)
    }

    /// The error for a write while another process migrates the store: the step it runs, as its journal says.
    func migrationInProgress(_ txn: Transaction) -> StoreError {
        let app = model.schema.versionIdentifier
        guard let journal = try? model.meta.read(.journal, in: txn, MigrationJournal.decode) else {
            return StoreError.migrationInProgress(ownerPID: nil, source: app, destination: nil, app: app)
        }
        return StoreError.migrationInProgress(ownerPID: journal.ownerPID, source: journal.sourceVersion,
                                              destination: journal.destinationVersion, app: app)
    }
}
