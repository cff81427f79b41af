import Foundation
import Logging

/// Decides, when a store is opened or migrated, whether it is up to date, must be migrated along which
/// route, is being migrated by someone else, or cannot be opened by this app; and runs the steps.
struct MigrationDriver {
    let environment: Environment
    let schema: Schema
    let plan: MigrationPlan?
    let configuration: StoreConfiguration
    var options: MigrationOptions { configuration.migration }
    var path: String { environment.path }

    func readHeader() throws -> StoreHeader {
        try environment.read { try StoreHeader.read(in: $0, path: path) }
    }

    /// What opening the store requires.
    enum Decision {
        case upToDate
        /// Steps to run, as (source version identifier, destination schema) pairs; the first source is the
        /// store's recorded model.
        case migrate([Schema])
    }

    /// Brings the store to `schema` if it can, or throws the reason it cannot. Returns the number of steps
    /// run. `allowMigration` false makes any needed migration an error (`migratesAtOpen` off).
    ///
    /// A ``MigrationError`` leaves here with the state the store is really in, read back from the store.
    @discardableResult
    func bringUpToDate(allowMigration: Bool) throws -> Int {
        do {
            return try runSteps(allowMigration: allowMigration)
        } catch var error as MigrationError {
            error.storeState = storeState()
            throw error
        }
    }

    /// Where the store stands, as its metadata records it (for the errors of failed migrations).
    func storeState() -> MigrationError.StoreState {
        do {
            return try environment.read { txn in
                let header = try StoreHeader.read(in: txn, path: path)
                if let journal = try header.meta.read(.journal, in: txn, MigrationJournal.decode) {
                    if journal.currentTask == .didMigrate { return .switched(version: header.identity.versionIdentifier) }
                    return .migrating(source: journal.sourceVersion, destination: journal.destinationVersion)
                }
                return .at(version: header.identity.versionIdentifier)
            }
        } catch {
            return .unknown(reason: "\(error)")
        }
    }

    private func runSteps(allowMigration: Bool) throws -> Int {
        var header = try readHeader()
        var resumed = 0
        if header.hasJournal || header.state.migrating {
            // A handle with the model the store is at reads it during another process's migration (the
            // migration writes only staging databases until its switch).
            let readsSource = try header.identity.fingerprint == schema.fingerprint && !switchedJournal()
            if configuration.readOnly {
                if readsSource { return 0 }
                throw StoreError.migrationInProgress(ownerPID: try journalOwner())
            }
            var acquired = try MigrationLock.acquire(storePath: path)
            if acquired == nil {
                if readsSource { return 0 }
                acquired = try lockWaitingForOtherMigration()
            }
            guard let lock = acquired else { throw StoreError.migrationInProgress(ownerPID: try journalOwner()) }
            // (After waiting, the other process may have finished the step.)
            header = try readHeader()
            if header.hasJournal || header.state.migrating,
               try resumeOrRollBack(header: header, allowMigration: allowMigration) { resumed = 1 }
            _ = lock
            header = try readHeader()
        }
        switch try decide(header) {
        case .upToDate:
            return resumed
        case .migrate(let targets):
            guard allowMigration, !configuration.readOnly else {
                throw StoreError.migrationRequired(from: header.identity.versionIdentifier, to: schema.versionIdentifier)
            }
            // Every step must be inferable (or have its stage) before anything is written: a refused
            // migration leaves the store's files as they were, lock file included.
            var source = try environment.read { try header.recordedSchema(in: $0) }
            for target in targets {
                _ = try inferMapping(source: source, destination: target,
                                     stage: plan?.stage(from: source.versionIdentifier, to: target.versionIdentifier))
                source = target
            }
            // Another process may have taken the lock since the header was read: wait for it like any migration
            // in progress (or fail at once if the options say not to wait).
            guard let lock = try lockWaitingForOtherMigration() else {
                throw StoreError.migrationInProgress(ownerPID: try journalOwner())
            }
            // And it may have migrated the store (or begun to and died) between that read and this lock: what to
            // do is decided again, with the lock let go, on what the store holds now — never on a stale header.
            let current = try readHeader()
            if current.state.generation != header.state.generation || current.state.migrating || current.hasJournal
                || current.identity.fingerprint != header.identity.fingerprint {
                lock.release()
                return resumed + (try runSteps(allowMigration: allowMigration))
            }
            defer { lock.release() }
            if let backup = options.backupDirectory {
                try StoreBackup.copy(environment: environment, to: backup.standardizedFileURL.path, compact: true)
            }
            for (i, target) in targets.enumerated() {
                try runStep(to: target, index: i, count: targets.count)
            }
            return resumed + targets.count
        }
    }

