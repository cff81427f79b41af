import CStrataLMDB

/// Suspension: the environment closes LMDB — every file descriptor, the `lock.mdb` lock and reader slot, the
/// map — while keeping everything the layers above hold (database handles, the bound model, observers), and
/// opens it again on resume. What an iOS app needs before it is suspended: a process that holds a file lock
/// in a shared container when it is suspended is killed (0xdead10cc).
extension Environment {
    /// Whether LMDB is closed until ``resume()``.
    var isSuspended: Bool { suspendedFlag.load(ordering: .acquiring) }

    /// Waits (at most `timeout` seconds) for the transactions of this process to end, then closes LMDB.
    /// New transactions throw ``StoreError/suspended(path:)`` until ``resume()``. Nothing is lost: every
    /// commit was durable when it returned.
    func suspend(timeout: Double) throws {
        guard isOwnedByThisProcess else { throw StoreError.usedAfterFork }
        writer.lock()
        defer { writer.unlock() }
        guard !isClosed, !isSuspended else { return }
        guard gate.lockExclusive(timeout: timeout) else { throw StoreError.suspendBlocked(path: path) }
        defer { gate.unlockExclusive() }
        let pooled = readPool.withLock { pool -> [PooledTransaction] in
            defer { pool.removeAll() }
            return pool
        }
        for txn in pooled { mdb_txn_abort(txn.pointer) }
        suspendedFlag.store(true, ordering: .releasing)
        mdb_env_close(pointer)
    }

    /// Opens LMDB again after ``suspend(timeout:)``, with the database handles it had: each gets the same
    /// handle number as before (the bound model holds them).
    func resume() throws {
        guard isOwnedByThisProcess else { throw StoreError.usedAfterFork }
        writer.lock()
        defer { writer.unlock() }
        guard !isClosed, isSuspended else { return }
        _ = gate.lockExclusive(timeout: 3600)  // no transaction runs while suspended: never waits
        defer { gate.unlockExclusive() }
        let size = currentMapSize
        let (env, rc) = try Environment.openLMDB(path: path, configuration: configuration, mapSize: size)
        if rc != 0 {
            mdb_env_close(env)
            throw StoreError.from(lmdb: rc, operation: "mdb_env_open", path: path, mapSize: size)
        }
        do {
            try reopenDatabases(in: env)
        } catch {
            mdb_env_close(env)
            throw error
        }
        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        mapSize.store(info.me_mapsize, ordering: .relaxed)
        pointer = env
        if !configuration.readOnly {
            var dead: Int32 = 0
            mdb_reader_check(env, &dead)
        }
        suspendedFlag.store(false, ordering: .releasing)
    }

    /// Opens the databases this process had open so that each gets its old handle number (the bound model
    /// holds them). A freshly opened LMDB environment numbers named databases in the order they are opened,
    /// from 2 (`CORE_DBS`) up; a number whose database was deleted meanwhile is taken by a spare named database
    /// of the file, closed again once the numbers are set. Throws ``StoreError/needsReopen`` when no spare is
    /// left (the handle must then be opened again).
    private func reopenDatabases(in env: OpaquePointer) throws {
        let byNumber = Dictionary(handles.withLock { $0 }.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        guard let highest = byNumber.keys.max() else { return }
        var txn: OpaquePointer?
        var rc = mdb_txn_begin(env, nil, LMDBFlags.readOnly, &txn)
        guard rc == 0, let txn else { throw StoreError.from(lmdb: rc, operation: "mdb_txn_begin", path: path) }
        var committed = false
        defer { if !committed { mdb_txn_abort(txn) } }
        var fillers: [MDB_dbi] = []
        var spare: [String]? = nil
        let open = Set(byNumber.values)
        for number in MDB_dbi(2)...highest {
            var dbi: MDB_dbi = 0
            if let name = byNumber[number] {
                rc = mdb_dbi_open(txn, name, 0, &dbi)
                if rc != 0 { throw StoreError.from(lmdb: rc, operation: "mdb_dbi_open(\(name))", path: path) }
            } else {
                if spare == nil { spare = try namedDatabases(txn).filter { !open.contains($0) } }
                var filled = false
                while !filled, let candidate = spare?.popLast() {
                    filled = mdb_dbi_open(txn, candidate, 0, &dbi) == 0
                }
                guard filled else { throw StoreError.needsReopen }
                fillers.append(dbi)
            }
            guard dbi == number else { throw StoreError.needsReopen }
        }
        rc = mdb_txn_commit(txn)
        committed = true
        if rc != 0 { throw StoreError.from(lmdb: rc, operation: "mdb_txn_commit", path: path) }
        for filler in fillers { mdb_dbi_close(env, filler) }
    }

    /// The names of the named databases in the file (the keys of LMDB's main database).
    private func namedDatabases(_ txn: OpaquePointer) throws -> [String] {
        var main: MDB_dbi = 0
        guard mdb_dbi_open(txn, nil, 0, &main) == 0 else { return [] }
        var cursor: OpaquePointer?
        guard mdb_cursor_open(txn, main, &cursor) == 0, let cursor else { return [] }
        defer { mdb_cursor_close(cursor) }
        var names: [String] = []
        var key = MDB_val(), value = MDB_val()
        var op = MDB_FIRST
        while mdb_cursor_get(cursor, &key, &value, op) == 0 {
            op = MDB_NEXT
            guard let base = key.mv_data else { continue }
            let bytes = UnsafeRawBufferPointer(start: base, count: key.mv_size)
            if let name = String(validating: bytes, as: UTF8.self) { names.append(name) }
        }
        return names
    }
}
