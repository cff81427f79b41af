import CStrataLMDB
import CStrataSupport
import Foundation

/// A key and value pointing into the map; valid until the next write or the end of the transaction.
typealias Entry = (key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)

/// An LMDB cursor, owned by its transaction and closed when the transaction ends.
final class Cursor {
    private let pointer: OpaquePointer
    /// Not counted: a cursor is owned by its transaction and closed (``isClosed``) when the transaction ends, and
    /// every use of the transaction below comes after that check (each use borrows it: no reference is counted).
    private let transactionReference: Unmanaged<Transaction>
    private var transaction: Transaction { transactionReference.takeUnretainedValue() }
    private(set) var isClosed = false
    /// The database's handle, and the store's keyring when it is encrypted (values are then opened and sealed
    /// through the transaction, see ``Transaction/opened(_:dbi:key:keyring:)``).
    private let dbi: MDB_dbi
    private let keyring: StoreKeyring?
    /// Whether values are sealed and opened through the keyring (tested without touching its reference).
    private let hasKeyring: Bool
    /// The key epoch the value of the last entry read was sealed under (0: not sealed, read as it is).
    private(set) var lastEpoch: UInt8 = 0

    init(pointer: OpaquePointer, transaction: Transaction, dbi: MDB_dbi) {
        self.pointer = pointer
        self.transactionReference = Unmanaged.passUnretained(transaction)
        self.dbi = dbi
        self.keyring = transaction.keyring
        self.hasKeyring = transaction.keyring != nil
    }

    /// Called by the transaction as it ends. Write transactions free their cursors themselves;
    /// read transactions' cursors must be closed explicitly.
    func transactionEnding(closeExplicitly: Bool) {
        guard !isClosed else { return }
        if closeExplicitly { mdb_cursor_close(pointer) }
        isClosed = true
    }