    /// Whether the journal says the step has switched (only its `didMigrate` is left).
    private func switchedJournal() throws -> Bool {
        try environment.read { txn in
            let header = try StoreHeader.read(in: txn, path: path)
            return try header.meta.read(.journal, in: txn, MigrationJournal.decode)?.currentTask == .didMigrate
        }
    }

    /// Takes the migration lock; when another process holds it, waits for that process's migration to finish
    /// (the lock is released when it ends, or dies), reporting its progress as its journal records it.
    /// Returns the lock once taken, or nil when the options say not to wait or the wait timed out.
    private func lockWaitingForOtherMigration() throws -> MigrationLock? {
        if let lock = try MigrationLock.acquire(storePath: path) { return lock }
        // A migration of this process (another handle, perhaps on this very thread) is not waited for.
        guard options.waitsForOtherProcesses, try journalOwner() != getpid() else { return nil }
        let started = DispatchTime.now().uptimeNanoseconds
        var lastReported: (Int, Int)? = nil
        while true {
            if let lock = try MigrationLock.acquire(storePath: path) { return lock }
            if let limit = options.otherProcessTimeout, Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9 > limit {
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
            usleep(20_000)
        }
    }

    private func journalOwner() throws -> Int32? {
        try environment.read { txn -> Int32? in
            let header = try StoreHeader.read(in: txn, path: path)
            return try header.meta.read(.journal, in: txn, MigrationJournal.decode)?.ownerPID
        }
    }

    /// Where a store stands relative to the app's model.
    func decide(_ header: StoreHeader) throws -> Decision {
        let identity = header.identity
        if identity.fingerprint == schema.fingerprint { return .upToDate }
        if identity.hasSameLayout(as: schema) {
            // Only indexes, uniqueness or defaults differ: an inferred step that changes metadata and indexes.
            if identity.versionIdentifier != schema.versionIdentifier,
               plan?.schema(identity.versionIdentifier) == nil, isNewer(identity.versionIdentifier, header) {
                throw StoreError.storeNewerThanModel(store: identity.versionIdentifier, app: schema.versionIdentifier)
            }
            return .migrate([schema])
        }
        guard let plan else {
            if isNewer(identity.versionIdentifier, header) {
                throw StoreError.storeNewerThanModel(store: identity.versionIdentifier, app: schema.versionIdentifier)
            }
            if identity.versionIdentifier == schema.versionIdentifier { throw StoreError.schemaMismatch(version: schema.versionIdentifier) }
            throw StoreError.migrationRequired(from: identity.versionIdentifier, to: schema.versionIdentifier)
        }
        guard plan.currentSchema.fingerprint == schema.fingerprint else {
            throw MigrationError.noRoute(from: identity.versionIdentifier, to: schema.versionIdentifier)
        }
        if let known = plan.schema(withHashes: identity.entityHashes) {
            let route = plan.route(from: known.versionIdentifier)
            guard route.last == schema.versionIdentifier else {
                throw MigrationError.noRoute(from: known.versionIdentifier, to: schema.versionIdentifier)
            }
            return .migrate(route.dropFirst().compactMap { plan.schema($0) })
        }
        if plan.schema(identity.versionIdentifier) != nil {
            throw StoreError.schemaMismatch(version: identity.versionIdentifier)
        }
        if isNewer(identity.versionIdentifier, header) {
            throw StoreError.storeNewerThanModel(store: identity.versionIdentifier, app: schema.versionIdentifier)
        }
        // A version the app no longer knows: infer from the model recorded in the store.
        return .migrate([schema])
    }

    /// Whether the store's version is newer than the app's: the store went through the app's version
    /// already, or (for a version the app does not know) its identifier sorts after the app's newest.
    private func isNewer(_ storeVersion: String, _ header: StoreHeader) -> Bool {
        guard storeVersion != schema.versionIdentifier else { return false }
        if header.history.dropLast().contains(schema.versionIdentifier) { return true }
        if plan?.schema(storeVersion) == nil,
           storeVersion.compare(schema.versionIdentifier, options: [.numeric]) == .orderedDescending {
            return true
        }
        return false
    }

    /// Continues a step a crash interrupted, or rolls it back when the app no longer leads there.
    /// Returns whether a step was resumed and completed.
    @discardableResult
    private func resumeOrRollBack(header: StoreHeader, allowMigration: Bool) throws -> Bool {
        guard let journal = try environment.read({ txn in try header.meta.read(.journal, in: txn, MigrationJournal.decode) }) else {
            // The flag without a journal: clear it.
            try environment.write { txn in
                try header.meta.put(.state, StateRecord(generation: header.state.generation, migrating: false).encoded(), in: txn)
            }
            return false
        }
        let stage = plan?.stage(from: journal.sourceVersion, to: journal.destinationVersion)
        let destination: Schema? = plan?.schema(journal.destinationVersion).flatMap { $0.fingerprint.hex == journal.destinationFingerprint ? $0 : nil }
            ?? (schema.fingerprint.hex == journal.destinationFingerprint ? schema : nil)
        let switched = journal.currentTask == .didMigrate
        let continuable = destination != nil && (!journal.hasStage || stage != nil)
        if continuable && !allowMigration {
            // The app will migrate later (migratesAtOpen off): keep the work done so far.
            throw StoreError.migrationRequired(from: journal.sourceVersion, to: journal.destinationVersion)
        }
        let usable = continuable && allowMigration
        if !usable {
            if switched {
                // Only didMigrate remains; without its stage the step cannot finish here.
                throw StoreError.migrationRequired(from: journal.sourceVersion, to: journal.destinationVersion)
            }
            options.logger.debug("rolling back the interrupted migration \(journal.sourceVersion) → \(journal.destinationVersion)")
            try StepRunner.rollback(environment: environment, meta: header.meta, journal: journal, generation: header.state.generation)
            return false
        }
        guard let destination else { return false }
        let source = switched ? destination : try environment.read { try header.recordedSchema(in: $0) }
        let mapping = try inferMapping(source: source, destination: destination, stage: stage)
        // Planned with the options the step began with, so that the kinds match the journal's catalog and tasks.
        let stepPlan = try StepPlanner.plan(source: source, sourceCatalog: header.catalog, destination: destination, mapping: mapping,
                                            stage: stage, maximumLayouts: journal.maximumLayouts ?? 1,
                                            indexesInBackground: journal.indexesInBackground ?? false)
        let runner = try StepRunner(environment: environment, header: header, sourceSchema: source, destinationSchema: destination,
                                    mapping: mapping, stage: stage, journal: journal, kinds: stepPlan.kinds,
                                    options: options, stepIndex: 0, stepCount: 1)
        try runner.run()
        return true
    }

    private func inferMapping(source: Schema, destination: Schema, stage: MigrationStage?) throws -> InferredMapping {
        let intermediates = plan?.schemas(between: source.versionIdentifier, and: destination.versionIdentifier) ?? []
        return try InferredMapping.infer(
            from: source, to: destination, through: intermediates,
            scriptedEntities: Set(stage?.scripts.map(\.entity) ?? []),
            policyEntities: Set(stage?.passes.flatMap { $0 }.map(\.sourceEntity) ?? []))
    }

    /// Runs one step from the store's recorded model to `destination`.
    private func runStep(to destination: Schema, index: Int, count: Int) throws {
        let header = try readHeader()
        let source = try environment.read { try header.recordedSchema(in: $0) }
        let stage = plan?.stage(from: source.versionIdentifier, to: destination.versionIdentifier)
        let mapping = try inferMapping(source: source, destination: destination, stage: stage)
        let stepPlan = try StepPlanner.plan(source: source, sourceCatalog: header.catalog, destination: destination,
                                            mapping: mapping, stage: stage, maximumLayouts: options.maximumLayoutsPerEntity,
                                            indexesInBackground: options.buildsIndexesInBackground)
        options.logger.debug("migration step \(index + 1)/\(count): \(source.versionIdentifier) → \(destination.versionIdentifier), \(stage.map { $0.isLightweight ? "inferred" : "custom stage" } ?? "inferred"), tasks: \(stepPlan.tasks.map(\.description).joined(separator: ", "))")
        // What Core Data's MigrationDebug prints: each entity mapping and how its properties are filled.
        for entity in mapping.entities {
            let kind = entity.destinationName.flatMap { stepPlan.kinds[$0] }.map { "\($0)" } ?? "removed"
            options.logger.debug("  entity mapping \(entity.sourceName ?? "(none)") → \(entity.destinationName ?? "(none)") [\(kind)]")
            for a in entity.attributes { options.logger.debug("    attribute \(a)") }
            for a in entity.droppedAttributes { options.logger.debug("    attribute \(a): dropped") }
            for r in entity.relationships { options.logger.debug("    relationship \(r)") }
            for r in entity.droppedRelationships { options.logger.debug("    relationship \(r): dropped") }
        }
        let journal = try StepRunner.begin(environment: environment, header: header, source: source, destination: destination,
                                           plan: stepPlan, stage: stage)
        let runner = try StepRunner(environment: environment, header: header, sourceSchema: source,
                                    destinationSchema: destination, mapping: mapping, stage: stage, journal: journal,
                                    kinds: stepPlan.kinds, options: options, stepIndex: index, stepCount: count)
        try runner.run()
    }
}

/// Consistent copies of a store.
enum StoreBackup {
    /// Writes a consistent (optionally compacted) copy of the store into `destination`, which must not exist:
    /// the copy is made in a temporary directory beside it, synced, and renamed into place.
    static func copy(environment: Environment, to destination: String, compact: Bool) throws {
        if FileManager.default.fileExists(atPath: destination) {
            throw StoreError.notAStore(path: destination, reason: "a backup destination must not exist")
        }
        StoreFiles.removeStaleTemporaries(near: destination)
        let temp = try StoreFiles.makeTemporaryDirectory(near: destination)
        do {
            try environment.copy(toEmptyDirectory: temp, compact: compact)
            try FaultInjection.point("backup.afterCopy")
            // The copy is published only once it is durable.
            let fd = open(temp + "/data.mdb", O_RDONLY)
            guard fd >= 0 else { throw StoreError.ioError(errno: errno, operation: "open the backup copy") }
            let synced = fsync(fd) == 0 ? 0 : errno
            close(fd)
            if synced != 0 { throw StoreError.ioError(errno: synced, operation: "fsync the backup copy") }
            StoreFiles.syncDirectory(temp)
            try FaultInjection.point("backup.beforePublish")
            guard try StoreFiles.publish(temp, at: destination) else {
                throw StoreError.notAStore(path: destination, reason: "a backup destination must not exist")
            }
            try FaultInjection.point("backup.afterPublish")
        } catch {
            try? FileManager.default.removeItem(atPath: temp)
            throw error
        }
    }
}
