import Foundation

/// Deletes the emptied LMDB databases that migrations retired.
enum GarbageCollection {
    /// Deletes the emptied databases of earlier versions. Runs when a process first opens the store, so
    /// no read transaction of this process can still use them.
    static func collect(environment: Environment, header: StoreHeader) throws {
        try environment.write { txn in
            guard let state = try header.meta.read(.state, in: txn, StateRecord.init(decoding:)), !state.migrating,
                  var catalog = try header.meta.read(.catalog, in: txn, Catalog.init(decoding:)) else { return }
            let live = Set(catalog.entities.map(\.database) + catalog.relationships.map(\.database) + catalog.indexes.map(\.database))
            for name in catalog.garbage where !live.contains(name) {
                let flags = BoundModel.databaseFlags(name)
                if let dbi = try txn.openDatabase(name, flags: flags, create: false) {
                    try txn.deleteDatabase(name, dbi)
                }
            }
            catalog.garbage = []
            try header.meta.put(.catalog, catalog.encoded(), in: txn)
        }
    }
}
