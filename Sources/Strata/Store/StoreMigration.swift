import Foundation

extension Store {
    /// Migrates the store at `url` along `plan` to the plan's current schema, without keeping it open:
    /// for apps that open with ``MigrationOptions/migratesAtOpen`` off and migrate on a background task
    /// with their own progress UI (``MigrationOptions/progress``).
    ///
    /// - Returns: the number of steps run (0 when the store was up to date).
    /// - Throws: ``MigrationError`` or ``StoreError``; see ``MigrationError`` for the state the store is
    ///   left in.
    @discardableResult
    public static func migrate(at url: URL, plan: MigrationPlan, configuration: StoreConfiguration = StoreConfiguration()) throws -> Int {
        try migrate(at: url, schema: plan.currentSchema, plan: plan, configuration: configuration)
    }

    /// Migrates the store at `url` to `schema` — along `plan` when given, otherwise by inference from the
    /// model recorded in the store (what `strata migrate --to MODEL.json` does).
    @discardableResult
    public static func migrate(at url: URL, schema: Schema, plan: MigrationPlan? = nil,
                               configuration: StoreConfiguration = StoreConfiguration()) throws -> Int {
        let effectivePlan = try plan ?? MigrationPlan(schemas: [schema])
        return try StoreOpener.withExistingEnvironment(at: url, configuration: configuration, schemas: [schema] + effectivePlan.schemas) { environment, configuration in
            try StoreOpening(environment: environment, schema: schema, plan: effectivePlan, purpose: .migrate,
                             configuration: configuration).bringUpToDate().steps
        }
    }

    /// Whether the store at `url` needs a migration to reach `plan`'s current schema, without changing it.
    public static func requiresMigration(at url: URL, plan: MigrationPlan, configuration: StoreConfiguration = StoreConfiguration()) throws -> Bool {
        try migrationRoute(at: url, schema: plan.currentSchema, plan: plan, configuration: configuration).count > 1
    }

    /// The versions the store at `url` would go through to reach `schema` (its own version first).
    /// Writes nothing.
    public static func migrationRoute(at url: URL, schema: Schema, plan: MigrationPlan?,
                                      configuration: StoreConfiguration = StoreConfiguration()) throws -> [String] {
        let effectivePlan = try plan ?? MigrationPlan(schemas: [schema])
        return try StoreOpener.withExistingEnvironment(at: url, configuration: configuration, schemas: [schema] + effectivePlan.schemas) { environment, configuration in
            let opening = StoreOpening(environment: environment, schema: schema, plan: effectivePlan, purpose: .migrate,
                                       configuration: configuration)
            let (header, route) = try opening.route()
            switch route {
            case .upToDate: return [header.identity.versionIdentifier]
            case .migrate(let targets): return [header.identity.versionIdentifier] + targets.map(\.versionIdentifier)
            }
        }
    }
}
