import Foundation

/// One bounded batch of the store's maintenance, in one write transaction: rewrites records of older layouts
/// into their entity's current layout (the sweep) and builds indexes that are still being built, then (once nothing of
/// that is left) empties the databases earlier migrations retired. The batch updates the maintenance record
/// (counts, cursor, indexes) in the same transaction, so a kill at any instant neither loses nor repeats work,
/// and it reads each record inside the write transaction, so an object an app writes meanwhile is never
/// overwritten with an older value.
enum MaintenanceBatch {
    /// What one batch did.
    struct Batch: Sendable {
        /// Records visited, records rewritten into the current layout, index entries added, garbage entries
        /// deleted.
        var visited = 0
        var rewritten = 0
        var indexed = 0
        var deleted = 0
        /// The entity the batch worked on.
        var entity: String?
        /// Records of older layouts still counted after the batch, and indexes still being built.
        var remainingOldRecords = 0
        var remainingIndexes = 0
        /// Whether every maintenance task is done.
        var isDone = false
        /// Values a key rotation's sweep re-sealed under the new key, values left under the old one (at most), and
        /// whether this batch ended the rotation.
        var resealed = 0
        var remainingResealing = 0
        var finishedKeyRotation = false
        /// An encryption's free pages are to be overwritten, after the batch's transaction.
        var freePagesDue = false
    }

    /// Runs one batch: at most `limit` records (or garbage entries), and at most `seconds`.
    static func run(model: BoundModel, environment: Environment, limit: Int, seconds: Double) throws -> Batch {
        var batch = try runBatch(model: model, environment: environment, limit: limit, seconds: seconds)
        if batch.freePagesDue {
            try KeyRotation.endEncrypting(model, environment: environment)
            batch.remainingResealing = 0
            return batch
        }
        // The key change's last batch committed: from now on only the new key opens the store (or, decrypted, none).
        if batch.finishedKeyRotation, let keyring = environment.keyring {
            if let current = keyring.current {
                environment.install(StoreKeyring(current: current), replacing: true)
                // The pages the sweep freed still hold the values as they were (after encrypting, once the pages
                // were written again by an environment that held no plain page).
                if !environment.wrotePlainPages.load(ordering: .relaxed) { try FreePageScrub.run(environment) }
            } else {
                environment.uninstallKeyring()
            }
        }
        return batch
    }

    private static func runBatch(model: BoundModel, environment: Environment, limit: Int, seconds: Double) throws -> Batch {
        try environment.write { txn in
            guard let state = try model.meta.read(.state, in: txn, StateRecord.init(decoding:)) else {
                throw StoreError.corrupted(path: environment.path, reason: .metadata("the state record is missing"))
            }
            if state.migrating { throw StoreError.migrationInProgress(ownerPID: nil) }
            if state.generation != model.generation { throw StoreError.modelChanged(path: environment.path) }
            var m = try MaintenanceRecord.read(model.meta, in: txn)
            guard let catalog = try model.meta.read(.catalog, in: txn, Catalog.init(decoding:)) else {
                throw StoreError.corrupted(path: environment.path, reason: .metadata("the catalog record is missing"))
            }
            var batch = Batch()
            // A key rotation's sweep goes first: the old key is needed until it ends.
            if let rotation = try KeyRotation.sweep(model: model, catalog: catalog, txn: txn, limit: limit, seconds: seconds) {
                batch.resealed = rotation.resealed
                batch.remainingResealing = rotation.finished ? 0 : rotation.remaining
                batch.finishedKeyRotation = rotation.finished
                batch.freePagesDue = rotation.freePagesDue
                batch.remainingOldRecords = m.oldRecords
                batch.remainingIndexes = m.buildingIndexes.count
                return batch
            }
            if let binding = nextEntity(model, catalog, m) {
                try sweep(binding, model: model, catalog: catalog, txn: txn, record: &m, limit: limit, seconds: seconds, batch: &batch)
            } else {
                m.cursor = nil
                try drainGarbage(catalog, txn: txn, limit: limit * 10, batch: &batch)
            }
            batch.remainingOldRecords = m.oldRecords
            batch.remainingIndexes = m.buildingIndexes.count
            try m.write(model.meta, in: txn)
            return batch
        }
    }

    /// The entity that has work left: the cursor's, else the first with records of older layouts (counted,
    /// or older layouts in the catalog without counts) or an index being built.
    static func nextEntity(_ model: BoundModel, _ catalog: Catalog, _ m: MaintenanceRecord) -> EntityBinding? {
        func needsWork(_ b: EntityBinding) -> Bool {
            m.oldLayoutCounts[b.tag] != nil || (catalog.entity(tag: b.tag)?.layouts.count ?? 1) > 1
                || b.indexes.contains { m.buildingIndexes.contains($0.tag) }
        }
        if let cursor = m.cursor, let b = model.entities.first(where: { $0.tag == cursor.entity }), needsWork(b) { return b }
        return model.entities.first(where: needsWork)
    }

