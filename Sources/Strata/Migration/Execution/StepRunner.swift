import Foundation
import Logging

/// Runs one step of a migration: creates its journal and staging databases, runs its tasks in bounded
/// batches (each batch one write transaction that also rewrites the journal), switches the store to the
/// destination in one transaction, and rolls back (dropping staging, deleting the journal) when a check
/// or a custom stage fails.
final class StepRunner {
    let environment: Environment
    let path: String
    let meta: MetaTable
    let stage: MigrationStage?
    let options: MigrationOptions
    let stepIndex: Int
    let stepCount: Int
    let sourceSchema: Schema
    let destinationSchema: Schema
    let mapping: InferredMapping
    let sourceCatalog: Catalog
    let sourceGeneration: UInt64
    let history: [String]
    var journal: MigrationJournal
    let source: BoundModel
    let destination: BoundModel
    /// The destination model without indexes on rewritten entities (whose new indexes are built by the step).
    let destinationForWrites: BoundModel
    var kinds: [String: StepPlan.EntityKind]
    /// The custom stage's pass being run (for progress reports).
    var currentPass = 0
    /// Compiled inferred mappings, by source entity.
    var inferencePrograms: [String: InferenceProgram] = [:]
    /// The program returned last (held without counting a reference: `inferencePrograms` keeps it), and the source
    /// binding it was asked for: kept, so that its address, compared per object, is never another binding's.
    @exclusivity(unchecked) var lastInference: (source: EntityBinding, address: UnsafeMutableRawPointer,
                                                program: Unmanaged<InferenceProgram>)?
    private var logger: Logger { options.logger }

    static let lookupDatabase = "m.lookup"

    var sourceVersion: String { journal.sourceVersion }
    var destinationVersion: String { journal.destinationVersion }

    init(environment: Environment, header: StoreHeader, sourceSchema: Schema, destinationSchema: Schema,
         mapping: InferredMapping, stage: MigrationStage?, journal: MigrationJournal, kinds: [String: StepPlan.EntityKind],
         options: MigrationOptions, stepIndex: Int, stepCount: Int) throws {
        self.environment = environment
        self.path = environment.path
        self.meta = header.meta
        self.stage = stage
        self.options = options
        self.stepIndex = stepIndex
        self.stepCount = stepCount
        self.sourceSchema = sourceSchema
        self.destinationSchema = destinationSchema
        self.mapping = mapping
        self.sourceCatalog = header.catalog
        self.sourceGeneration = header.state.generation
        self.history = header.history
        self.journal = journal
        self.kinds = kinds
        let destinationCatalog: Catalog
        do {
            destinationCatalog = try Catalog(decoding: journal.destinationCatalog.withUnsafeBytes { $0 })
        } catch let failure as DecodeFailure {
            throw StoreError.corrupted(path: environment.path, reason: .metadata("journal: the destination catalog: \(failure.reason)"))
        }
        // Rewritten records are written by the transcoder, and their new indexes built afterwards; objects
        // that policies insert maintain their indexes as they go.
        let rewritten = Set(kinds.compactMap { if case .rewritten = $0.value { $0.key } else { nil } })
        (source, destination, destinationForWrites) = try environment.read { txn in
            let source = try header.bind(sourceSchema, in: txn)
            var handles: [String: DatabaseHandle] = [:]
            for name in destinationCatalog.entities.map(\.database) + destinationCatalog.relationships.map(\.database)
                + destinationCatalog.indexes.map(\.database) {
                guard let dbi = try txn.openDatabase(name, flags: BoundModel.databaseFlags(name), create: false) else {
                    throw StoreError.corrupted(path: environment.path, reason: .metadata("the staging database \(name) is missing"))
                }
                handles[name] = dbi
            }
            do {
                let destination = try BoundModel(schema: destinationSchema, catalog: destinationCatalog,
                                                 generation: header.state.generation, meta: header.meta, handles: handles)
                let forWrites = try BoundModel(schema: destinationSchema, catalog: destinationCatalog,
                                               generation: header.state.generation, meta: header.meta, handles: handles,
                                               withoutIndexesFor: rewritten)
                return (source, destination, forWrites)
            } catch let failure as DecodeFailure {
                throw StoreError.corrupted(path: environment.path, reason: .metadata(failure.reason))
            }
        }
    }

    // MARK: Beginning and ending

