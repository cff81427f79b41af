import Foundation

/// Deletes the LMDB databases that migrations retired, once they are (nearly) empty.
enum GarbageCollection {
    /// Retired databases with at most this many entries are deleted at once; larger ones are emptied first by
    /// the store's maintenance, in bounded transactions (deleting a large database in one transaction holds
    /// LMDB's list of every freed page in memory).
    static let deletableEntries = 10_000

    /// Deletes the retired databases of earlier versions that are (nearly) empty. Runs when a process first
    /// opens the store, so no read transaction of this process can still use them.
    static func collect(environment: Environment, header: StoreHeader) throws {
        try environment.write { txn in
            guard let state = try header.meta.read(.state, in: txn, StateRecord.init(decoding:)), !state.migrating,
                  var catalog = try header.meta.read(.catalog, in: txn, Catalog.init(decoding:)) else { return }
            let live = Set(catalog.entities.map(\.database) + catalog.relationships.map(\.database) + catalog.indexes.map(\.database))
            var kept: [String] = []
            for name in catalog.garbage where !live.contains(name) {
                let flags = BoundModel.databaseFlags(name)
                guard let dbi = try txn.openDatabase(name, flags: flags, create: false) else { continue }
                if try txn.entryCount(dbi) <= deletableEntries {
                    try txn.deleteDatabase(name, dbi)
                } else {
                    kept.append(name)
                }
            }
            guard kept != catalog.garbage else { return }
            catalog.garbage = kept
            try header.meta.put(.catalog, catalog.encoded(), in: txn)
        }
    }
}