    private static func sweep(_ binding: EntityBinding, model: BoundModel, catalog: Catalog, txn: Transaction,
                              record m: inout MaintenanceRecord, limit: Int, seconds: Double, batch: inout Batch) throws {
        batch.entity = binding.name
        let building = binding.indexes.filter { m.buildingIndexes.contains($0.tag) }
        guard let entry = catalog.entity(tag: binding.tag) else {
            throw StoreError.corrupted(path: txn.environment.path, reason: .metadata("the catalog has no entity \(binding.name)"))
        }
        // Records of older layouts are rewritten byte by byte, as their projection reads them.
        var transcoder: RecordTranscoder? = nil
        if entry.layouts.count > 1 {
            do {
                transcoder = try RecordTranscoder(compacting: entry)
            } catch let failure as DecodeFailure {
                throw StoreError.corrupted(path: txn.environment.path, reason: .metadata("the layouts of \(binding.name): \(failure.reason)"))
            }
        }
        let start = m.cursor?.entity == binding.tag ? m.cursor?.lastID : nil
        let cursor = try txn.cursor(binding.dbi)
        var entry_ = try start.map { s in try ObjectKey.with(s &+ 1) { try cursor.seek($0) } } ?? cursor.first()
        let began = MonotonicClock.nanoseconds()
        let budget = UInt64(max(0, seconds) * 1e9)
        var writer = BinaryWriter(capacity: 512)
        var removed: [UInt32: Int] = [:]
        // Records of one layout come in runs: counted here, added to `removed` when the layout changes.
        var run: (layout: UInt32, count: Int)? = nil
        var last = start
        let current = binding.current.layout.id
        while let e = entry_, batch.visited < max(1, limit) {
            if batch.visited & 63 == 63, MonotonicClock.nanoseconds() - began > budget { break }
            let id = try ObjectKey.decode(e.key)
            let layout = RecordCodec.layoutID(of: e.value)
            if !building.isEmpty {
                let values = try binding.decodeValues(e.value, id: id)
                for index in building where !values[index.attribute].isNull {
                    try txn.indexKey(values[index.attribute]).withUnsafeBytes { k in
                        try ObjectKey.with(id) { v in _ = try txn.put(index.dbi, key: k, value: v, flags: LMDBFlags.noDupData) }
                    }
                    batch.indexed += 1
                }
            }
            if layout != current {
                try rewrite(e.value, id: id, layout: layout, of: binding, with: &transcoder, into: &writer)
                if txn.isRotatingKeys {
                    // Re-sealed under the new key: its index entries move to the new key's hash with it.
                    try RotatingIndexEntries.moveToCurrentKey(binding.indexes, values: try binding.decodeValues(writer.buffer, id: id), id: id, in: txn)
                }
                // Replaced in place: the cursor stays on the record (the record's old bytes are not read again).
                try ObjectKey.with(id) { key in
                    _ = try cursor.put(key: key, value: writer.buffer, flags: LMDBFlags.current)
                }
                if let layout {
                    if let r = run, r.layout == layout {
                        run = (layout, r.count + 1)
                    } else {
                        if let r = run { removed[r.layout, default: 0] += r.count }
                        run = (layout, 1)
                    }
                }
                batch.rewritten += 1
            }
            batch.visited += 1
            last = id
            entry_ = try cursor.next()
        }
        if let r = run { removed[r.layout, default: 0] += r.count }
        m.remove(entity: binding.tag, counts: removed)
        if entry_ == nil {
            // The whole entity is in its current layout, and its indexes are complete.
            m.oldLayoutCounts[binding.tag] = nil
            for index in building { m.buildingIndexes.remove(index.tag) }
            m.cursor = nil
            try forgetOldLayouts(of: binding, model: model, txn: txn)
        } else if let last {
            m.cursor = (binding.tag, last)
        }
    }

    /// Transcodes one record of an older layout into `writer`; a record the catalog's layouts cannot read is a
    /// typed ``StoreError/Code-swift.struct/corruptedRecord``.
    private static func rewrite(_ bytes: UnsafeRawBufferPointer, id: UInt64, layout: UInt32?, of binding: EntityBinding,
                                with transcoder: inout RecordTranscoder?, into writer: inout BinaryWriter) throws {
        // Moved out and back, so that the transcoder's buffers are never copied.
        guard var t = transcoder.take() else {
            throw StoreError.corruptedRecord(entity: binding.name, id: ObjectID(rawValue: id),
                                             reason: "layout \(layout.map(String.init) ?? "?") is not in the catalog")
        }
        defer { transcoder = t }
        do {
            try t.transcode(bytes, id: id, sourceTag: binding.tag, into: &writer)
        } catch {
            throw StoreError.corruptedRecord(entity: binding.name, id: ObjectID(rawValue: id), reason: error.reason)
        }
    }

    /// Removes an entity's older layouts from the catalog once none of its records uses them.
    private static func forgetOldLayouts(of binding: EntityBinding, model: BoundModel, txn: Transaction) throws {
        guard var catalog = try model.meta.read(.catalog, in: txn, Catalog.init(decoding:)),
              let i = catalog.entities.firstIndex(where: { $0.tag == binding.tag }) else { return }
        let current = catalog.entities[i].currentLayout
        guard catalog.entities[i].layouts.count > 1 else { return }
        catalog.entities[i].layouts.removeAll { $0.layout.id != current }
        try model.meta.put(.catalog, catalog.encoded(), in: txn)
    }

    /// Deletes up to `limit` entries of the databases earlier migrations retired (bounded, so that LMDB's list
    /// of freed pages stays small); empty ones are deleted when a process next opens the store.
    private static func drainGarbage(_ catalog: Catalog, txn: Transaction, limit: Int, batch: inout Batch) throws {
        let live = Set(catalog.allDatabases).subtracting(catalog.garbage)
        for name in catalog.garbage where !live.contains(name) {
            guard let dbi = try txn.openDatabase(name, flags: BoundModel.databaseFlags(name), create: false) else { continue }
            let cursor = try txn.cursor(dbi)
            while batch.deleted < max(1, limit), try cursor.first() != nil {
                try cursor.deleteCurrent(allDuplicates: BoundModel.databaseFlags(name) & LMDBFlags.dupSort != 0)
                batch.deleted += 1
            }
            if batch.deleted >= max(1, limit) { return }
        }
        batch.isDone = true
    }
}
