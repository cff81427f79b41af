import Foundation

/// What a store records that decides how it opens: read in one transaction before anything is written.
struct StoreFacts {
    var identity: IdentityRecord
    /// The versions the store has been at, oldest first.
    var history: [String]
    /// The state record's flag: a migration began and has not switched or rolled back.
    var migrating: Bool
    /// The checkpoint of a migration step in progress.
    var journal: MigrationJournal?
    var catalog: Catalog
    /// The model recorded in the store (decoded only when a decision needs it: to open as an older model).
    var recordedSchema: () throws -> Schema
}

/// What the app brings to an open, a migration or a question about one.
struct OpenRequest {
    enum Purpose {
        /// `Store.open`: may open a newer store as an older model when every change since is additive.
        case open
        /// `Store.migrate`, ``Migrator``: migrates whatever ``MigrationOptions/migratesAtOpen`` says.
        case migrate
    }

    var schema: Schema
    var plan: MigrationPlan?
    var purpose: Purpose
    var readOnly: Bool
    /// ``MigrationOptions/migratesAtOpen`` (for an open with a plan).
    var migratesAtOpen: Bool
    var opensNewerAdditiveStores: Bool
    /// Whether this process holds the store's migration lock (a step in progress is decided after trying to
    /// take it: only the holder resumes or rolls back).
    var holdsMigrationLock: Bool = false
}

/// What opening — or migrating — a store must do next, decided from what the store records and what the app
/// brings, without touching the store: a pure function (`OpenDecisionTests` exercise it without LMDB).
/// ``StoreOpening`` executes a decision, reads the store again, and decides again, until the store can be bound.
///
/// Every error it decides on names the store's real version and the app's, as the store records them.
enum OpenDecision {
    /// The store is at the app's model: bind it.
    case current
    /// Another process migrates the store and this app's model is the store's (source) model: open and read
    /// while the migration writes only its staging databases.
    case readDuringMigration
    /// Another process holds the migration lock: wait for it, then decide again (or throw `otherwise`, a
    /// ``StoreError/Code-swift.struct/migrationInProgress`` that names the step, when not waiting).
    case waitForMigration(otherwise: StoreError)
    /// The state says migrating but no journal exists: clear the flag, then decide again.
    case clearMigratingFlag
    /// Resume the interrupted step to `destination`, then decide again.
    case resume(MigrationJournal, destination: Schema)
    /// Roll the interrupted step back (the app no longer leads to its destination), then decide again.
    case rollBack(MigrationJournal)
    /// Run these steps, each from the store's model at the time (the first from the recorded model).
    case migrate([Schema])
    /// Bind the app's older model to the store as it is (``Downgrade``): every change since is additive.
    case openAsOlder(Downgrade)
    /// Refuse, with a typed error; the store is untouched.
    case refuse(any Error)

    /// The decision for `store` and `request`.
    static func decide(_ store: StoreFacts, _ request: OpenRequest) -> OpenDecision {
        let schema = request.schema
        let sameLayout = store.identity.hasSameLayout(as: schema)
        if store.journal != nil || store.migrating {
            let switched = store.journal?.currentTask == .didMigrate
            // A handle with the model the store is at reads it during another process's migration.
            let readsSource = store.identity.fingerprint == schema.fingerprint && !switched
            if request.readOnly || !request.holdsMigrationLock {
                if readsSource { return .readDuringMigration }
                if request.readOnly { return .refuse(inProgress(store, request)) }
                return .waitForMigration(otherwise: inProgress(store, request))
            }
            guard let journal = store.journal else { return .clearMigratingFlag }
            // Without a plan, an interrupted step may always finish (to the app's model); with one, only when
            // the options allow migrating or the layout stays.
            let allowed = request.purpose == .migrate || request.plan == nil || request.migratesAtOpen || sameLayout
            return decideInterrupted(journal, request, allowed: allowed)
        }
        let allowed = request.purpose == .migrate || (request.plan == nil ? sameLayout : request.migratesAtOpen || sameLayout)
        do {
            switch try route(store, request) {
            case .upToDate:
                return .current
            case .migrate(let targets):
                guard allowed, !request.readOnly else {
                    return .refuse(StoreError.migrationRequired(from: store.identity.versionIdentifier, to: schema.versionIdentifier))
                }
                return .migrate(targets)
            }
        } catch let error as StoreError where error.code == .storeNewerThanModel
                    && request.purpose == .open && request.opensNewerAdditiveStores {
            // A newer app's store: opened as it is when every change since this model is additive.
            let recorded: Schema
            do { recorded = try store.recordedSchema() } catch { return .refuse(error) }
            switch Downgrade.make(older: schema, store: recorded, catalog: store.catalog) {
            case .success(let downgrade):
                return .openAsOlder(downgrade)
            case .failure(let why):
                return .refuse(StoreError.storeNewerThanModel(store: store.identity.versionIdentifier, app: schema.versionIdentifier,
                                                              notAdditive: why.description))
            }
        } catch {
            return .refuse(error)
        }
    }

