import Foundation

/// Strata's metadata as read at open: what wrote the store, the model identity, the state and the catalog.
struct StoreHeader {
    var format: FormatRecord
    var identity: IdentityRecord
    var state: StateRecord
    var catalog: Catalog
    var history: [String]
    var hasJournal: Bool
    let meta: MetaTable

    /// Reads the header, or throws ``StoreError/notAStore(path:reason:)`` when the LMDB environment holds no
    /// Strata metadata, ``StoreError/unsupportedFormat(path:found:supported:)`` for a newer format.
    ///
    /// With `complete` false the history is not read and a journal is assumed exactly when the state says a
    /// migration is in progress (they are written together): the fast path of an open that needs neither.
    static func read(in txn: Transaction, path: String, complete: Bool = true) throws -> StoreHeader {
        guard let dbi = try txn.openDatabase(MetaTable.databaseName, flags: 0, create: false) else {
            throw StoreError.notAStore(path: path, reason: "the LMDB environment holds no Strata metadata")
        }
        let meta = MetaTable(dbi: dbi, path: path)
        guard let format = try meta.read(.format, in: txn, FormatRecord.init(decoding:)) else {
            throw StoreError.notAStore(path: path, reason: "the LMDB environment holds no Strata format record")
        }
        guard format.formatVersion <= FormatRecord.currentVersion else {
            throw StoreError.unsupportedFormat(path: path, found: "\(format.formatVersion) (written by Strata \(format.strataVersion))",
                                               supported: "1 to \(FormatRecord.currentVersion)")
        }
        func required<T>(_ key: MetaKey, _ decode: (UnsafeRawBufferPointer) throws -> T) throws -> T {
            guard let value = try meta.read(key, in: txn, decode) else {
                throw StoreError.corrupted(path: path, reason: .metadata("the \(key.rawValue) record is missing"))
            }
            return value
        }
        let state = try required(.state, StateRecord.init(decoding:))
        return StoreHeader(
            format: format,
            identity: try required(.identity, IdentityRecord.init(decoding:)),
            state: state,
            catalog: try required(.catalog, Catalog.init(decoding:)),
            history: complete ? try meta.read(.history, in: txn, HistoryRecord.decode) ?? [] : [],
            hasJournal: complete ? try meta.get(.journal, in: txn) != nil : state.migrating,
            meta: meta)
    }

    /// The model recorded in the store.
    func recordedSchema(in txn: Transaction) throws -> Schema {
        guard let json = try meta.get(.model, in: txn) else {
            throw StoreError.corrupted(path: meta.path, reason: .metadata("the model record is missing"))
        }
        let data = Data(json)
        if let version = (try? JSONValue.parse(data))?["formatVersion"], case .integer(let v) = version,
           v > Int64(SchemaDocument.formatVersion) {
            throw StoreError.unsupportedFormat(path: meta.path, found: "model JSON format \(v)",
                                               supported: "model JSON format \(SchemaDocument.formatVersion)")
        }
        do {
            return try Schema(jsonData: data)
        } catch {
            throw StoreError.corrupted(path: meta.path, reason: .metadata("the recorded model: \(error)"))
        }
    }

    /// The recorded model, checked against the identity record (both are written together from one model): a
    /// model record that decodes to another model — damaged under a valid checksum — is damaged metadata, not a
    /// model to open the store with. (Its version and entities are compared, not its fingerprint, which a model
    /// JSON written by an older Strata need not reproduce.)
    func identifiedRecordedSchema(in txn: Transaction) throws -> Schema {
        let schema = try recordedSchema(in: txn)
        guard schema.versionIdentifier == identity.versionIdentifier,
              Set(schema.entities.map(\.name)) == Set(identity.entityHashes.keys) else {
            throw StoreError.corrupted(path: meta.path, reason: .metadata("the model record is not the model the identity record describes"))
        }
        return schema
    }

    /// Opens every database the catalog names (in `txn`) and binds `schema` to them.
    func bind(_ schema: Schema, in txn: Transaction) throws -> BoundModel {
        try bind(schema, catalog: catalog, declaredEntities: nil, in: txn)
    }

    /// ``bind(_:in:)``, moving the header's catalog into the bound model instead of copying it (the header is left
    /// with an empty catalog): for a header read only to be bound. A copy of the catalog costs a process's first open
    /// a type look-up for each of its arrays (about 25,000 instructions).
    mutating func bindTakingCatalog(_ schema: Schema, in txn: Transaction) throws -> BoundModel {
        var taken = Catalog()
        swap(&taken, &catalog)
        return try bind(schema, catalog: consume taken, declaredEntities: nil, in: txn)
    }

