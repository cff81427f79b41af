import CStrataLMDB
import Foundation

/// One LMDB transaction. Lives inside `Environment.read`/`write` closures only; never shared between
/// threads; every value it returns points into the map and must be decoded or copied before it ends.
@usableFromInline
final class Transaction {
    let pointer: OpaquePointer
    let isWrite: Bool
    unowned let environment: Environment

    // Unchecked: a transaction is used by one thread, and borrowed records check it on every read.
    @usableFromInline @exclusivity(unchecked) private(set) var isFinished = false

    /// This transaction's lease slot (``LeaseSlots``): where values read in place check that it still runs
    /// unchanged. Held from `init` to `deinit`.
    @usableFromInline let leaseSlot: UnsafeMutablePointer<LeaseSlot>
    /// This transaction's serial, unique in the process: what its slot shows until it ends.
    @usableFromInline let serial: UInt64

    /// Changes made so far (puts, deletes, drops): a pointer into the map read before a change may be stale
    /// after it (LMDB's rule for write transactions). Kept in the lease slot alone, so that borrowed values and
    /// this transaction can never disagree about it.
    @usableFromInline var changes: Int {
        @inline(__always) get { leaseSlot.pointee.changes.load(ordering: .relaxed) }
    }

    /// Counts a change (a put, a delete, a drop, through the transaction or one of its cursors). Only this
    /// transaction's thread writes its slot's count, so a load and a store suffice.
    @inline(__always) func noteChange() {
        leaseSlot.pointee.changes.store(changes &+ 1, ordering: .relaxed)
    }
    /// An LMDB call failed in this write transaction: LMDB allows only abort from here.
    private(set) var hasFailed = false
    /// `MDB_MAP_FULL` was returned by a put or by commit: the unit of work is retried after growth.
    private(set) var sawMapFull = false
    /// Databases opened in this transaction: private to it until it commits (LMDB closes them on abort).
    private(set) var openedDatabases: [String: MDB_dbi] = [:]
    /// Databases deleted in this transaction: their handles close when it commits.
    private(set) var deletedDatabases: [String] = []
    /// Whether this transaction holds the environment's database-opening lock.
    var holdsDatabaseLock = false

    private var cursors: [Cursor] = []
    // Unchecked (the three below): a transaction is used by one thread (it is not Sendable), and bulk loops ask
    // for shared cursors once per put, where the runtime's exclusivity checks cost more than the lookup.
    /// Shared cursors by database handle. Not counted: ``cursors`` holds every cursor until the transaction ends,
    /// when the three are cleared together; a put through a shared cursor then touches no reference count.
    @exclusivity(unchecked) private var cachedCursors = DatabaseHandleTable<Unmanaged<Cursor>>()
    @exclusivity(unchecked) private var lastSharedDBI: MDB_dbi = 0
    @exclusivity(unchecked) private var lastSharedCursor: Unmanaged<Cursor>?
    /// Look-up cursors by database handle (``withLookupCursor(_:_:)``), not counted either.
    @exclusivity(unchecked) private var lookupCursors = DatabaseHandleTable<Unmanaged<Cursor>>()

    /// An encrypted store's keyring (nil for an unencrypted store): values of sealed databases are sealed as they
    /// are put (under the current key) and opened as they are read (under the key their marker names), so every
    /// layer above reads and writes plain values. Only the transaction that begins a key rotation changes it.
    var keyring: StoreKeyring?
    /// Each database's ``SealScope`` as this transaction found it (by handle), when the store is encrypted.
    private var sealScopes = DatabaseHandleTable<SealScope?>()
    /// Plain values opened from seals in this transaction: they live, as values in the map do, until it ends.
    private var openedValues = PlaintextArena()

    init(pointer: OpaquePointer, isWrite: Bool, environment: Environment) {
        self.pointer = pointer
        self.isWrite = isWrite
        self.environment = environment
        (leaseSlot, serial) = LeaseSlots.claim()
        self.keyring = environment.keyring
        if isWrite, keyring?.hasPlainValues ?? true, !environment.wrotePlainPages.load(ordering: .relaxed) {
            environment.wrotePlainPages.store(true, ordering: .relaxed)
        }
    }

    deinit {
        freeOpenedValues()
        LeaseSlots.release(leaseSlot)
    }

    // MARK: Sealing

    /// What database `dbi` seals, when the store is encrypted.
    func sealScope(_ dbi: MDB_dbi) -> SealScope? {
        if let known = sealScopes[dbi] { return known }
        let scope = environment.sealScope(dbi, in: self)
        sealScopes[dbi] = scope
        return scope
    }