    /// Writes the journal, creates the staging databases and marks the store as migrating, in one
    /// transaction. Nothing else of the store changes.
    static func begin(environment: Environment, header: StoreHeader, source: Schema, destination: Schema,
                      plan: StepPlan, stage: MigrationStage?) throws -> MigrationJournal {
        var staging = plan.staging
        if !(stage?.passes.isEmpty ?? true) { staging += [Catalog.associationDatabase, lookupDatabase] }
        let journal = MigrationJournal(
            sourceVersion: source.versionIdentifier, destinationVersion: destination.versionIdentifier,
            sourceFingerprint: header.identity.fingerprint.hex, destinationFingerprint: destination.fingerprint.hex,
            destinationModel: destination.jsonData(prettyPrinted: false),
            destinationCatalog: Data(plan.destinationCatalog.encoded()),
            hasStage: !(stage?.isLightweight ?? true),
            stagingDatabases: staging, retiredDatabases: plan.retired, tasks: plan.tasks,
            maximumLayouts: plan.maximumLayouts, indexesInBackground: plan.indexesInBackground,
            ownerPID: CurrentProcess.id, startedAt: Date().timeIntervalSince1970)
        try FaultInjection.point("journal.beforeBegin")
        try environment.write { txn in
            for name in staging {
                let flags = BoundModel.databaseFlags(name)
                guard let dbi = try txn.openDatabase(name, flags: flags, create: true) else {
                    throw StoreError.corrupted(path: environment.path, reason: .metadata("cannot create \(name)"))
                }
                // A database left by an earlier attempt that rolled back is emptied.
                try txn.drop(dbi, delete: false)
            }
            try header.meta.put(.journal, try journal.encoded(), in: txn)
            try header.meta.put(.state, StateRecord(generation: header.state.generation, migrating: true).encoded(), in: txn)
        }
        try FaultInjection.point("journal.afterBegin")
        return journal
    }

    /// Undoes a step that has not switched: drops its staging databases and its journal. The store is
    /// exactly at its source version afterwards.
    static func rollback(environment: Environment, meta: MetaTable, journal: MigrationJournal, generation: UInt64) throws {
        try environment.write { txn in
            for name in journal.stagingDatabases {
                let flags = BoundModel.databaseFlags(name)
                if let dbi = try txn.openDatabase(name, flags: flags, create: false) {
                    try txn.deleteDatabase(name, dbi)
                }
            }
            try meta.delete(.journal, in: txn)
            try meta.put(.state, StateRecord(generation: generation, migrating: false).encoded(), in: txn)
        }
    }

    // MARK: Running

    /// Runs the remaining tasks. On a check or stage failure the step is rolled back before the error is
    /// thrown; on an environmental failure the journal stays for a resume.
    func run() throws {
        logger.debug("migration step \(sourceVersion) → \(destinationVersion): \(journal.tasks.count) tasks, resuming at \(journal.taskIndex)")
        while let task = journal.currentTask {
            do {
                try runTask(task)
            } catch let error as MigrationError {
                if error.code == .stopped { throw error }
                try failed(error)
            } catch let error as StoreError where !error.code.isEnvironmental {
                try failed(.stageFailed(source: sourceVersion, destination: destinationVersion, phase: task.phase.rawValue,
                                        entity: task.entity, object: nil, underlying: error))
            } catch let error as StoreError {
                throw MigrationError.interrupted(source: sourceVersion, destination: destinationVersion,
                                                 phase: task.phase.rawValue, entity: task.entity, underlying: error)
            }
        }
        report(.completed, entity: nil, completed: 0, total: 0)
    }

    private func failed(_ error: MigrationError) throws -> Never {
        if error.code == .interrupted { throw error }
        if journal.currentTask == .didMigrate {
            // The store already switched: the didMigrate script is retried at the next open.
            throw error
        }
        logger.debug("migration step \(sourceVersion) → \(destinationVersion) rolled back: \(error)")
        try StepRunner.rollback(environment: environment, meta: meta, journal: journal, generation: sourceGeneration)
        throw error
    }

