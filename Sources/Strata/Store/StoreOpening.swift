import CStrataLMDB
import Foundation

/// Opening a store for an app's model: migrate or refuse, collect garbage, bind.
enum StoreOpening {
    static func openModel(environment: Environment, isNewEnvironment: Bool, schema: Schema, plan: MigrationPlan?,
                          configuration: StoreConfiguration) throws -> BoundModel {
        // The common case, in one read transaction: the store is at the app's model, nothing to collect.
        let collects = isNewEnvironment && !configuration.readOnly
        if let model = try environment.read({ txn -> BoundModel? in
            let header = try StoreHeader.read(in: txn, path: environment.path, complete: false)
            guard header.identity.fingerprint == schema.fingerprint, !header.state.migrating,
                  !(collects && !header.catalog.garbage.isEmpty) else { return nil }
            return try header.bind(schema, in: txn)
        }) {
            return model
        }
        let driver = MigrationDriver(environment: environment, schema: schema, plan: plan, configuration: configuration)
        var header = try driver.readHeader()
        let needsWork = header.hasJournal || header.state.migrating || header.identity.fingerprint != schema.fingerprint
        if needsWork {
            // Without a plan, only steps that keep the stored layout (indexes, defaults) run at open.
            // Steps that keep the stored layout (indexes, defaults) always run at open; other steps need a
            // plan, and `migratesAtOpen`.
            let sameLayout = header.identity.hasSameLayout(as: schema)
            let allow = plan == nil ? sameLayout || header.hasJournal : configuration.migration.migratesAtOpen || sameLayout
            try driver.bringUpToDate(allowMigration: allow)
            header = try driver.readHeader()
        }
        if isNewEnvironment && !header.catalog.garbage.isEmpty && !configuration.readOnly {
            try collectGarbage(environment: environment, header: header)
            header = try driver.readHeader()
        }
        return try environment.read { txn in try header.bind(schema, in: txn) }
    }

    /// Deletes the emptied databases of earlier versions. Runs when a process first opens the store, so
    /// no read transaction of this process can still use them.
    static func collectGarbage(environment: Environment, header: StoreHeader) throws {
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
