import Foundation

/// Creates a store so that a crash at any instant leaves either nothing or a complete store: the store is
/// built in a temporary directory beside the destination, its first commit made durable, and the directory
/// renamed into place. LMDB alone would leave a file that a crash during the first commit makes
/// unopenable (`MDB_INVALID`), and takes an empty data file for a new store.
enum StoreCreation {
    static func create(at path: String, schema: Schema, configuration: StoreConfiguration) throws {
        StoreFiles.removeStaleTemporaries(near: path)
        let temp = try StoreFiles.makeTemporaryDirectory(near: path)
        do {
            let environment = try Environment.openPrivate(path: temp, configuration: configuration.environmentConfiguration(databases: configuration.databases(for: [schema])))
            defer { environment.closePrivate() }
            let encryption = try configuration.encryption.map { try StoreUnlocking.encryptNewStore(environment, with: $0) }
            try environment.write { txn in
                guard let dbi = try txn.openDatabase(MetaTable.databaseName, flags: 0, create: true) else {
                    throw StoreError.permissionDenied(path: temp)
                }
                let meta = MetaTable(dbi: dbi, path: path)
                let catalog = Catalog.initial(for: schema)
                try StoreMetadataWriter.createDatabases(of: catalog, in: txn)
                var format = FormatRecord.current()
                if let encryption {
                    format.formatVersion = FormatRecord.versionEncrypted
                    try meta.put(.encryption, encryption.encoded(), in: txn)
                }
                try meta.put(.format, format.encoded(), in: txn)
                try meta.put(.counter, CounterRecord.encode(1), in: txn)
                try StoreMetadataWriter.writeModel(schema, catalog: catalog, history: [schema.versionIdentifier],
                                                   generation: 1, meta: meta, in: txn)
            }
            try FaultInjection.point("create.beforeRename")
        } catch {
            try? FileManager.default.removeItem(atPath: temp)
            throw error
        }
        FileSync.syncDirectory(temp)
        _ = try StoreFiles.publish(temp, at: path)
    }
}
