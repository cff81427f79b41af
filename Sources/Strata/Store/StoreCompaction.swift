import Foundation

extension Store {
    /// Rewrites, in batches, every record that is not in its entity's current layout, then lets the catalog
    /// forget the old layouts.
    ///
    /// Metadata-only migrations (renames, added or removed attributes) leave records in the layout that
    /// wrote them and read them through projections; the bytes of a removed attribute stay in those records.
    /// Run this after such migrations when those bytes must go (privacy), or to make reads of old records
    /// direct. Every record decodes to the same values before and after; each batch is one write
    /// transaction, so the store stays usable and a kill at any instant is harmless (run it again).
    /// Pair it with ``backup(to:compact:)`` to also give freed pages back to the file system.
    ///
    /// - Returns: the number of records rewritten.
    @discardableResult
    public func rewriteRecordsInCurrentLayouts(batchSize: Int = 10_000) throws -> Int {
        if isClosed { throw StoreError.closed }
        var rewritten = 0
        var writer = BinaryWriter(capacity: 512)
        for binding in model.entities where binding.layouts.count > 1 {
            var cursorID: UInt64? = nil
            var done = false
            while !done {
                let start = cursorID
                let (last, count, finished) = try write { context -> (UInt64?, Int, Bool) in
                    let txn = context.txn
                    let cursor = try txn.cursor(binding.dbi)
                    var entry = try start.map { s in try ObjectKey.with(s &+ 1) { try cursor.seek($0) } } ?? (try cursor.first())
                    var seen = 0
                    var changed = 0
                    var last = start
                    var pending: [(UInt64, [UInt8])] = []
                    while let e = entry, seen < max(1, batchSize) {
                        let id = try ObjectKey.decode(e.key)
                        var header = BinaryReader(e.value)
                        _ = try? header.u8()
                        let layout = (try? header.varint()).map { UInt32(truncatingIfNeeded: $0) }
                        if layout != binding.current.layout.id {
                            let values = try binding.decodeValues(e.value, id: id)
                            try binding.encode(values, id: id, into: &writer)
                            pending.append((id, writer.bytes))
                        }
                        last = id
                        seen += 1
                        entry = try cursor.next()
                    }
                    for (id, bytes) in pending {
                        try ObjectKey.with(id) { key in try bytes.withUnsafeBytes { _ = try txn.put(binding.dbi, key: key, value: $0) } }
                        changed += 1
                    }
                    return (last, changed, entry == nil)
                }
                rewritten += count
                cursorID = last
                done = finished
            }
        }
        // Every record is in its current layout: forget the others.
        try environment.write { txn in
            guard let state = try model.meta.read(.state, in: txn, StateRecord.init(decoding:)) else { return }
            if state.migrating { throw StoreError.migrationInProgress(ownerPID: nil) }
            if state.generation != model.generation { throw StoreError.modelChanged(path: url.path) }
            guard var catalog = try model.meta.read(.catalog, in: txn, Catalog.init(decoding:)) else { return }
            for i in catalog.entities.indices {
                let current = catalog.entities[i].currentLayout
                catalog.entities[i].layouts.removeAll { $0.layout.id != current }
            }
            try model.meta.put(.catalog, catalog.encoded(), in: txn)
        }
        return rewritten
    }
}
