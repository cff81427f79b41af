import Foundation

/// The last phase of encrypting a store (<doc:Encryption>): every page of the store written again, so that none
/// keeps plain bytes in its free space.
///
/// LMDB does not clear the free space inside a page: when an entry is deleted or grows, or a page splits, the old
/// bytes stay between the entries; and it copies a page into a buffer kept from earlier transactions without
/// clearing that space either. The sweep that seals a store's values leaves pieces of them as they were, plain, in
/// the free space of the pages it wrote. Writing an entry again, byte for byte, makes LMDB copy its page's entries
/// into a buffer — one of this environment's, clean when the environment never wrote a plain page
/// (``Environment/wrotePlainPages``) — so the phase waits for such an environment: a handle opened after the sweep
/// ended, in a process that has not held the plain store. Then the pages the sweep and this phase freed are
/// overwritten (``FreePageScrub``).
enum PageRewrite {
    /// One batch: at most `limit` entries and `seconds`, from the cursor of `r`, in every database the main database
    /// lists (a database with sorted duplicates, key by key). Nil when this environment held plain pages (the phase
    /// waits for another).
    static func batch(_ r: inout KeyRotationRecord, model: BoundModel, txn: Transaction, limit: Int, seconds: Double) throws -> KeyRotation.Batch? {
        guard !txn.environment.wrotePlainPages.load(ordering: .relaxed) else { return nil }
        let budget = KeyRotation.Budget(limit: limit, seconds: seconds)
        var batch = KeyRotation.Batch()
        var visited = 0
        // The databases, by name, with their flags (`MDB_db`: a 4-byte pad, then the 2-byte flags).
        var databases: [(name: String, flags: UInt32)] = []
        let main = try txn.cursor(1)
        var named = try main.first()
        while let e = named {
            let name = String(decoding: e.key, as: UTF8.self)
            if e.value.count >= 6, !r.done.contains(name), name != FreePageScrub.databaseName {
                databases.append((name, UInt32(e.value.loadUnaligned(fromByteOffset: 4, as: UInt16.self)) & 0x7E))
            }
            named = try main.next()
        }
        for database in databases {
            guard let dbi = try txn.openDatabase(database.name, flags: database.flags, create: false) else {
                r.done.append(database.name)
                continue
            }
            let duplicates = database.flags & LMDBFlags.dupSort != 0
            if database.name.first == "i" {
                // An index: its branch pages keep keys of entries long gone (LMDB does not update a branch's first
                // key), plain ones among them; it is emptied and filled again whole, in this batch.
                let count = try rebuild(dbi, in: txn)
                visited += count
                r.passed += count
                batch.resealed += count
                r.done.append(database.name)
                continue
            }
            let cursor = try txn.cursor(dbi)
            var entry = try r.firstEntryLeft(in: database.name, cursor) { duplicates ? try $0.nextKey() : try $0.next() }
            while let e = entry {
                if budget.isSpent(after: visited) {
                    r.cursorDatabase = database.name
                    batch.remaining = r.remaining
                    return batch
                }
                visited += 1
                r.passed += 1
                r.cursorKey = Array(e.key)
                if duplicates {
                    // A value of its own size added and taken away again: the key's page is written.
                    let filler = [UInt8](repeating: 0xFF, count: e.value.count)
                    let key = r.cursorKey
                    let added = try key.withUnsafeBytes { k in
                        try filler.withUnsafeBytes { v in try txn.put(dbi, key: k, value: v, flags: LMDBFlags.noDupData) }
                    }
                    if added {
                        try key.withUnsafeBytes { k in try filler.withUnsafeBytes { v in _ = try txn.delete(dbi, key: k, value: v) } }
                    }
                    _ = try key.withUnsafeBytes { try cursor.find($0) }
                    entry = try cursor.nextKey()
                } else {
                    try cursor.rewriteCurrentAsStored()
                    entry = try cursor.next()
                }
                batch.resealed += 1
            }
            r.done.append(database.name)
            r.cursorDatabase = nil
            r.cursorKey = []
        }
        batch.finished = true
        return batch
    }

    /// Empties index database `dbi` and puts its entries back in order, in fresh pages; returns their number.
    private static func rebuild(_ dbi: DatabaseHandle, in txn: Transaction) throws -> Int {
        // Entries in one buffer: a 2-byte key length, the key, a 2-byte value length, the value.
        var entries: [UInt8] = []
        var count = 0
        let cursor = try txn.cursor(dbi)
        var entry = try cursor.first()
        while let e = entry {
            for part in [e.key, e.value] {
                withUnsafeBytes(of: UInt16(part.count)) { entries.append(contentsOf: $0) }
                entries.append(contentsOf: part)
            }
            count += 1
            entry = try cursor.next()
        }
        try txn.drop(dbi, delete: false)
        let refill = try txn.cursor(dbi)
        try entries.withUnsafeBytes { all in
            var at = 0
            func part() -> UnsafeRawBufferPointer {
                let n = Int(all.loadUnaligned(fromByteOffset: at, as: UInt16.self))
                defer { at += 2 + n }
                return UnsafeRawBufferPointer(rebasing: all[(at + 2)..<(at + 2 + n)])
            }
            while at < all.count {
                let key = part()
                let value = part()
                _ = try refill.put(key: key, value: value, flags: LMDBFlags.appendDup)
            }
        }
        return count
    }

    /// Entries the phase visits (an upper bound: a database with sorted duplicates is visited key by key).
    static func entries(in txn: Transaction) throws -> Int {
        var total = 0
        let main = try txn.cursor(1)
        var named = try main.first()
        while let e = named {
            total += e.value.count >= 48 ? Int(e.value.loadUnaligned(fromByteOffset: 32, as: UInt64.self)) : 0
            named = try main.next()
        }
        return total
    }
}
