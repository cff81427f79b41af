import Foundation

/// Brings a store to the app's model: reads what the store records, asks ``OpenDecision`` what to do, does it
/// (waits for another process's migration, finishes or rolls back an interrupted step, runs the migration's
/// steps), reads the store again and decides again — until the store is at the app's model, can be read while
/// another process migrates it, or can be opened as it is by an older model. Then (for an open) it collects the
/// databases earlier versions left and binds the model.
struct StoreOpening {
    let environment: Environment
    let request: OpenRequest
    let configuration: StoreConfiguration
    var path: String { environment.path }
    var options: MigrationOptions { configuration.migration }

    init(environment: Environment, schema: Schema, plan: MigrationPlan?, purpose: OpenRequest.Purpose,
         configuration: StoreConfiguration) {
        self.environment = environment
        self.configuration = configuration
        self.request = OpenRequest(schema: schema, plan: plan, purpose: purpose, readOnly: configuration.readOnly,
                                   migratesAtOpen: configuration.migration.migratesAtOpen,
                                   opensNewerAdditiveStores: configuration.opensNewerAdditiveStores)
    }

    var driver: MigrationDriver {
        MigrationDriver(environment: environment, schema: request.schema, plan: request.plan, options: configuration.migration)
    }

    // MARK: Opening

    /// Brings the store to the app's model and binds the model to it. `isNewEnvironment`: this process has just
    /// opened the store's files (no read transaction of it can use a retired database: they can be deleted).
    func bind(isNewEnvironment: Bool) throws -> BoundModel {
        if let model = try environment.read({ try bindIfCurrent(in: $0, isNewEnvironment: isNewEnvironment) }) {
            return model
        }
        return try bringUpToDateAndBind(isNewEnvironment: isNewEnvironment)
    }

    /// The common case, in one read transaction: the store is at the app's model, nothing to migrate or collect —
    /// the model bound in `txn`; nil when the store needs more (``bringUpToDateAndBind(isNewEnvironment:)``).
    func bindIfCurrent(in txn: Transaction, isNewEnvironment: Bool) throws -> BoundModel? {
        try Self.bindIfCurrent(request.schema, in: txn, path: path, collects: isNewEnvironment && !configuration.readOnly)
    }

    /// ``bindIfCurrent(in:isNewEnvironment:)`` for `schema`, of the store at `path`, without an opening (the first
    /// read of ``StoreOpener``). `collects`: retired databases would be collected now (a store holding some needs
    /// more).
    static func bindIfCurrent(_ schema: Schema, in txn: Transaction, path: String, collects: Bool) throws -> BoundModel? {
        var header = try StoreHeader.read(in: txn, path: path, complete: false)
        guard header.identity.fingerprint == schema.fingerprint, !header.state.migrating,
              !(collects && !header.catalog.garbage.isEmpty) else { return nil }
        return try header.bindTakingCatalog(schema, in: txn)
    }

    /// Binds the model to a store that ``bindIfCurrent(in:isNewEnvironment:)`` found not ready: checks its
    /// metadata, migrates it, rolls back or resumes an interrupted step, collects retired databases as needed.
    func bringUpToDateAndBind(isNewEnvironment: Bool) throws -> BoundModel {
        let schema = request.schema
        let collects = isNewEnvironment && !configuration.readOnly
        // Damaged metadata is refused before anything below writes.
        try checkMetadata()
        // What was decided holds for the generation it was decided on. Another process can migrate the store
        // between the decision and the binding (a handle that reads during a migration meets its switch): the
        // binding reads the header in its own transaction and binds only at that generation — binding the app's
        // model to another model's catalog would report a healthy store as damaged — or decides again.
        for _ in 0..<Self.bindingRounds {
            let outcome = try bringUpToDate()
            if outcome.olderModel == nil, collects {
                let header = try driver.readHeader()
                if !header.catalog.garbage.isEmpty { try GarbageCollection.collect(environment: environment, header: header) }
            }
            try FaultInjection.point("open.beforeBind")
            if let model = try environment.read({ txn -> BoundModel? in
                let header = try StoreHeader.read(in: txn, path: path)
                guard header.state.generation == outcome.generation else { return nil }
                guard let downgrade = outcome.olderModel else { return try header.bind(schema, in: txn) }
                return try header.bind(olderModel: downgrade.schema, catalog: downgrade.catalog,
                                       declaredEntities: downgrade.declaredEntities, in: txn)
            }) {
                return model
            }
        }
        throw StoreError.modelChanged(path: path)
    }

