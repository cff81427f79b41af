import Foundation

/// What opening does once the store's files are open: bring the store to the app's model (migrate it, or
/// refuse), collect the databases earlier versions left, and bind the model to the store's catalog.
enum ModelAtOpen {
    static func bind(environment: Environment, isNewEnvironment: Bool, schema: Schema, plan: MigrationPlan?,
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
            do {
                try driver.bringUpToDate(allowMigration: allow)
            } catch let error as StoreError where error.code == .storeNewerThanModel && configuration.opensNewerAdditiveStores {
                // A newer app's store: opened as it is when every change since this model is additive.
                return try bindOlderModel(environment: environment, schema: schema, refusal: error)
            }
            header = try driver.readHeader()
        }
        if isNewEnvironment && !header.catalog.garbage.isEmpty && !configuration.readOnly {
            try GarbageCollection.collect(environment: environment, header: header)
            header = try driver.readHeader()
        }
        return try environment.read { txn in try header.bind(schema, in: txn) }
    }

    /// Binds an older model to a store a newer model wrote, without changing the store (``Downgrade``); throws
    /// `refusal`, with the reasons, when the changes since are not all additive.
    private static func bindOlderModel(environment: Environment, schema: Schema, refusal: StoreError) throws -> BoundModel {
        try environment.read { txn in
            let header = try StoreHeader.read(in: txn, path: environment.path)
            guard !header.state.migrating, !header.hasJournal else { throw refusal }
            let recorded = try header.recordedSchema(in: txn)
            switch Downgrade.make(older: schema, store: recorded, catalog: header.catalog) {
            case .success(let downgrade):
                return try header.bind(schema, in: txn, downgrade: downgrade)
            case .failure(let why):
                throw StoreError.storeNewerThanModel(store: header.identity.versionIdentifier, app: schema.versionIdentifier,
                                                     notAdditive: why.description)
            }
        }
    }
}