    private func runTask(_ task: MigrationTask) throws {
        try FaultInjection.point("task.\(task.phase.rawValue)")
        switch task {
        case .willMigrate: try runWillMigrate()
        case .checkMaximumLinks(let entity, let relationship, let maximum):
            try runLinkCheck(entity: entity, relationship: relationship, maximum: maximum, minimum: nil)
        case .checkMinimumLinks(let entity, let relationship, let minimum):
            try runLinkCheck(entity: entity, relationship: relationship, maximum: nil, minimum: minimum)
        case .checkUniqueIndex(let entity, let attribute): try runUniqueCheck(entity: entity, attribute: attribute)
        case .rewrite(let entity, let sourceName): try runRewrite(entity: entity, source: sourceName)
        case .instances(let pass, let mapping): try runInstances(pass: pass, mapping: mapping)
        case .relationships(let pass, let mapping): try runRelationships(pass: pass, mapping: mapping)
        case .buildIndex(let entity, let attribute): try runIndexBuild(entity: entity, attribute: attribute)
        case .checkRequired(let entity): try runRequiredCheck(entity: entity)
        case .switchOver: try runSwitch()
        case .didMigrate: try runDidMigrate()
        }
    }

    // MARK: Batches

    /// Runs a task over the keys of `dbi` from the journal's cursor, in batches. `body` handles one entry
    /// and returns the bytes it wrote. `finish` runs in the transaction of the last batch.
    func batched(over dbi: DatabaseHandle, phase: MigrationProgress.Phase, entity: String?, total: Int, duplicates: Bool = false,
                 _ body: (Transaction, Entry, UInt64, inout MigrationJournal) throws -> Int,
                 beforeCommit: ((Transaction) throws -> Void)? = nil,
                 finish: ((Transaction, inout MigrationJournal) throws -> Void)? = nil) throws {
        while true {
            if options.shouldStop?() == true {
                throw MigrationError.stopped(source: sourceVersion, destination: destinationVersion)
            }
            let start = journal
            let (next, done) = try environment.write { txn -> (MigrationJournal, Bool) in
                var j = start
                let cursor = try txn.cursor(dbi)
                var entry: Entry?
                if let last = j.cursor {
                    if last == UInt64.max { entry = nil } else {
                        entry = try ObjectKey.with(last + 1) { try cursor.seek($0) }
                    }
                } else {
                    entry = try cursor.first()
                }
                var limits = BatchLimits(options)
                while let e = entry, !limits.isReached {
                    let id = try ObjectKey.decode(e.key)
                    limits.add(bytes: try body(txn, e, id, &j))
                    j.cursor = id
                    j.completed += 1
                    try FaultInjection.point("batch.afterPut")
                    entry = duplicates ? try cursor.nextKey() : try cursor.next()
                }
                let done = entry == nil
                try beforeCommit?(txn)
                if done {
                    try finish?(txn, &j)
                    if j.findingsTotal == 0 { j.advance() }
                }
                j.batches += 1
                try meta.put(.journal, try j.encoded(), in: txn)
                try FaultInjection.point("batch.beforeCommit")
                return (j, done)
            }
            let completed = next.taskIndex == start.taskIndex ? next.completed : total
            journal = next
            try FaultInjection.point("batch.afterCommit")
            report(phase, entity: entity, completed: completed, total: total)
            logger.debug("migration \(sourceVersion) → \(destinationVersion): \(phase.rawValue) \(entity ?? "") \(completed)/\(total) (batch \(next.batches))")
            if done { return }
        }
    }

    /// Runs one transaction for a task that is not batched (a script, the switch), advancing the journal.
    func single(_ body: (Transaction, inout MigrationJournal) throws -> Void) throws {
        let start = journal
        journal = try environment.write { txn -> MigrationJournal in
            var j = start
            try body(txn, &j)
            j.advance()
            j.batches += 1
            try meta.put(.journal, try j.encoded(), in: txn)
            return j
        }
    }

    func report(_ phase: MigrationProgress.Phase, entity: String?, completed: Int, total: Int, pass: Int? = nil) {
        let pass = pass ?? currentPass
        guard let progress = options.progress else { return }
        progress(MigrationProgress(stepIndex: stepIndex, stepCount: stepCount, sourceVersion: sourceVersion,
                                   destinationVersion: destinationVersion, phase: phase, pass: pass,
                                   passCount: max(1, stage?.passes.count ?? 1), entity: entity,
                                   completed: completed, total: total))
    }

    // MARK: Switch

