import Foundation

/// How a store is opened.
///
/// The defaults suit an app's store: created when missing, a map that starts at 1 GiB of address space
/// and grows by itself up to 1 TiB, LMDB's full durability (every commit is on disk when it returns).
public struct StoreConfiguration: Sendable {
    /// Creates the store when nothing exists at the path (or the directory is empty). Default true.
    public var createIfMissing: Bool = true
    /// Opens the store read-only: writes and migrations throw ``StoreError/readOnly``.
    public var readOnly: Bool = false
    /// The address space mapped at first (it is not memory used); the store grows it as it fills.
    public var initialMapSize: Int = 1 << 30
    /// The largest the store may grow; past it writes throw ``StoreError/mapFull(mapSize:ceiling:)``.
    public var maximumMapSize: Int = 1 << 40
    /// LMDB's reader table size. Read transactions beyond it wait for a slot.
    public var maximumReaders: Int = 510
    /// The fewest LMDB databases (entities, relationships, indexes, and their staging copies during a
    /// migration) the store can hold; raised to fit the models a store is opened or migrated with.
    /// LMDB allocates per-transaction tables of this size, so a small number keeps transactions cheap.
    public var maximumDatabases: Int = 128
    /// How long growing the map waits for this process's open read transactions to end.
    public var mapGrowthWaitSeconds: Double = 10
    /// How migrations run when the store's model differs from the app's.
    public var migration: MigrationOptions = MigrationOptions()
    /// Whether an open handle runs the store's maintenance in the background: records that metadata-only
    /// migrations left in older layouts are rewritten into the current layout, new indexes built, retired
    /// databases emptied — in short write transactions that yield to the app's writers. Default true; tools
    /// that only inspect a store turn it off (``Store/performMaintenance(batchSize:progress:)`` runs the same work
    /// on demand).
    public var backgroundMaintenance: Bool = true
    /// Whether the app's model may open a store a *newer* model wrote, as it is, when every change since the
    /// app's model is additive (see ``Store/downgradedFrom``). Default true; false refuses every newer store
    /// with ``StoreError/Code-swift.struct/storeNewerThanModel``, as Core Data and Realm do.
    public var opensNewerAdditiveStores: Bool = true
    /// Whether the store keeps a change history (<doc:ChangeHistory>): ``HistorySetting/asRecorded`` (the default)
    /// follows what the store records — a new store keeps none; ``HistorySetting/enabled(_:)`` turns it on (or
    /// changes its retention) and ``HistorySetting/disabled`` turns it off, for every handle and process from
    /// this open on. A read-only handle follows the store.
    public var history: HistorySetting = .asRecorded
    /// The author this handle's writes are recorded under in the change history, when a write names none
    /// (``Store/write(author:_:)``): a widget or an extension opens its handle with its own name.
    public var historyAuthor: String? = nil
    /// How the handle notices other processes' commits while it is observed (for Strata's tests: the
    /// portable poll runs on Linux too, so the code Apple platforms share is tested here).
    @_spi(Testing) public var fileWatching: FileWatching = .native
    /// The key that encrypts the store at rest (<doc:Encryption>), or nil (the default) for an unencrypted store.
    /// A store created with a key is encrypted, and every later open must give the same key: without one it
    /// throws ``StoreError/Code-swift.struct/encryptionKeyRequired``, with another
    /// ``StoreError/Code-swift.struct/wrongEncryptionKey``. A key given for an unencrypted store throws
    /// ``StoreError/Code-swift.struct/storeNotEncrypted``. Strata never stores the key.
    public var encryption: StoreEncryption? = nil

    public init() {}

    /// The default configuration with other migration options.
    public init(migration: MigrationOptions) {
        self.migration = migration
    }

    /// The databases needed for `schemas`: each entity, relationship and index may exist live, staged and
    /// retired at once during a migration.
    func databases(for schemas: [Schema]) -> Int {
        schemas.reduce(max(maximumDatabases, 16)) { max($0, databases(for: $1)) }
    }

    /// ``databases(for:)`` of one model (an open without a plan: no array of models is made).
    func databases(for schema: Schema) -> Int {
        var count = 0
        for entity in schema.entities {
            count += 1 + entity.relationships.count
            for attribute in entity.attributes where attribute.isIndexed { count += 1 }
        }
        return max(maximumDatabases, 3 * count + 16)
    }

    func environmentConfiguration(databases: Int) -> EnvironmentConfiguration {
        EnvironmentConfiguration(
            initialMapSize: initialMapSize,
            maximumMapSize: max(maximumMapSize, 1 << 20),
            maximumReaders: max(maximumReaders, 16),
            maximumDatabases: databases,
            readOnly: readOnly,
            growthWaitSeconds: mapGrowthWaitSeconds,
            fileWatching: fileWatching)
    }
}