    @inline(__always)
    private func move(_ op: MDB_cursor_op, key: UnsafeRawBufferPointer? = nil, value: UnsafeRawBufferPointer? = nil) throws -> Entry? {
        if isClosed { throw StoreError.transactionEnded }
        var k = MDB_val(mv_size: key?.count ?? 0, mv_data: key.flatMap { UnsafeMutableRawPointer(mutating: $0.baseAddress) })
        var v = MDB_val(mv_size: value?.count ?? 0, mv_data: value.flatMap { UnsafeMutableRawPointer(mutating: $0.baseAddress) })
        let rc = FaultInjection.lmdbFault(.cursorGet) ?? mdb_cursor_get(pointer, &k, &v, op)
        if rc == MDB_NOTFOUND { return nil }
        if rc != 0 { throw transaction.fail(rc, "mdb_cursor_get") }
        let storedKey = UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size)
        let stored = UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size)
        if hasKeyring {
            let value = transaction.opened(stored, dbi: dbi, key: storedKey, keyring: keyring!)
            // Read as it is (clear, or plain while the store is being encrypted or decrypted): no epoch.
            lastEpoch = value.baseAddress == stored.baseAddress ? 0 : SealedValue.epoch(of: stored) ?? 0
            return (storedKey, value)
        }
        return (storedKey, stored)
    }

    /// An entry a walk in key order reached (``first()``, ``next()``, ``seek(_:)``), with the entry that most likely
    /// follows it asked of the CPU, so that its bytes arrive while the caller reads this one. LMDB puts each node it
    /// adds to a page just below the one added before: records written in key order lie one below the other, and the
    /// next one's key is most often within 264 bytes below this one's. A hint: a wrong guess (the last entry of a
    /// page, records written out of order) costs nothing, and a prefetch never faults.
    @inline(__always)
    private func walkingForward(_ entry: Entry?) -> Entry? {
        if let key = entry?.key.baseAddress {
            strata_prefetch(key - 72); strata_prefetch(key - 136); strata_prefetch(key - 200); strata_prefetch(key - 264)
        }
        return entry
    }

    func first() throws -> Entry? { walkingForward(try move(MDB_FIRST)) }
    func last() throws -> Entry? { try move(MDB_LAST) }
    func next() throws -> Entry? { walkingForward(try move(MDB_NEXT)) }
    func previous() throws -> Entry? { try move(MDB_PREV) }
    func current() throws -> Entry? { try move(MDB_GET_CURRENT) }
    /// Positions at `key` exactly.
    func find(_ key: UnsafeRawBufferPointer) throws -> Entry? { try move(MDB_SET_KEY, key: key) }
    /// Positions at `key` exactly, if it is there; the value is not opened (an encrypted store's stays sealed).
    func contains(_ key: UnsafeRawBufferPointer) throws -> Bool {
        if isClosed { throw StoreError.transactionEnded }
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val()
        let rc = FaultInjection.lmdbFault(.cursorGet) ?? mdb_cursor_get(pointer, &k, &v, MDB_SET)
        if rc == MDB_NOTFOUND { return false }
        if rc != 0 { throw transaction.fail(rc, "mdb_cursor_get") }
        return true
    }
    /// Positions at the first key greater than or equal to `key`.
    func seek(_ key: UnsafeRawBufferPointer) throws -> Entry? { walkingForward(try move(MDB_SET_RANGE, key: key)) }
    /// Dupsort: the next value of the current key.
    func nextDuplicate() throws -> Entry? { try move(MDB_NEXT_DUP) }
    /// Dupsort: the first value of the next key.
    func nextKey() throws -> Entry? { try move(MDB_NEXT_NODUP) }
    /// Dupsort: positions at the exact key and value.
    func find(_ key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> Entry? {
        try move(MDB_GET_BOTH, key: key, value: value)
    }

    /// Dupsort: the number of values of the current key.
    func duplicateCount() throws -> Int {
        if isClosed { throw StoreError.transactionEnded }
        var count: Int = 0
        let rc = mdb_cursor_count(pointer, &count)
        if rc != 0 { throw transaction.fail(rc, "mdb_cursor_count") }
        return count
    }

    /// Stores a value. Returns false when `MDB_NOOVERWRITE`/`MDB_NODUPDATA` found it present, or when
    /// `MDB_APPEND` was asked for a key that is not the greatest.
    @discardableResult
    func put(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32 = 0) throws -> Bool {
        if isClosed { throw StoreError.transactionEnded }
        return try withStoredForm(of: value, key: key) { try putStored(key: key, value: $0, flags: flags) }
    }

    /// Appends a value under a key greater than every key of the database (not one with sorted duplicates), as
    /// `put(key:value:flags: MDB_APPEND)` does, and prepares the cache lines the next append will write.
    /// Returns false, writing nothing, when the key is not the greatest.
    ///
    /// LMDB places each node of a page just below the one before, so an append that fills a page writes lines
    /// that are not in the cache: the first atomic instruction after the put (a reference count) waits for
    /// those stores to reach the cache. The space is reserved (`MDB_RESERVE`), which gives its address, and the
    /// value copied into it; the lines below it, where the next node goes, are prefetched for writing.
    @discardableResult
    func append(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> Bool {
        if isClosed { throw StoreError.transactionEnded }
        return try withStoredForm(of: value, key: key) { try reserveAndCopy(key: key, value: $0) }
    }

    /// Runs `body` with the bytes that are stored for `value` under `key` (``Transaction/withStoredForm(of:dbi:key:keyring:_:)``).
    @inline(__always)
    private func withStoredForm(of value: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer,
                                _ body: (UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        // Compared first: a clear store's puts do not reach the transaction.
        guard hasKeyring else { return try body(value) }
        return try transaction.withStoredForm(of: value, dbi: dbi, key: key, keyring: keyring, body)
    }

    @inline(__always)
    private func reserveAndCopy(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> Bool {
        try prepareToWrite()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: nil)
        let rc = FaultInjection.lmdbFault(.cursorPut) ?? mdb_cursor_put(pointer, &k, &v, LMDBFlags.append | LMDBFlags.reserve)
        if rc == MDB_KEYEXIST { return false }
        if rc != 0 { throw transaction.fail(rc, "mdb_cursor_put") }
        // The reservation is written before anything can fail: no entry is left half written.
        guard let space = v.mv_data else { throw transaction.fail(MDB_BAD_TXN, "mdb_cursor_put reserved no space") }
        if let source = value.baseAddress { space.copyMemory(from: source, byteCount: value.count) }
        // The next node (its header, key and value) ends where this one's header begins; for a value too large for
        // a page, in pages of its own, the hint is wasted and harmless: a prefetch never faults.
        let node = space - 8 - key.count
        strata_prefetch_write(node - 64)
        strata_prefetch_write(node - 128)
        strata_prefetch_write(node - 192)
        return true
    }

    /// Writes the current entry again as it is stored, byte for byte (no sealing): LMDB copies its page into a
    /// new buffer first. Not for databases with sorted duplicates.
    func rewriteCurrentAsStored() throws {
        if isClosed { throw StoreError.transactionEnded }
        var k = MDB_val()
        var v = MDB_val()
        let rc = mdb_cursor_get(pointer, &k, &v, MDB_GET_CURRENT)
        if rc != 0 { throw transaction.fail(rc, "mdb_cursor_get") }
        // Copied out: the put touches the page the value points into.
        let key = Array(UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size))
        let value = Array(UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
        try key.withUnsafeBytes { kb in
            try value.withUnsafeBytes { vb in _ = try putStored(key: kb, value: vb, flags: LMDBFlags.current) }
        }
    }

    @inline(__always)
    private func putStored(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer, flags: UInt32) throws -> Bool {
        if isClosed { throw StoreError.transactionEnded }
        try prepareToWrite()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        let rc = FaultInjection.lmdbFault(.cursorPut) ?? mdb_cursor_put(pointer, &k, &v, flags)
        if rc == MDB_KEYEXIST { return false }
        if rc != 0 { throw transaction.fail(rc, "mdb_cursor_put") }
        return true
    }

    /// Checks that the transaction can still write and notes that it changed the store.
    @inline(__always)
    private func prepareToWrite() throws {
        try transactionReference._withUnsafeGuaranteedRef { t in
            try t.ensureUsable()
            t.noteChange()
        }
    }

    /// Deletes the entry at the cursor (with `MDB_NODUPDATA`, all values of its key).
    func deleteCurrent(allDuplicates: Bool = false) throws {
        if isClosed { throw StoreError.transactionEnded }
        try transaction.ensureUsable()
        transaction.noteChange()
        let rc = FaultInjection.lmdbFault(.delete) ?? mdb_cursor_del(pointer, allDuplicates ? UInt32(MDB_NODUPDATA) : 0)
        if rc != 0 { throw transaction.fail(rc, "mdb_cursor_del") }
    }
}

/// LMDB flag values as the unsigned type the C functions take.
enum LMDBFlags {
    static let create = UInt32(MDB_CREATE)
    static let dupSort = UInt32(MDB_DUPSORT)
    static let dupFixed = UInt32(MDB_DUPFIXED)
    static let noOverwrite = UInt32(MDB_NOOVERWRITE)
    static let noDupData = UInt32(MDB_NODUPDATA)
    static let append = UInt32(MDB_APPEND)
    static let appendDup = UInt32(MDB_APPENDDUP)
    static let reserve = UInt32(MDB_RESERVE)
    static let current = UInt32(MDB_CURRENT)
    static let readOnly = UInt32(MDB_RDONLY)
    static let noTLS = UInt32(MDB_NOTLS)
    static let noSubdirectory = UInt32(MDB_NOSUBDIR)
    static let noReadahead = UInt32(MDB_NORDAHEAD)
    static let noLock = UInt32(MDB_NOLOCK)
    static let compactCopy = UInt32(MDB_CP_COMPACT)
}