    /// The error for a migration another process runs: where the store is (the step's source until it switches,
    /// its destination after) and the app's model.
    static func inProgress(_ store: StoreFacts, _ request: OpenRequest) -> StoreError {
        let app = request.schema.versionIdentifier
        let readOnly = request.readOnly
        guard let journal = store.journal else {
            return StoreError.migrationInProgress(ownerPID: nil, source: store.identity.versionIdentifier, destination: nil, app: app,
                                                  readOnly: readOnly)
        }
        if journal.currentTask == .didMigrate {
            return StoreError.migrationInProgress(ownerPID: journal.ownerPID, source: journal.destinationVersion, destination: nil,
                                                  app: app, readOnly: readOnly)
        }
        return StoreError.migrationInProgress(ownerPID: journal.ownerPID, source: journal.sourceVersion,
                                              destination: journal.destinationVersion, app: app, readOnly: readOnly)
    }

    /// An interrupted step: resumed when the app leads to its destination (and has its stage), otherwise
    /// rolled back — unless only its `didMigrate` is left, which cannot be undone.
    private static func decideInterrupted(_ journal: MigrationJournal, _ request: OpenRequest, allowed: Bool) -> OpenDecision {
        let schema = request.schema
        let stage = request.plan?.stage(from: journal.sourceVersion, to: journal.destinationVersion)
        let destination: Schema? = request.plan?.schema(journal.destinationVersion).flatMap { $0.fingerprint.hex == journal.destinationFingerprint ? $0 : nil }
            ?? (schema.fingerprint.hex == journal.destinationFingerprint ? schema : nil)
        let switched = journal.currentTask == .didMigrate
        let continuable = destination != nil && (!journal.hasStage || stage != nil)
        // Errors name where the store really is (the step's destination once it switched, its source before) and
        // the app's model, not the step's ends.
        let pending = StoreError.didMigratePending(store: journal.destinationVersion, from: journal.sourceVersion, app: schema.versionIdentifier)
        if continuable && !allowed {
            // The app will migrate later (migratesAtOpen off): keep the work done so far.
            return .refuse(switched ? pending : StoreError.migrationRequired(from: journal.sourceVersion, to: schema.versionIdentifier))
        }
        guard continuable, let destination else {
            // Only didMigrate remains; without its stage the step cannot finish here.
            if switched { return .refuse(pending) }
            return .rollBack(journal)
        }
        return .resume(journal, destination: destination)
    }

    /// Where a store with no step in progress stands relative to the app's model.
    enum Route {
        case upToDate
        /// Steps to run; the first from the store's recorded model.
        case migrate([Schema])
    }

    /// The route from the store's model to the app's, or the error that says there is none.
    static func route(_ store: StoreFacts, _ request: OpenRequest) throws -> Route {
        let identity = store.identity
        let schema = request.schema
        if identity.fingerprint == schema.fingerprint { return .upToDate }
        if identity.hasSameLayout(as: schema) {
            // Only indexes, uniqueness or defaults differ: an inferred step that changes metadata and indexes.
            if identity.versionIdentifier != schema.versionIdentifier,
               request.plan?.schema(identity.versionIdentifier) == nil, isNewer(identity.versionIdentifier, store, request) {
                throw StoreError.storeNewerThanModel(store: identity.versionIdentifier, app: schema.versionIdentifier)
            }
            return .migrate([schema])
        }
        guard let plan = request.plan else {
            if isNewer(identity.versionIdentifier, store, request) {
                throw StoreError.storeNewerThanModel(store: identity.versionIdentifier, app: schema.versionIdentifier)
            }
            if identity.versionIdentifier == schema.versionIdentifier { throw StoreError.schemaMismatch(version: schema.versionIdentifier) }
            throw StoreError.migrationRequired(from: identity.versionIdentifier, to: schema.versionIdentifier)
        }
        guard plan.currentSchema.fingerprint == schema.fingerprint else {
            throw MigrationError.noRoute(from: identity.versionIdentifier, to: schema.versionIdentifier)
        }
        if let known = plan.schema(withHashes: identity.entityHashes) {
            let route = plan.route(from: known.versionIdentifier)
            guard route.last == schema.versionIdentifier else {
                throw MigrationError.noRoute(from: known.versionIdentifier, to: schema.versionIdentifier)
            }
            return .migrate(route.dropFirst().compactMap { plan.schema($0) })
        }
        if plan.schema(identity.versionIdentifier) != nil {
            throw StoreError.schemaMismatch(version: identity.versionIdentifier)
        }
        if isNewer(identity.versionIdentifier, store, request) {
            throw StoreError.storeNewerThanModel(store: identity.versionIdentifier, app: schema.versionIdentifier)
        }
        // A version the app no longer knows: infer from the model recorded in the store.
        return .migrate([schema])
    }

    /// Whether the store's version is newer than the app's: the store went through the app's version
    /// already, or (for a version the app does not know) its identifier sorts after the app's newest.
    private static func isNewer(_ storeVersion: String, _ store: StoreFacts, _ request: OpenRequest) -> Bool {
        let schema = request.schema
        guard storeVersion != schema.versionIdentifier else { return false }
        if store.history.dropLast().contains(schema.versionIdentifier) { return true }
        if request.plan?.schema(storeVersion) == nil,
           storeVersion.compare(schema.versionIdentifier, options: [.numeric]) == .orderedDescending {
            return true
        }
        return false
    }
}
