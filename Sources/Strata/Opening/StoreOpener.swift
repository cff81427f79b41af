import Foundation

/// Opens a store: checks its files, creates it when missing, reads its metadata, decides whether it is
/// ready, must be migrated, or cannot be opened, and binds the app's model to it.
struct StoreOpener {
    let configuration: StoreConfiguration
    /// The store's path, standardized once (``Foundation/URL/storePath``).
    let path: String

    init(url: URL, configuration: StoreConfiguration) {
        self.configuration = configuration
        self.path = url.storePath
    }

    /// An open store's environment (one more use of it, which the new handle owns) and the model bound to it.
    struct Opened {
        let environment: Environment
        let model: BoundModel
        /// ``HistoryPruning/mayBeOverLimits(_:in:)`` when the open read it with the model (nil: not read).
        var historyOverItsLimits: Bool? = nil
    }

    func open(schema: Schema, plan: MigrationPlan?) throws -> Opened {
        // The plan's schemas only: copying the optional plan itself costs a process's first open a type look-up.
        let databases = if let schemas = plan?.schemas {
            configuration.databases(for: [schema] + schemas)
        } else {
            configuration.databases(for: schema)
        }
        let environment = try acquireEnvironment(databases: databases, checks: false) {
            try StoreCreation.create(at: path, schema: schema, configuration: configuration)
            return true
        }
        do {
            let (model, historyOverItsLimits) = try bind(schema, plan: plan, environment: environment.environment,
                                                         isNewEnvironment: environment.isNew)
            if !configuration.readOnly {
                try HistorySwitch.apply(configuration.history, environment: environment.environment, meta: model.meta)
            }
            return Opened(environment: environment.environment, model: model, historyOverItsLimits: historyOverItsLimits)
        } catch {
            environment.environment.release()
            throw error
        }
    }

    func openRecorded() throws -> Opened {
        let environment = try acquireEnvironment(databases: configuration.maximumDatabases * 2) { false }
        do {
            let model = try environment.environment.read { txn -> BoundModel in
                let header = try StoreHeader.read(in: txn, path: path)
                let schema = try header.identifiedRecordedSchema(in: txn)
                return try header.bind(schema, in: txn)
            }
            if !configuration.readOnly {
                try HistorySwitch.apply(configuration.history, environment: environment.environment, meta: model.meta)
            }
            return Opened(environment: environment.environment, model: model)
        } catch {
            environment.environment.release()
            throw error
        }
    }

    /// The open's checks and binding, in one read transaction in the common case — an unencrypted store opened
    /// without a key, its change log from this file, at the app's model: the key check (``StoreUnlocking``),
    /// the change log's check (``ChangeLog/hasEntriesFromAnotherFile(in:)``) and the binding read one snapshot.
    /// Otherwise each runs as ``acquireEnvironment(databases:checks:create:)`` runs it, in its own
    /// transactions (an encrypted store's transactions need its keyring installed first), then the binding.
    ///
    /// Returns the model, and when the store handle prunes the history in the background and the history setting
    /// changes nothing, whether the history may be over its limits (``HistoryPruning/mayBeOverLimits(_:in:)``, read in
    /// the same transaction).
    ///
    /// The common case makes no ``StoreOpening`` (whose request copies the schema and the plan): only the others do.
    private func bind(_ schema: Schema, plan: MigrationPlan?, environment: Environment,
                      isNewEnvironment: Bool) throws -> (BoundModel, Bool?) {
        var opening: StoreOpening {
            StoreOpening(environment: environment, schema: schema, plan: plan, purpose: .open, configuration: configuration)
        }
        enum FirstRead {
            case bound(BoundModel, historyOverItsLimits: Bool?)
            /// The key check passed and the change log needs nothing; the store is not at the app's model.
            case notCurrent
            /// An encryption record, or a key: the key check runs on its own.
            case checkKey
            /// The change log holds another file's entries (discarded in a write).
            case discardChangeLog
        }
        let checksChangeLog = isNewEnvironment && !configuration.readOnly
        let first = configuration.encryption != nil ? .checkKey : try environment.read { txn -> FirstRead in
            guard try StoreUnlocking.encryptionRecord(in: txn, path: environment.path) == nil else { return .checkKey }
            if checksChangeLog, try ChangeLog.hasEntriesFromAnotherFile(in: txn) { return .discardChangeLog }
            guard let model = try StoreOpening.bindIfCurrent(schema, in: txn, path: environment.path,
                                                             collects: isNewEnvironment && !configuration.readOnly) else {
                return .notCurrent
            }
            // What the store handle would read next, when nothing written in between can change it.
            guard configuration.backgroundMaintenance, !configuration.readOnly,
                  case .asRecorded = configuration.history else { return .bound(model, historyOverItsLimits: nil) }
            return .bound(model, historyOverItsLimits: (try? HistoryPruning.mayBeOverLimits(model.meta, in: txn)) ?? false)
        }
        switch first {
        case .bound(let model, let historyOverItsLimits):
            return (model, historyOverItsLimits)
        case .notCurrent:
            return (try opening.bringUpToDateAndBind(isNewEnvironment: isNewEnvironment), nil)
        case .checkKey, .discardChangeLog:
            try check(environment, isNew: isNewEnvironment)
            return (try opening.bind(isNewEnvironment: isNewEnvironment), nil)
        }
    }