    /// What the store's maintenance has left after the switch: the records of each entity's previous current
    /// layout when a step gave it a new one (they are read through projections until the sweep rewrites
    /// them), nothing for entities the step rebuilt, and the indexes to build.
    private func updateMaintenance(catalog: Catalog, in txn: Transaction) throws {
        var m = try MaintenanceRecord.read(meta, in: txn)
        let live = Set(catalog.entities.map(\.tag))
        for tag in Array(m.oldLayoutCounts.keys) where !live.contains(tag) { m.oldLayoutCounts[tag] = nil }
        // Entities whose records the sweep must visit again from the first: those given a new layout (records it
        // already rewrote are in an old layout again) or a new index to build (it covers none of them yet).
        var restarted: Set<UInt32> = []
        for entry in catalog.entities {
            guard kinds[entry.name] == .carried, let source = sourceCatalog.entity(tag: entry.tag) else {
                m.oldLayoutCounts[entry.tag] = nil
                continue
            }
            guard entry.currentLayout != source.currentLayout, let binding = destination.entityIfPresent(entry.name) else { continue }
            let total = try txn.entryCount(binding.dbi)
            let counted = m.oldLayoutCounts[entry.tag]?.values.reduce(0, +) ?? 0
            // Records of layouts older than the source's current one are already counted (or, for a store
            // migrated by an earlier version, uncounted: the sweep passes over such entities all the same).
            let n = source.layouts.count > 1 && m.oldLayoutCounts[entry.tag] == nil ? 0 : total - counted
            if n > 0 { m.oldLayoutCounts[entry.tag, default: [:]][source.currentLayout] = n }
            restarted.insert(entry.tag)
        }
        // New indexes (created by this step) of entities that keep their records, which no task of the step
        // builds: the maintenance builds them. (Read from the journal, so a resumed step agrees with itself.)
        let staging = Set(journal.stagingDatabases)
        var builtByStep: Set<String> = []
        for task in journal.tasks { if case .buildIndex(let e, let a) = task { builtByStep.insert(e + "\u{0}" + a) } }
        var background: Set<UInt32> = []
        for index in catalog.indexes where staging.contains(index.database) && !index.isUnique {
            guard let entity = catalog.entity(tag: index.entityTag), kinds[entity.name] == .carried,
                  !builtByStep.contains(entity.name + "\u{0}" + index.attribute) else { continue }
            background.insert(index.tag)
            if !m.buildingIndexes.contains(index.tag) { restarted.insert(index.entityTag) }
        }
        let indexes = Set(catalog.indexes.map(\.tag))
        m.buildingIndexes = m.buildingIndexes.intersection(indexes).union(background)
        if let cursor = m.cursor, !live.contains(cursor.entity) || kinds[catalog.entity(tag: cursor.entity)?.name ?? ""] != .carried
            || restarted.contains(cursor.entity) {
            m.cursor = nil
        }
        try m.write(meta, in: txn)
    }

    private func runSwitch() throws {
        try FaultInjection.point("switch.begin")
        let destinationCatalog = destination.catalog
        let retired = journal.retiredDatabases
        let work = journal.stagingDatabases.filter { $0 == Catalog.associationDatabase || $0 == StepRunner.lookupDatabase }
        let pendingDidMigrate = journal.tasks.contains(.didMigrate)
        let start = journal
        journal = try environment.write { txn -> MigrationJournal in
            var catalog = destinationCatalog
            // The retired databases are not emptied here: freeing every page of a large database in one
            // transaction holds LMDB's list of freed pages in memory, which grows with the store. They become
            // garbage, which the store's maintenance empties in bounded transactions afterwards.
            for name in retired + work where !catalog.garbage.contains(name) {
                catalog.garbage.append(name)
            }
            try updateMaintenance(catalog: catalog, in: txn)
            var history = self.history
            if history.last != destinationSchema.versionIdentifier { history.append(destinationSchema.versionIdentifier) }
            try StoreMetadataWriter.writeModel(destinationSchema, catalog: catalog, history: history,
                                               generation: sourceGeneration &+ 1, meta: meta, in: txn)
            var j = start
            j.advance()
            if pendingDidMigrate {
                try meta.put(.state, StateRecord(generation: sourceGeneration &+ 1, migrating: true).encoded(), in: txn)
                try meta.put(.journal, try j.encoded(), in: txn)
            } else {
                try meta.delete(.journal, in: txn)
            }
            if let history = try HistoryRecording.activeState(meta, in: txn) {
                try recordMigration(state: history, in: txn)
            }
            try FaultInjection.point("switch.beforeCommit")
            return j
        }
        try FaultInjection.point("switch.afterCommit")
        logger.debug("migration \(sourceVersion) → \(destinationVersion): switched")
        report(.switching, entity: nil, completed: 1, total: 1)
    }
}
