import Foundation

/// What a store holds and how it is stored: the answer of ``Store/info()`` and `strata info`.
public struct StoreInfo: Sendable, Codable, Hashable {
    /// One entity of the store's model.
    public struct EntityInfo: Sendable, Codable, Hashable {
        public var name: String
        public var versionHash: String
        public var objectCount: Int
        /// Physical layouts the entity's records are in (more than one after metadata-only migrations).
        public var layoutCount: Int
        /// The layout new records are written in.
        public var currentLayout: UInt32
        /// Records still in each older layout (by layout ID, as text for JSON), waiting for the store's
        /// maintenance to rewrite them; nil when not known (a store migrated by an earlier version of Strata).
        public var oldLayoutRecords: [String: Int]?
        /// Indexes (attribute names) not built yet: writers maintain them, queries scan until they are complete.
        public var indexesBuilding: [String]
    }

    /// A migration that has not finished.
    public struct MigrationState: Sendable, Codable, Hashable {
        public var sourceVersion: String
        public var destinationVersion: String
        public var task: String
        public var phase: String
        public var entity: String?
        public var completed: Int
        public var total: Int?
        public var taskIndex: Int
        public var taskCount: Int
        public var batches: Int
        public var ownerPID: Int32
        public var startedAt: Date
    }

    public var path: String
    /// The store format version, and the versions of Strata and LMDB that created the store.
    public var formatVersion: Int
    public var createdByStrata: String
    public var createdWithLMDB: String
    public var createdAt: Date
    /// Whether the store is encrypted (<doc:Encryption>).
    public var isEncrypted: Bool
    /// The LMDB library this process uses.
    public var lmdbVersion: String
    /// The version identifier of the model that wrote the store, and the versions it went through.
    public var modelVersion: String
    public var modelFingerprint: String
    public var history: [String]
    public var entities: [EntityInfo]
    public var fileSize: Int
    public var mapSize: Int
    public var pageSize: Int
    public var pagesUsed: Int
    /// Reader slots of dead processes cleared when this process opened the store.
    public var staleReadersCleared: Int
    public var readersInUse: Int
    public var maximumReaders: Int
    public var generation: UInt64
    public var migration: MigrationState?
}

extension Store {
    /// Describes the store: format, model, entities with their version hashes and object counts, sizes,
    /// and any migration in progress.
    public func info() throws -> StoreInfo {
        if isClosed { throw StoreError.closed }
        let env = environment.info()
        let path = url.storePath
        return try environment.read { txn in
            let header = try StoreHeader.read(in: txn, path: path)
            let recorded = try header.recordedSchema(in: txn)
            var entities: [StoreInfo.EntityInfo] = []
            let maintenance = try MaintenanceRecord.read(header.meta, in: txn)
            for entity in recorded.entities {
                guard let entry = header.catalog.entity(named: entity.name),
                      let dbi = try txn.openDatabase(entry.database, flags: 0, create: false) else { continue }
                let counts = maintenance.oldLayoutCounts[entry.tag].map { c in
                    Dictionary(uniqueKeysWithValues: c.map { ("\($0.key)", $0.value) })
                } ?? (entry.layouts.count > 1 ? nil : [:])
                let building = header.catalog.indexes.filter { $0.entityTag == entry.tag && maintenance.buildingIndexes.contains($0.tag) }
                entities.append(StoreInfo.EntityInfo(
                    name: entity.name, versionHash: recorded.entityVersionHashes[entity.name]?.hex ?? "",
                    objectCount: try txn.entryCount(dbi), layoutCount: entry.layouts.count, currentLayout: entry.currentLayout,
                    oldLayoutRecords: counts, indexesBuilding: building.map(\.attribute)))
            }
            var migration: StoreInfo.MigrationState? = nil
            if let journal = try header.meta.read(.journal, in: txn, MigrationJournal.decode) {
                let task = journal.currentTask
                var total: Int? = nil
                if let name = task?.entity, let entry = header.catalog.entity(named: name) ?? (try? Catalog(decoding: journal.destinationCatalog.withUnsafeBytes { $0 }))?.entity(named: name),
                   let dbi = try txn.openDatabase(entry.database, flags: 0, create: false) {
                    total = try txn.entryCount(dbi)
                }
                migration = StoreInfo.MigrationState(
                    sourceVersion: journal.sourceVersion, destinationVersion: journal.destinationVersion,
                    task: task?.description ?? "done", phase: task?.phase.rawValue ?? "completed", entity: task?.entity,
                    completed: journal.completed, total: total, taskIndex: journal.taskIndex, taskCount: journal.tasks.count,
                    batches: journal.batches, ownerPID: journal.ownerPID, startedAt: Date(timeIntervalSince1970: journal.startedAt))
            }
            return StoreInfo(
                path: path, formatVersion: Int(header.format.formatVersion), createdByStrata: header.format.strataVersion,
                createdWithLMDB: header.format.lmdbVersion, createdAt: Date(timeIntervalSince1970: header.format.createdAt),
                isEncrypted: environment.keyring != nil, lmdbVersion: LMDBStatus.libraryVersion, modelVersion: header.identity.versionIdentifier,
                modelFingerprint: header.identity.fingerprint.hex, history: header.history, entities: entities,
                fileSize: Environment.fileSize(path + "/data.mdb"), mapSize: env.mapSize, pageSize: env.pageSize,
                pagesUsed: env.lastPageNumber + 1, staleReadersCleared: environment.staleReadersCleared,
                readersInUse: env.readersInUse, maximumReaders: env.maximumReaders,
                generation: header.state.generation, migration: migration)
        }
    }
}