    /// What opening checks before it reads anything else: the key (``StoreUnlocking``), and in a process that
    /// has just opened the store's files, a change log left by another file.
    private func check(_ environment: Environment, isNew: Bool) throws {
        try StoreUnlocking.unlock(environment, with: configuration.encryption)
        if isNew && !configuration.readOnly {
            // A compacted copy put in place of the store keeps a change log of transaction IDs it restarted.
            try ChangeLog.discardEntriesFromAnotherFile(environment: environment)
        }
    }

    /// The store's environment, created first by `create` when missing and allowed (`create` returns false when it
    /// creates nothing: the store is then not found); with `checks`, the key and the change log checked
    /// (``check(_:isNew:)``) — without, the caller checks them.
    ///
    /// A closure rather than an optional schema: wrapping the app's schema in an optional copies it, which costs a
    /// process's first open a type look-up for each of its collections.
    private func acquireEnvironment(databases: Int, checks: Bool = true,
                                    create: () throws -> Bool) throws -> (environment: Environment, isNew: Bool) {
        switch try StoreFiles.inspect(path) {
        case .missing, .emptyDirectory:
            guard configuration.createIfMissing, !configuration.readOnly, try create() else {
                throw StoreError.notFound(path: path)
            }
            _ = try StoreFiles.inspect(path)
        case .existing:
            break
        }
        let acquired = try Environment.acquire(path: path, configuration: configuration.environmentConfiguration(databases: databases))
        guard checks else { return acquired }
        do {
            try check(acquired.environment, isNew: acquired.isNew)
        } catch {
            acquired.environment.release()
            throw error
        }
        return acquired
    }

    /// Runs `body` with the environment of an existing store (never creating one), sized for `schemas`:
    /// for operations on a store that is not opened for use (migrate, explain).
    static func withExistingEnvironment<T>(at url: URL, configuration: StoreConfiguration, schemas: [Schema],
                                           _ body: (Environment, StoreConfiguration) throws -> T) throws -> T {
        var configuration = configuration
        configuration.createIfMissing = false
        let path = url.storePath
        guard case .existing = try StoreFiles.inspect(path) else { throw StoreError.notFound(path: path) }
        let (environment, _) = try Environment.acquire(
            path: path, configuration: configuration.environmentConfiguration(databases: configuration.databases(for: schemas)))
        defer { environment.release() }
        try StoreUnlocking.unlock(environment, with: configuration.encryption)
        return try body(environment, configuration)
    }
}