    /// The plain value of `stored`, read under `key` from `dbi` of an encrypted store: `stored` itself when the
    /// database keeps it in the clear, else the opened seal — or ``SealedValue/unopenable`` when the seal does not
    /// open (the reader of the value reports it as damaged, naming what it is), ``SealedValue/unknownKey`` when it
    /// is sealed under a key epoch this handle has no key for.
    func opened(_ stored: UnsafeRawBufferPointer, dbi: MDB_dbi, key: UnsafeRawBufferPointer, keyring: StoreKeyring) -> UnsafeRawBufferPointer {
        guard let scope = sealScope(dbi), scope.seals(key: key) else { return stored }
        // While the store is being encrypted or decrypted, a value that does not open as a seal is a plain one (its
        // own format and checksum then tell whether it is damaged): a plain value can begin with a seal's marker
        // (a checksum's byte), but it opens under none of the keys.
        guard let epoch = SealedValue.epoch(of: stored) else { return keyring.hasPlainValues ? stored : SealedValue.unopenable }
        guard let cipher = keyring.cipher(epoch: epoch) else { return keyring.hasPlainValues ? stored : SealedValue.unknownKey }
        let plain = openedValues.allocate(stored.count - SealedValue.overhead)
        do {
            try cipher.open(stored, scope: scope, lmdbKey: key, into: plain)
        } catch {
            return keyring.hasPlainValues ? stored : SealedValue.unopenable
        }
        return UnsafeRawBufferPointer(plain)
    }