    /// Opens every database the catalog names (in `txn`) and binds an older model that can open the store as it
    /// is: its model `schema` (with the kept attributes), the catalog translated to its names (`catalog`), and
    /// its entities as it declares them (`declaredEntities`).
    func bind(olderModel schema: Schema, catalog: Catalog, declaredEntities: [String: Entity], in txn: Transaction) throws -> BoundModel {
        try bind(schema, catalog: catalog, declaredEntities: declaredEntities, in: txn)
    }

    /// Binds `schema` with `boundCatalog` (the store's catalog, or for an older model, the catalog translated to
    /// its names, with `declaredEntities` its entities as it declares them). Two functions call this one rather
    /// than one with an optional tuple of the older model's parts: making that tuple's type cost the first open
    /// of a process about 28,000 instructions.
    ///
    /// For the app's model (`declaredEntities` nil) `boundCatalog` is the store's catalog, which the header may no
    /// longer hold (``bindTakingCatalog(_:in:)``); for an older model the store's databases are the header's catalog's.
    private func bind(_ schema: Schema, catalog boundCatalog: consuming Catalog, declaredEntities: [String: Entity]?,
                      in txn: Transaction) throws -> BoundModel {
        var handles: [String: DatabaseHandle] = [:]
        func openListed(_ name: String) throws {
            guard let dbi = try txn.openDatabase(name, flags: BoundModel.databaseFlags(name), create: false) else {
                throw StoreError.corrupted(path: meta.path, reason: .metadata("the database \(name) is missing"))
            }
            handles[name] = dbi
        }
        // Plain loops: no key paths nor concatenated arrays (their first use costs a process's first open).
        func openAll(_ storeCatalog: borrowing Catalog) throws {
            for entry in storeCatalog.entities { try openListed(entry.database) }
            for entry in storeCatalog.relationships { try openListed(entry.database) }
            for entry in storeCatalog.indexes { try openListed(entry.database) }
        }
        if declaredEntities == nil { try openAll(boundCatalog) } else { try openAll(catalog) }
        let maintenance = try MaintenanceRecord.readIfAny(meta, in: txn)
        do {
            // The newer model's app does the store's maintenance; an older one only reads and writes objects.
            // (A key rotation's sweep is maintenance too; only an encrypted store looks for one.)
            let rotating = txn.keyring != nil && (try? meta.get(.keyRotation, in: txn)) != nil
            let maintenanceLeft = maintenance.map { !$0.isEmpty } ?? false
            let needsMaintenance = declaredEntities == nil
                && (maintenanceLeft || !boundCatalog.garbage.isEmpty || boundCatalog.entities.contains { $0.layouts.count > 1 }
                    || rotating)
            return try BoundModel(schema: schema, catalog: consume boundCatalog, generation: state.generation,
                                  meta: meta, handles: handles, buildingIndexes: maintenance?.buildingIndexes ?? [],
                                  needsMaintenance: needsMaintenance,
                                  olderModel: declaredEntities.map { ($0, storeVersion: identity.versionIdentifier) })
        } catch {
            throw StoreError.corrupted(path: meta.path, reason: .metadata(error.reason))
        }
    }
}

/// Writes the metadata of a store for a model (creation and migrations).
enum StoreMetadataWriter {
    static func writeModel(_ schema: Schema, catalog: Catalog, history: [String], generation: UInt64,
                           meta: MetaTable, in txn: Transaction) throws {
        try meta.put(.model, Array(schema.jsonData(prettyPrinted: false)), in: txn)
        try meta.put(.identity, IdentityRecord(schema: schema).encoded(), in: txn)
        try meta.put(.catalog, catalog.encoded(), in: txn)
        try meta.put(.history, HistoryRecord.encode(history), in: txn)
        try meta.put(.state, StateRecord(generation: generation, migrating: false).encoded(), in: txn)
    }

    /// Creates (empty) every database the catalog names.
    static func createDatabases(of catalog: Catalog, in txn: Transaction) throws {
        for name in catalog.entities.map(\.database) + catalog.relationships.map(\.database) + catalog.indexes.map(\.database) {
            _ = try txn.openDatabase(name, flags: BoundModel.databaseFlags(name), create: true)
        }
    }
}
