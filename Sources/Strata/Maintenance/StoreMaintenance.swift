import Foundation

/// What a store's maintenance has left: records in older layouts (per entity and layout), indexes being
/// built, and retired databases still to empty. See ``Store/maintenanceStatus()``.
public struct MaintenanceStatus: Sendable, Codable, Hashable {
    /// One entity's state.
    public struct EntityStatus: Sendable, Codable, Hashable {
        public var name: String
        /// The layout new records are written in.
        public var currentLayout: UInt32
        /// Records left in each older layout, by layout ID; nil when the store does not know the counts (a
        /// store migrated by an earlier version of Strata: the sweep passes over the entity all the same).
        public var oldLayoutRecords: [UInt32: Int]?
        /// Indexes (attribute names) that writers maintain but that are not built yet: queries scan instead.
        public var indexesBuilding: [String]
    }

    public var entities: [EntityStatus]
    /// Databases earlier migrations retired that still hold entries.
    public var retiredDatabasesToEmpty: Int
    /// Records left in older layouts in all (counted ones).
    public var oldLayoutRecords: Int { entities.reduce(0) { $0 + ($1.oldLayoutRecords?.values.reduce(0, +) ?? 0) } }
    /// Whether nothing is left: every record in its current layout, every index built, nothing to empty.
    public var isComplete: Bool {
        retiredDatabasesToEmpty == 0 && entities.allSatisfy { ($0.oldLayoutRecords?.isEmpty ?? false) && $0.indexesBuilding.isEmpty }
    }
}

/// The progress of ``Store/performMaintenance(batchSize:progress:)``, after each batch.
public struct MaintenanceProgress: Sendable, CustomStringConvertible {
    /// The entity the last batch worked on (nil while retired databases are emptied).
    public var entity: String?
    /// Records rewritten into their current layout, index entries added and retired entries deleted so far.
    public var rewritten: Int
    public var indexed: Int
    public var deleted: Int
    /// Records of older layouts still counted, and indexes still being built.
    public var remainingOldRecords: Int
    public var remainingIndexes: Int

    public var description: String {
        "maintenance\(entity.map { " of \($0)" } ?? ""): \(rewritten) records rewritten, \(indexed) index entries, "
            + "\(deleted) retired entries deleted; \(remainingOldRecords) old-layout records and \(remainingIndexes) indexes left"
    }
}

extension Store {
    /// What the store's maintenance has left.
    public func maintenanceStatus() throws -> MaintenanceStatus {
        if isClosed { throw StoreError.closed }
        return try environment.read { txn in
            let m = try MaintenanceRecord.read(model.meta, in: txn)
            guard let catalog = try model.meta.read(.catalog, in: txn, Catalog.init(decoding:)) else {
                throw StoreError.corrupted(path: url.path, reason: .metadata("the catalog record is missing"))
            }
            var entities: [MaintenanceStatus.EntityStatus] = []
            for entry in catalog.entities {
                let counts: [UInt32: Int]? = m.oldLayoutCounts[entry.tag] ?? (entry.layouts.count > 1 ? nil : [:])
                let building = catalog.indexes.filter { $0.entityTag == entry.tag && m.buildingIndexes.contains($0.tag) }.map(\.attribute)
                entities.append(.init(name: entry.name, currentLayout: entry.currentLayout, oldLayoutRecords: counts,
                                      indexesBuilding: building))
            }
            let live = Set(catalog.entities.map(\.database) + catalog.relationships.map(\.database) + catalog.indexes.map(\.database))
            var retired = 0
            for name in catalog.garbage where !live.contains(name) {
                if let dbi = try txn.openDatabase(name, flags: BoundModel.databaseFlags(name), create: false),
                   try txn.entryCount(dbi) > 0 {
                    retired += 1
                }
            }
            return MaintenanceStatus(entities: entities, retiredDatabasesToEmpty: retired)
        }
    }

    /// Runs the store's maintenance to completion, now: rewrites every record of an older layout into its
    /// entity's current layout (metadata-only migrations leave old records as they were written, and read
    /// them through projections — *the sweep*), builds the indexes still being built, and empties the databases
    /// earlier migrations retired. Each batch is one short write transaction that records its progress, so the
    /// store stays usable meanwhile (other writers interleave) and a kill loses nothing: run it again. (A store
    /// runs the same work in the background after it opens; see ``StoreConfiguration/backgroundMaintenance``.)
    ///
    /// - Returns: the totals: records rewritten, index entries added, retired entries deleted.
    @discardableResult
    public func performMaintenance(batchSize: Int = 10_000, progress: ((MaintenanceProgress) -> Void)? = nil) throws -> MaintenanceProgress {
        if isClosed { throw StoreError.closed }
        if readOnly { throw StoreError.readOnly }
        var total = MaintenanceProgress(entity: nil, rewritten: 0, indexed: 0, deleted: 0, remainingOldRecords: 0, remainingIndexes: 0)
        while true {
            let batch = try MaintenanceBatch.run(model: model, environment: environment, limit: max(1, batchSize), seconds: 1)
            total.entity = batch.entity
            total.rewritten += batch.rewritten
            total.indexed += batch.indexed
            total.deleted += batch.deleted
            total.remainingOldRecords = batch.remainingOldRecords
            total.remainingIndexes = batch.remainingIndexes
            progress?(total)
            if batch.isDone { return total }
        }
    }

    /// Runs the store's maintenance to completion: the earlier name of ``performMaintenance(batchSize:progress:)``.
    @available(*, deprecated, renamed: "performMaintenance(batchSize:progress:)")
    @discardableResult
    public func compactLayouts(batchSize: Int = 10_000, progress: ((MaintenanceProgress) -> Void)? = nil) throws -> MaintenanceProgress {
        try performMaintenance(batchSize: batchSize, progress: progress)
    }

    /// Rewrites every record that is not in its entity's current layout (and does the rest of the store's
    /// maintenance); returns the number of records rewritten.
    @available(*, deprecated, message: "use performMaintenance(batchSize:progress:), whose result counts the records rewritten")
    @discardableResult
    public func rewriteRecordsInCurrentLayouts(batchSize: Int = 10_000) throws -> Int {
        try performMaintenance(batchSize: batchSize).rewritten
    }
}
