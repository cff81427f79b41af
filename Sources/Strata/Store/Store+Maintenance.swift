import Foundation

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
            let keyChange = try KeyRotation.remaining(model.meta, in: txn)
            return MaintenanceStatus(entities: entities, retiredDatabasesToEmpty: retired,
                                     valuesUnderPreviousKey: keyChange.underPreviousKey,
                                     valuesToEncrypt: keyChange.toEncrypt, valuesToDecrypt: keyChange.toDecrypt)
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
            total.resealed += batch.resealed
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
