import Foundation

/// Opens a store: checks its files, creates it when missing, reads its metadata, decides whether it is
/// ready, must be migrated, or cannot be opened, and binds the app's model to it.
struct StoreOpener {
    let configuration: StoreConfiguration
    /// The store's path, standardized once (``Foundation/URL/storePath``).
    let path: String

    init(url: URL, configuration: StoreConfiguration) {
        self.configuration = configuration
        self.path = url.storePath
    }

    /// An open store's environment (one more use of it, which the new handle owns) and the model bound to it.
    struct Opened {
        let environment: Environment
        let model: BoundModel
    }

    func open(schema: Schema, plan: MigrationPlan?) throws -> Opened {
        let environment = try acquireEnvironment(creatingFor: schema, databases: configuration.databases(for: [schema] + (plan?.schemas ?? [])))
        do {
            let model = try StoreOpening(environment: environment.environment, schema: schema, plan: plan, purpose: .open,
                                         configuration: configuration).bind(isNewEnvironment: environment.isNew)
            if !configuration.readOnly {
                try HistorySwitch.apply(configuration.history, environment: environment.environment, meta: model.meta)
            }
            return Opened(environment: environment.environment, model: model)
        } catch {
            environment.environment.release()
            throw error
        }
    }

    func openRecorded() throws -> Opened {
        let environment = try acquireEnvironment(creatingFor: nil, databases: configuration.maximumDatabases * 2)
        do {
            let model = try environment.environment.read { txn -> BoundModel in
                let header = try StoreHeader.read(in: txn, path: path)
                let schema = try header.identifiedRecordedSchema(in: txn)
                return try header.bind(schema, in: txn)
            }
            if !configuration.readOnly {
                try HistorySwitch.apply(configuration.history, environment: environment.environment, meta: model.meta)
            }
            return Opened(environment: environment.environment, model: model)
        } catch {
            environment.environment.release()
            throw error
        }
    }

    private func acquireEnvironment(creatingFor schema: Schema?, databases: Int) throws -> (environment: Environment, isNew: Bool) {
        switch try StoreFiles.inspect(path) {
        case .missing, .emptyDirectory:
            guard configuration.createIfMissing, !configuration.readOnly, let schema else {
                throw StoreError.notFound(path: path)
            }
            try StoreCreation.create(at: path, schema: schema, configuration: configuration)
            _ = try StoreFiles.inspect(path)
        case .existing:
            break
        }
        let acquired = try Environment.acquire(path: path, configuration: configuration.environmentConfiguration(databases: databases))
        do {
            try StoreUnlocking.unlock(acquired.environment, with: configuration.encryption)
        } catch {
            acquired.environment.release()
            throw error
        }
        if acquired.isNew && !configuration.readOnly {
            do {
                // A compacted copy put in place of the store keeps a change log of transaction IDs it restarted.
                try ChangeLog.discardEntriesFromAnotherFile(environment: acquired.environment)
            } catch {
                acquired.environment.release()
                throw error
            }
        }
        return acquired
    }

    /// Runs `body` with the environment of an existing store (never creating one), sized for `schemas`:
    /// for operations on a store that is not opened for use (migrate, explain).
    static func withExistingEnvironment<T>(at url: URL, configuration: StoreConfiguration, schemas: [Schema],
                                           _ body: (Environment, StoreConfiguration) throws -> T) throws -> T {
        var configuration = configuration
        configuration.createIfMissing = false
        let path = url.storePath
        guard case .existing = try StoreFiles.inspect(path) else { throw StoreError.notFound(path: path) }
        let (environment, _) = try Environment.acquire(
            path: path, configuration: configuration.environmentConfiguration(databases: configuration.databases(for: schemas)))
        defer { environment.release() }
        try StoreUnlocking.unlock(environment, with: configuration.encryption)
        return try body(environment, configuration)
    }
}