    /// Decodes every metadata record the open goes on to read, in one read transaction, before anything is
    /// written: a damaged record is refused with the store's files as they were — not after an interrupted step
    /// was rolled back or resumed, a migration ran some batches, or retired databases were collected.
    /// - Throws: ``StoreError/Code-swift.struct/corrupted`` (or what ``StoreHeader/read(in:path:complete:)``
    ///   throws) for the first damaged record.
    func checkMetadata() throws {
        try environment.read { txn in
            let header = try StoreHeader.read(in: txn, path: path)
            _ = try header.meta.read(.journal, in: txn, MigrationJournal.decode)
            _ = try MaintenanceRecord.read(header.meta, in: txn)
            if let history = try HistoryState.read(header.meta, in: txn), history.isEnabled {
                // A migration's switch appends to the history: its last key must leave room for one more.
                let last = try HistoryLog.entries(in: txn).flatMap { try txn.cursor($0).last()?.key }
                _ = try HistoryLog.nextSequence(lastKey: last, state: history, path: path)
            }
            // The recorded model is the one the identity record describes (both are written together from one
            // model), and it binds to the catalog (every database it names exists), as any later bind needs.
            _ = try header.bind(try header.identifiedRecordedSchema(in: txn), in: txn)
        }
    }

    /// How many times opening decides again when another process migrates the store between a decision and the
    /// binding (each time is a whole migration step of that process: a handful never runs out in practice).
    static let bindingRounds = 16

    // MARK: Deciding and doing

    /// What ``bringUpToDate()`` did.
    struct Outcome {
        /// Steps run (an interrupted step resumed counts as one).
        var steps = 0
        /// Set when the app's older model opens the store as it is.
        var olderModel: Downgrade?
        /// The store's generation (``StateRecord``) the last decision was made on.
        var generation: UInt64 = 0
    }

    /// The store's header and migration journal, read in one transaction (a journal read apart from its header
    /// can belong to another state of the store: a step another process finished or began in between).
    func readHeaderAndJournal() throws -> (header: StoreHeader, journal: MigrationJournal?) {
        try environment.read { txn in
            let header = try StoreHeader.read(in: txn, path: path)
            return (header, try header.meta.read(.journal, in: txn, MigrationJournal.decode))
        }
    }

    /// The store's facts as ``OpenDecision`` reads them: `header` and `journal` read in one transaction.
    func facts(_ header: StoreHeader, journal: MigrationJournal?) -> StoreFacts {
        StoreFacts(identity: header.identity, history: header.history, migrating: header.state.migrating,
                   journal: journal, catalog: header.catalog,
                   recordedSchema: { try environment.read { try header.recordedSchema(in: $0) } })
    }

    /// Decides and acts until the store is at the app's model (or readable as it is).
    /// A ``MigrationError`` leaves here with the state the store is really in, read back from the store.
    @discardableResult
    func bringUpToDate() throws -> Outcome {
        do {
            return try decideAndAct()
        } catch var error as MigrationError {
            error.storeState = driver.storeState()
            throw error
        }
    }

    private func decideAndAct() throws -> Outcome {
        var outcome = Outcome()
        // What this open wrote to recover the store before deciding again, for an error that follows.
        var recovery: String? = nil
        var lock: MigrationLock? = nil
        defer { lock?.release() }
        // Each action changes what the store records; a handful of rounds always settles it.
        for _ in 0..<64 {
            let (header, journal) = try readHeaderAndJournal()
            if (header.hasJournal || header.state.migrating) && lock == nil && !configuration.readOnly {
                try FaultInjection.point("open.beforeMigrationLock")
                lock = try MigrationLock.acquire(storePath: path)
                // The step that was in progress when the header was read may have ended (switched, rolled back)
                // before the lock was free: only what the store records under the lock may be resumed, rolled
                // back or cleared — a stale journal rolled back would delete the databases it switched to.
                if lock != nil { continue }
            }
            var request = self.request
            request.holdsMigrationLock = lock != nil
            outcome.generation = header.state.generation
            switch OpenDecision.decide(facts(header, journal: journal), request) {
            case .current, .readDuringMigration:
                return outcome
            case .openAsOlder(let downgrade):
                outcome.olderModel = downgrade
                return outcome
            case .refuse(let error):
                if let recovery, let error = error as? StoreError { throw error.afterRecovery(recovery) }
                throw error
            case .waitForMigration(let otherwise):
                guard let taken = try lockWaitingForOtherMigration() else { throw otherwise }
                lock = taken
            case .clearMigratingFlag:
                try environment.write { txn in
                    // Cleared only as decided: still migrating at the same generation, still without a journal.
                    guard let state = try header.meta.read(.state, in: txn, StateRecord.init(decoding:)), state.migrating,
                          state.generation == header.state.generation, try header.meta.get(.journal, in: txn) == nil else { return }
                    try header.meta.put(.state, StateRecord(generation: header.state.generation, migrating: false).encoded(), in: txn)
                }
            case .rollBack(let journal):
                options.logger.debug("rolling back the interrupted migration \(journal.sourceVersion) → \(journal.destinationVersion)")
                try StepRunner.rollback(environment: environment, meta: header.meta, journal: journal, generation: header.state.generation)
                recovery = "rolled back the interrupted step \(journal.sourceVersion) → \(journal.destinationVersion) (the store is at model \(journal.sourceVersion) again)"
            case .resume(let journal, let destination):
                try driver.resume(journal, to: destination, header: header)
                outcome.steps += 1
            case .migrate(let targets):
                lock?.release()
                lock = nil
                if try migrate(along: targets, from: header) { outcome.steps += targets.count }
            }
        }
        throw StoreError.internalInconsistency("opening did not settle after 64 decisions")
    }

