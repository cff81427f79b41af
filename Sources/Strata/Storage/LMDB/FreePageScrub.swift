import CStrataLMDB
import Foundation

/// Overwrites the data file's free pages, once a store was encrypted (or its key rotated): LMDB copies a page on
/// write and leaves the old copy in the file, on its free list, until a later transaction reuses it — so after the
/// sweep, the pages it freed still hold the values as they were before (plain, for an encrypted store). The scrub
/// takes every reusable free page in one transaction — filling a database of its own (`m.scrub`) with zeros, which
/// LMDB allocates from the free list, then from the pages past the last one in use (a killed transaction's), before
/// it grows the file, and writes whole — and drops that database in the next. Free pages that a reader's snapshot still pins cannot be taken: they stay as they were until reused.
enum FreePageScrub {
    static let databaseName = "m.scrub"

    /// Scrubs the free pages of the store of `environment`. A scrub a kill interrupted leaves its database, of zeros,
    /// which the next one drops first.
    static func run(_ environment: Environment) throws {
        // Twice: LMDB reuses a page only once a later transaction than the one that freed it has committed, so the
        // pages the last transaction before the scrub freed are taken by the second round.
        for _ in 0..<2 { try round(environment) }
    }

    private static func round(_ environment: Environment) throws {
        try dropFiller(environment)
        let (listed, pageSize) = try environment.read { txn in
            (try freePages(in: txn), Int(try txn.statistics(MDB_dbi(1)).ms_psize))
        }
        // The file's pages after the last one in use: written by a transaction a kill stopped before it committed
        // (the sweep's, with plain bytes in their free space), on no free list; LMDB allocates them next.
        let size = (try? FileManager.default.attributesOfItem(atPath: environment.path + "/data.mdb")[.size] as? Int) ?? 0
        let tail = environment.lastPageNumber.map { max(0, size / max(1, pageSize) - ($0 + 1)) } ?? 0
        let free = listed + tail
        guard free > 0 else { return }
        // Four entries fill a leaf page (16-byte header; per entry an 8-byte node header, an 8-byte key, the value,
        // a 2-byte slot): appended in key order, each page is left full.
        let valueSize = (pageSize - 16) / 4 - 8 - 8 - 2 - 2
        let zeros = [UInt8](repeating: 0, count: valueSize)
        try environment.write { txn in
            guard let dbi = try txn.openDatabase(databaseName, flags: 0, create: true) else { return }
            let cursor = try txn.cursor(dbi)
            try zeros.withUnsafeBytes { value in
                for i in 0..<((free + 8) * 4) {
                    try withUnsafeBytes(of: UInt64(i).bigEndian) { key in
                        _ = try cursor.put(key: key, value: value, flags: LMDBFlags.append)
                    }
                }
            }
        }
        try dropFiller(environment)
    }

    /// The number of pages on LMDB's free list (database 0; 1 is the main database) (its records, by transaction ID, hold each a list of page numbers
    /// whose first word is their count).
    static func freePages(in txn: Transaction) throws -> Int {
        let cursor = try txn.cursor(MDB_dbi(0))
        var total = 0
        var entry = try cursor.first()
        while let e = entry {
            if e.value.count >= MemoryLayout<Int>.size { total += max(0, e.value.loadUnaligned(as: Int.self)) }
            entry = try cursor.next()
        }
        return total
    }

    private static func dropFiller(_ environment: Environment) throws {
        let exists = try environment.read { try $0.openDatabase(databaseName, flags: 0, create: false) != nil }
        guard exists else { return }
        try environment.write { txn in
            if let dbi = try txn.openDatabase(databaseName, flags: 0, create: false) { try txn.deleteDatabase(databaseName, dbi) }
        }
    }
}