    /// Runs `body` with the bytes stored for `value` under `key` in `dbi`: with a keyring (an encrypted store), `value`
    /// sealed for that database and key where the database's scope seals it; else `value` itself. The one place a
    /// write chooses between the two (``put(_:key:value:flags:)`` and ``Cursor``'s puts and appends).
    ///
    /// `keyring` is passed rather than read from the transaction so that a cursor's puts use the one it keeps.
    @inline(__always)
    func withStoredForm<R>(of value: UnsafeRawBufferPointer, dbi: MDB_dbi, key: UnsafeRawBufferPointer,
                           keyring: StoreKeyring?, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R {
        if let keyring, let sealed = try sealed(value, dbi: dbi, key: key, keyring: keyring) {
            return try sealed.withUnsafeBytes(body)
        }
        return try body(value)
    }

    /// The bytes to store for `value` under `key` in `dbi` of an encrypted store (nil: store `value` as it is).
    private func sealed(_ value: UnsafeRawBufferPointer, dbi: MDB_dbi, key: UnsafeRawBufferPointer, keyring: StoreKeyring) throws -> [UInt8]? {
        guard let current = keyring.current, let scope = sealScope(dbi), scope.seals(key: key) else { return nil }
        do {
            return try current.seal(value, scope: scope, lmdbKey: key)
        } catch {
            throw StoreError.internalInconsistency("sealing a value failed: \(error)")
        }
    }

    private func freeOpenedValues() {
        openedValues.free()
    }

    /// The index key of `value` in this store: its order-preserving encoding (``IndexKey``), or, in an encrypted
    /// store, a keyed hash of it under the current key.
    @inline(__always)
    func indexKey(_ value: Value) -> [UInt8] {
        if let keyring { return keyring.indexKey(IndexKey.plainEncoding(value), plain: IndexKey.encode(value)) }
        return IndexKey.encode(value)
    }

    /// Every key an index entry of `value` may be stored under: during a key rotation, the hashes under the
    /// retiring keys too (the current key's first).
    func indexKeys(_ value: Value) -> [[UInt8]] {
        if let keyring, keyring.isRotating { return keyring.indexKeys(IndexKey.plainEncoding(value), plain: IndexKey.encode(value)) }
        return [indexKey(value)]
    }

    /// Whether index keys are (or, while the store is being encrypted or decrypted, may be) keyed hashes: they answer
    /// equality only, never ranges.
    var hasHashedIndexKeys: Bool { keyring != nil }
    /// Whether a key change (rotation, encrypting, decrypting) is under way: index entries may be in either form, so
    /// queries scan.
    var isRotatingKeys: Bool { keyring?.isRotating ?? false }

    // MARK: Errors

    @inline(__always)
    func check(_ code: Int32, _ operation: StaticString) throws {
        guard code != 0 else { return }
        throw fail(code, "\(operation)")
    }

    func fail(_ code: Int32, _ operation: String) -> StoreError {
        if isWrite { hasFailed = true }
        if code == MDB_MAP_FULL { sawMapFull = true }
        return StoreError.from(lmdb: code, operation: operation, path: environment.path,
                               mapSize: environment.currentMapSize, ceiling: environment.configuration.maximumMapSize)
    }

    @inline(__always)
    func ensureUsable() throws {
        if isFinished { throw StoreError.transactionEnded }
        if hasFailed { throw fail(MDB_BAD_TXN, "transaction used after an error") }
    }

    // MARK: Point operations

    /// The value stored under `key`, pointing into the map (valid until the next write or the end of the
    /// transaction), or nil.
    func get(_ dbi: MDB_dbi, key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
        try ensureUsable()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = FaultInjection.lmdbFault(.get) ?? mdb_get(pointer, dbi, &k, &v)
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_get")
        let stored = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
        if let keyring { return opened(stored, dbi: dbi, key: key, keyring: keyring) }
        return stored
    }

    /// Stores `value` under `key`. Returns false when the key (or, for dupsort databases, the pair)
    /// exists and `flags` holds `MDB_NOOVERWRITE` or `MDB_NODUPDATA`.
    @discardableResult
    func put(_ dbi: MDB_dbi, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws -> Bool {
        try withStoredForm(of: value, dbi: dbi, key: key, keyring: keyring) { try putStored(dbi, key: key, value: $0, flags: flags) }
    }

    /// Adds a pair to a database with sorted duplicates: appended when it sorts after every pair (entries made in key
    /// order, as new objects' links and a migration's associations are: LMDB checks the order, answers KEYEXIST
    /// otherwise, and an append skips the search), else by an ordinary put. Returns false when the pair exists.
    @discardableResult
    func addDuplicate(_ dbi: MDB_dbi, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> Bool {
        if try withSharedCursor(dbi, { try $0.put(key: key, value: value, flags: LMDBFlags.append | LMDBFlags.appendDup) }) { return true }
        return try put(dbi, key: key, value: value, flags: LMDBFlags.noDupData)
    }

    @inline(__always)
    private func putStored(_ dbi: MDB_dbi, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32) throws -> Bool {
        try ensureUsable()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        noteChange()
        let rc = FaultInjection.lmdbFault(.put) ?? mdb_put(pointer, dbi, &k, &v, flags)
        if rc == MDB_KEYEXIST { return false }
        try check(rc, "mdb_put")
        return true
    }

    /// Deletes `key` (or one duplicate `value` of it). Returns false when there was nothing to delete.
    @discardableResult
    func delete(_ dbi: MDB_dbi, key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer? = nil) throws -> Bool {
        try ensureUsable()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc: Int32
        if let value {
            var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            noteChange()
            rc = FaultInjection.lmdbFault(.delete) ?? mdb_del(pointer, dbi, &k, &v)
        } else {
            noteChange()
            rc = FaultInjection.lmdbFault(.delete) ?? mdb_del(pointer, dbi, &k, nil)
        }
        if rc == MDB_NOTFOUND { return false }
        try check(rc, "mdb_del")
        return true
    }

    /// Empties a database (`delete: false`) or deletes it and closes its handle at commit (`delete: true`).
    func drop(_ dbi: MDB_dbi, delete: Bool) throws {
        try ensureUsable()
        noteChange()
        let rc = FaultInjection.lmdbFault(.drop) ?? mdb_drop(pointer, dbi, delete ? 1 : 0)
        try check(rc, "mdb_drop")
    }

    /// The number of entries (keys, counting duplicates) in a database, in constant time.
    func entryCount(_ dbi: MDB_dbi) throws -> Int {
        try ensureUsable()
        var stat = MDB_stat()
        try check(mdb_stat(pointer, dbi, &stat), "mdb_stat")
        return stat.ms_entries
    }

    /// Page statistics of a database.
    func statistics(_ dbi: MDB_dbi) throws -> MDB_stat {
        try ensureUsable()
        var stat = MDB_stat()
        try check(mdb_stat(pointer, dbi, &stat), "mdb_stat")
        return stat
    }

    /// Opens (or with `create`, creates) a named database. Returns nil when it does not exist.
    func openDatabase(_ name: String, flags: UInt32, create: Bool) throws -> MDB_dbi? {
        try ensureUsable()
        return try environment.openDatabase(name, flags: flags, create: create, in: self)
    }

    func noteOpened(_ name: String, _ dbi: MDB_dbi) { openedDatabases[name] = dbi }

    /// Deletes a named database; its handle closes when this transaction commits.
    func deleteDatabase(_ name: String, _ dbi: MDB_dbi) throws {
        try drop(dbi, delete: true)
        deletedDatabases.append(name)
        openedDatabases[name] = nil
    }

    // MARK: Cursors

    /// A new cursor on `dbi`, closed when the transaction ends.
    func cursor(_ dbi: MDB_dbi) throws -> Cursor {
        try ensureUsable()
        var c: OpaquePointer?
        try check(mdb_cursor_open(pointer, dbi, &c), "mdb_cursor_open")
        guard let c else { throw fail(EINVAL, "mdb_cursor_open") }
        let cursor = Cursor(pointer: c, transaction: self, dbi: dbi)
        cursors.append(cursor)
        return cursor
    }

    /// Runs `body` with this transaction's look-up cursor on `dbi`, for point look-ups only (``Cursor/contains(_:)``,
    /// ``Cursor/find(_:)``, ``Cursor/first()``; never a walk): apart from the shared cursor, which loops walk and append through, so that a look-up
    /// never moves a walk. It stays where the last look-up left it, and LMDB answers a key on the page a cursor is
    /// on without descending the tree again (`mdb_get` descends from the root each time): look-ups in key order —
    /// a pass checking that the objects it links exist — cost one page's search. `body` must not keep the cursor.
    @inline(__always)
    func withLookupCursor<R>(_ dbi: MDB_dbi, _ body: (Cursor) throws -> R) throws -> R {
        if let cursor = lookupCursors[dbi], !cursor._withUnsafeGuaranteedRef({ $0.isClosed }) {
            return try cursor._withUnsafeGuaranteedRef(body)
        }
        let c = try cursor(dbi)
        lookupCursors[dbi] = Unmanaged.passUnretained(c)
        return try body(c)
    }

    /// A cursor on `dbi` shared by point operations of this transaction (appends, lookups).
    func sharedCursor(_ dbi: MDB_dbi) throws -> Cursor {
        try withSharedCursor(dbi) { $0 }
    }

    /// Runs `body` with the cursor on `dbi` shared by point operations of this transaction, without counting a
    /// reference to it (bulk loops put through it once per record). `body` must not keep the cursor.
    @inline(__always)
    func withSharedCursor<R>(_ dbi: MDB_dbi, _ body: (Cursor) throws -> R) throws -> R {
        // Bulk loops ask for the same database's cursor once per record: answer that without a lookup.
        if lastSharedDBI == dbi, let shared = lastSharedCursor, !shared._withUnsafeGuaranteedRef({ $0.isClosed }) {
            return try shared._withUnsafeGuaranteedRef(body)
        }
        if let shared = cachedCursors[dbi], !shared._withUnsafeGuaranteedRef({ $0.isClosed }) {
            lastSharedDBI = dbi
            lastSharedCursor = shared
            return try shared._withUnsafeGuaranteedRef(body)
        }
        let c = try cursor(dbi)
        let shared = Unmanaged.passUnretained(c)
        cachedCursors[dbi] = shared
        lastSharedDBI = dbi
        lastSharedCursor = shared
        return try body(c)
    }

    // MARK: Ending

    /// Commits. LMDB frees the transaction whatever the outcome, so it is never aborted afterwards.
    func commit() throws {
        try ensureUsable()
        endCursors()
        finish()
        let rc: Int32
        // Injected failures hit write transactions: LMDB's commit of a read-only transaction cannot fail.
        if isWrite, let injected = FaultInjection.lmdbFault(.commit) {
            // The real commit does not run: free the transaction as LMDB's failed commit would.
            mdb_txn_abort(pointer)
            rc = injected
        } else {
            rc = mdb_txn_commit(pointer)
        }
        environment.transactionEnded(self, committed: rc == 0)
        if rc != 0 { throw fail(rc, "mdb_txn_commit") }
    }

    /// Aborts, unless the transaction already ended.
    func abort() {
        guard !isFinished else { return }
        endCursors()
        finish()
        mdb_txn_abort(pointer)
        environment.transactionEnded(self, committed: false)
    }

    /// For read transactions returned to the pool: closes cursors and resets instead of aborting.
    func reset() {
        guard !isFinished else { return }
        endCursors()
        finish()
        mdb_txn_reset(pointer)
        environment.transactionEnded(self, committed: false)
    }

    /// Marks the transaction ended, here and in its lease slot.
    private func finish() {
        isFinished = true
        LeaseSlots.end(leaseSlot)
    }

    private func endCursors() {
        if !openedValues.isEmpty { freeOpenedValues() }
        for c in cursors { c.transactionEnding(closeExplicitly: !isWrite) }
        cursors.removeAll()
        cachedCursors.removeAll()
        lookupCursors.removeAll()
        lastSharedCursor = nil
    }

}

extension Transaction {
    /// LMDB's ID of this transaction: a write transaction's is one more than the last committed one's; a read
    /// transaction's is that of the snapshot it reads.
    var id: UInt64 { UInt64(mdb_txn_id(pointer)) }
}

extension Transaction {
    /// Whether a database handle is valid in this transaction: a handle opened (by this process) for a
    /// database created after this read transaction's snapshot is not, and LMDB refuses cursors on it.
    func sees(_ dbi: MDB_dbi) -> Bool {
        var flags: UInt32 = 0
        return mdb_dbi_flags(pointer, dbi, &flags) == 0
    }
}