    /// Runs `targets` from the store at `header`. Returns false, having run nothing, when another process changed
    /// the store meanwhile (the caller decides again on what the store holds now).
    private func migrate(along targets: [Schema], from header: StoreHeader) throws -> Bool {
        // Every step must be inferable (or have its stage) before anything is written: a refused migration
        // leaves the store's files as they were, lock file included.
        var source = try environment.read { try header.recordedSchema(in: $0) }
        for target in targets {
            let stage = request.plan?.stage(from: source.versionIdentifier, to: target.versionIdentifier)
            let mapping = try driver.inferMapping(source: source, destination: target, stage: stage)
            try DeclaredMappingValidation.validate(stage, source: source, destination: target, mapping: mapping)
            source = target
        }
        // Another process may have taken the lock since the header was read: wait for it like any migration in
        // progress (or fail at once if the options say not to wait).
        guard let lock = try lockWaitingForOtherMigration() else {
            let (current, journal) = try readHeaderAndJournal()
            throw OpenDecision.inProgress(facts(current, journal: journal), request)
        }
        defer { lock.release() }
        // And it may have migrated the store (or begun to and died) between that read and this lock: what to do
        // is decided again on what the store holds now — never on a stale header.
        let current = try driver.readHeader()
        if current.state.generation != header.state.generation || current.state.migrating || current.hasJournal
            || current.identity.fingerprint != header.identity.fingerprint {
            return false
        }
        if let backup = options.backupDirectory {
            try StoreBackup.copy(environment: environment, to: backup.storePath, compact: true)
        }
        for (i, target) in targets.enumerated() {
            try driver.runStep(to: target, index: i, count: targets.count)
        }
        return true
    }

    /// Takes the migration lock; when another process holds it, waits for that process's migration to finish
    /// (the lock is released when it ends, or dies), reporting its progress as its journal records it.
    /// Returns the lock once taken, or nil when the options say not to wait or the wait timed out.
    private func lockWaitingForOtherMigration() throws -> MigrationLock? {
        if let lock = try MigrationLock.acquire(storePath: path) { return lock }
        // A migration of this process (another handle, perhaps on this very thread) is not waited for.
        guard options.waitsForOtherProcesses, try journalOwner() != CurrentProcess.id else { return nil }
        let started = MonotonicClock.nanoseconds()
        var lastReported: (Int, Int)? = nil
        while true {
            if let lock = try MigrationLock.acquire(storePath: path) { return lock }
            if let limit = options.otherProcessTimeout, Double(MonotonicClock.nanoseconds() - started) / 1e9 > limit {
                return nil
            }
            if let progress = options.progress, let journal = try environment.read({ txn in
                try StoreHeader.read(in: txn, path: path).meta.read(.journal, in: txn, MigrationJournal.decode)
            }), let task = journal.currentTask, lastReported.map({ $0 != (journal.taskIndex, journal.completed) }) ?? true {
                lastReported = (journal.taskIndex, journal.completed)
                progress(MigrationProgress(stepIndex: 0, stepCount: 1, sourceVersion: journal.sourceVersion,
                                           destinationVersion: journal.destinationVersion, phase: task.phase, entity: task.entity,
                                           completed: journal.completed, total: 0))
            }
            CurrentProcess.pause(microseconds: 20_000)
        }
    }

    private func journalOwner() throws -> Int32? {
        try environment.read { txn -> Int32? in
            let header = try StoreHeader.read(in: txn, path: path)
            return try header.meta.read(.journal, in: txn, MigrationJournal.decode)?.ownerPID
        }
    }

    // MARK: Questions

    /// The versions the store would go through to reach the app's model (its own version first). Writes nothing.
    func route() throws -> (header: StoreHeader, route: OpenDecision.Route) {
        let (header, journal) = try readHeaderAndJournal()
        do {
            return (header, try OpenDecision.route(facts(header, journal: journal), request))
        } catch var error as MigrationError {
            error.storeState = driver.storeState()
            throw error
        }
    }
}
