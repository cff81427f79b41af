import CStrataLMDB
import CStrataSupport
import Foundation
import Synchronization

/// Settings of an LMDB environment, fixed when it opens.
struct EnvironmentConfiguration: Sendable {
    var initialMapSize: Int
    var maximumMapSize: Int
    var maximumReaders: Int
    var maximumDatabases: Int
    var readOnly: Bool
    /// How long growing the map waits for read transactions of this process to end.
    var growthWaitSeconds: Double
    /// How observers notice other processes' commits (see ``FileWatching``).
    var fileWatching: FileWatching = .native
}

/// Identity of a data file: device and inode, so that symlinks, hard links and renamed directories
/// all find the same open environment.
struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64

    init(_ status: FileStatus) {
        device = status.device
        inode = status.inode
    }
}

/// One LMDB environment (one store's files), opened once per process and shared by every `Store` handle
/// on the same files.
///
/// It enforces the rules of `GUIDE.md` §2: one environment per file per process (a registry keyed by
/// device and inode); `MDB_NOTLS`; a write transaction begins and ends on one thread under one lock;
/// every transaction holds the resize gate shared, and the map grows under it exclusively, after which
/// the unit of work is retried; a failed commit is never aborted; database handles are opened once,
/// under a lock, and exported only when the transaction that opened them commits.
final class Environment: @unchecked Sendable {
    /// LMDB's environment: replaced only by ``resume()``, under the writer lock and the gate held exclusively,
    /// and used only under the gate (transactions) or the writer lock.
    var pointer: OpaquePointer
    /// The store directory.
    let path: String
    let identity: FileIdentity
    let configuration: EnvironmentConfiguration
    let openedInProcess: Int32

    let writer = ThreadMutex()
    /// Threads of this process waiting for the write lock: background maintenance pauses while any do.
    let writersWaiting = Atomic<Int>(0)
    private let databaseLock = ThreadMutex()
    let gate = ResizeGate()
    private let readerSlots: ReaderSlots
    let handles = Mutex<[String: MDB_dbi]>([:])
    let readPool = Mutex<[PooledTransaction]>([])
    struct PooledTransaction: @unchecked Sendable { let pointer: OpaquePointer }
    let mapSize: Atomic<Int>
    private let commitsSinceReaderCheck = Atomic<Int>(0)
    /// Cleared readers of dead processes at open (for `strata info`).
    private(set) var staleReadersCleared: Int = 0

    /// The environments this process has open, with their users. A list, not a dictionary: a process opens a
    /// few stores, and a dictionary keyed by a new type costs the first open of the process a scan of every
    /// protocol conformance in the binary (the Swift runtime checks `Hashable` the first time the table's type
    /// is made), about 440,000 instructions — more than the rest of an open.
    ///
    /// The list is linked through the environments themselves (``nextInRegistry``), each with its count of users
    /// (``users``), both read and written only under this lock: an array of leases was a new array type, whose
    /// first use cost the first open of a process a type look-up of about 11,000 instructions.
    private static let registry = Mutex<Environment?>(nil)
    /// The next environment in ``registry`` (guarded by its lock).
    private var nextInRegistry: Environment? = nil
    /// The store handles using this environment (guarded by ``registry``'s lock).
    private var users = 0
    private let closedFlag = Atomic<Bool>(false)
    /// Set while LMDB is closed by ``suspend(timeout:)``, until ``resume()``.
    let suspendedFlag = Atomic<Bool>(false)
    /// Set by the first write transaction of this environment that ran while the store held plain values (an
    /// unencrypted store, or one being encrypted or decrypted): LMDB keeps the buffers of the pages a transaction
    /// wrote for the next ones, and copies a page into such a buffer without clearing the free space between its
    /// entries, so that space may carry plain bytes into pages written later. Pages written by an environment
    /// without the flag hold none (``PageRewrite``).
    let wrotePlainPages = Atomic<Bool>(false)
    /// Threads reading a migration's source objects ahead (``SourceReadAhead``) that have not ended: zero whenever
    /// no pass is running, since every pass stops its reader when it ends.
    let readAheadThreads = Atomic<Int>(0)
    /// State other layers keep for this environment, one value per type, created on first use (the process's
    /// observers of the store, for example): the environment knows nothing of what they hold. A short list, not a
    /// dictionary, for the reason the registry is one (a dictionary keyed by `ObjectIdentifier` cost a process's
    /// first `close` a scan of every protocol conformance in the binary).
    private let attachments = Mutex<[any AnyObject & Sendable]>([])
    /// An encrypted store's keyring, installed once its key was checked (see `StoreUnlocking`) and replaced by key
    /// rotations: nil for an unencrypted store, whose transactions then do no sealing work at all.
    private let installedKeyring = Mutex<StoreKeyring?>(nil)
    /// Set once a keyring was installed: until then a transaction reads no lock to learn there is none. (A flag,
    /// not an `AtomicLazyReference` to the keyring's box: that generic type cost a process's first transaction a
    /// type look-up of about 16,000 instructions.)
    private let hasInstalledKeyring = Atomic<Bool>(false)
    /// What each open database handle seals (``SealScope``; nil inside: nothing), by handle: found from the
    /// handle's name the first time a transaction of an encrypted store asks (an unencrypted store never does, and
    /// its first open makes no scope), forgotten when a handle opens (LMDB gives the number of a handle closed by
    /// an abort or a deletion to the next database opened).
    private let sealScopes = Mutex(DatabaseHandleTable<SealScope?>())
    private static let poolCapacity = 16

    var currentMapSize: Int { mapSize.load(ordering: .relaxed) }

    /// The ID of the last committed write transaction, by any process, read without a transaction from the
    /// newest meta page of the data file (`mdb_env_info`).
    ///
    /// LMDB writes the meta page before it publishes the transaction to readers in the lock region, so for an
    /// instant this can be one ahead of what a new read transaction sees: use ``snapshotTransactionID`` for
    /// "everything up to here is visible".
    var lastTransactionID: UInt64 {
        // Only the commit watcher asks, and it is stopped before the environment is suspended.
        var info = MDB_envinfo()
        guard !isClosed, !isSuspended, mdb_env_info(pointer, &info) == 0 else { return 0 }
        return UInt64(info.me_last_txnid)
    }

    /// The number of the last page in use, as the newest meta page says (`mdb_env_info`); pages after it in the file
    /// were written by transactions that did not commit, or are new space. Nil when the environment is closed.
    var lastPageNumber: Int? {
        var info = MDB_envinfo()
        guard !isClosed, !isSuspended, mdb_env_info(pointer, &info) == 0 else { return nil }
        return Int(info.me_last_pgno)
    }

    /// The ID of the last transaction a read transaction begun now sees (0 when the environment is closed or
    /// no reader slot is free).
    var snapshotTransactionID: UInt64 {
        guard !isClosed, !isSuspended else { return 0 }
        return (try? read { $0.id }) ?? 0
    }

    /// The attachment of type `T`, made by `make` the first time it is asked for.
    func attachment<T: AnyObject & Sendable>(_ type: T.Type, _ make: () -> T) -> T {
        attachments.withLock { all in
            for existing in all { if let found = existing as? T { return found } }
            let made = make()
            all.append(made)
            return made
        }
    }

    // MARK: Opening

    /// The environment for the store directory `path`, opening it if this process has not, and counting
    /// one more user of it; every call is balanced by ``release()``.
    /// The directory must hold a data file (the caller checks it is not empty or missing).
    static func acquire(path: String, configuration: EnvironmentConfiguration) throws -> (environment: Environment, isNew: Bool) {
        strata_install_fork_detector()
        let dataPath = path + "/data.mdb"
        // One status of the data file gives its identity and the size the map is sized from.
        guard let status = try? FileStatus.of(dataPath) else {
            throw StoreError.corrupted(path: path, reason: .missingDataFile)
        }
        let identity = FileIdentity(status)
        return try registry.withLock { first -> (environment: Environment, isNew: Bool) in
            // An entry inherited through fork() belongs to the parent: it is never used (nor closed) here, and
            // the child opens an environment of its own, as `StoreError.usedAfterFork` tells it to.
            if let existing = Environment.entry(in: first, where: { $0.identity == identity }) {
                if existing.isOwnedByThisProcess {
                    if existing.configuration.readOnly && !configuration.readOnly { throw StoreError.readOnly }
                    existing.users += 1
                    return (existing, false)
                }
                Environment.remove(existing, from: &first)
            }
            let environment = try Environment(path: path, identity: identity, fileSize: status.size, configuration: configuration)
            environment.users = 1
            environment.nextInRegistry = first
            first = environment
            return (environment, true)
        }
    }

    /// The first environment of the registry list starting at `first` that `matches`.
    private static func entry(in first: Environment?, where matches: (Environment) -> Bool) -> Environment? {
        var current = first
        while let environment = current {
            if matches(environment) { return environment }
            current = environment.nextInRegistry
        }
        return nil
    }

    /// Unlinks `environment` from the registry list starting at `first`.
    private static func remove(_ environment: Environment, from first: inout Environment?) {
        if first === environment {
            first = environment.nextInRegistry
        } else {
            var current = first
            while let previous = current {
                if previous.nextInRegistry === environment {
                    previous.nextInRegistry = environment.nextInRegistry
                    break
                }
                current = previous.nextInRegistry
            }
        }
        environment.nextInRegistry = nil
    }

    /// Ends one use of the environment; the last closes it, after every transaction of the process ended.
    func release() {
        Environment.registry.withLock { first in
            guard Environment.entry(in: first, where: { $0 === self }) != nil else { return }
            users -= 1
            if users > 0 { return }
            Environment.remove(self, from: &first)
            // Closing under the registry lock: no second environment on this file can open meanwhile,
            // which would lose its POSIX locks when this one closes its descriptors.
            close()
        }
    }

    /// Whether the environment was closed.
    var isClosed: Bool { closedFlag.load(ordering: .acquiring) }

    private func close() {
        guard !closedFlag.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if !isOwnedByThisProcess {
            // Never touch the parent's environment from a forked child.
            return
        }
        writer.lock()
        _ = gate.lockExclusive(timeout: 3600)
        let pooled = readPool.withLock { pool -> [PooledTransaction] in
            defer { pool.removeAll() }
            return pool
        }
        if !isSuspended {
            for txn in pooled { mdb_txn_abort(txn.pointer) }
            mdb_env_close(pointer)
        }
        gate.unlockExclusive()
        writer.unlock()
    }

    /// Opens a new environment on a directory that nobody else can see yet (store creation).
    static func openPrivate(path: String, configuration: EnvironmentConfiguration) throws -> Environment {
        strata_install_fork_detector()
        let dataPath = path + "/data.mdb"
        if FileManager.default.fileExists(atPath: dataPath) == false {
            _ = FileManager.default.createFile(atPath: dataPath, contents: nil)
        }
        guard let status = try? FileStatus.of(dataPath) else {
            throw StoreError.permissionDenied(path: path)
        }
        return try Environment(path: path, identity: FileIdentity(status), fileSize: status.size, configuration: configuration)
    }

    /// `fileSize`: the data file's size when `identity` was read (the map is sized from it).
    private init(path: String, identity: FileIdentity, fileSize: Int, configuration: EnvironmentConfiguration) throws {
        self.path = path
        self.identity = identity
        self.configuration = configuration
        self.openedInProcess = CurrentProcess.id
        self.readerSlots = ReaderSlots(count: max(1, configuration.maximumReaders - 8))

        let wanted = Environment.roundToPage(max(configuration.initialMapSize, fileSize + fileSize / 2 + (64 << 20)))
        var mapSize = min(max(wanted, 1 << 20), max(configuration.maximumMapSize, fileSize))
        // The smallest map worth trying when the address space is short: the file and some room to write.
        let smallestMap = Environment.roundToPage(fileSize + (4 << 20))
        var opened: (OpaquePointer, Int32)
        while true {
            opened = try Environment.openLMDB(path: path, configuration: configuration, mapSize: mapSize)
            // ENOMEM: mmap could not reserve the map (ulimit -v, a platform's virtual memory limit). The map
            // is only address space, and it grows on demand: try a smaller one.
            guard opened.1 == ENOMEM, mapSize / 2 >= smallestMap else { break }
            mdb_env_close(opened.0)
            mapSize = Environment.roundToPage(mapSize / 2)
        }
        let (env, rc) = opened
        if rc != 0 {
            mdb_env_close(env)
            throw StoreError.from(lmdb: rc, operation: "mdb_env_open", path: path, mapSize: mapSize)
        }

        do {
            try Environment.checkPagesInUseArePresent(env: env, path: path)
        } catch {
            mdb_env_close(env)
            throw error
        }

        var info = MDB_envinfo()
        mdb_env_info(env, &info)
        self.pointer = env
        self.mapSize = Atomic(info.me_mapsize)
        if !configuration.readOnly {
            var dead: Int32 = 0
            mdb_reader_check(env, &dead)
            staleReadersCleared = Int(dead)
        }
    }

    /// Refuses a data file with a page *in use* beyond its end: the first reader of that page would be killed
    /// by SIGBUS. A file shorter than its last page number whose missing pages are all free is healthy (LMDB
    /// leaves pages it allocated and freed in one transaction unwritten, see ``DataFilePages``) and opens.
    ///
    /// Races with writers of other processes cannot make a healthy file look damaged: the meta page is read
    /// before the file's size (LMDB writes a transaction's pages before the meta page that counts them), and
    /// the free list is read under a read transaction, which keeps its pages from being reused.
    private static func checkPagesInUseArePresent(env: OpaquePointer, path: String) throws {
        let dataPath = path + "/data.mdb"
        do {
            // Through the environment's own descriptor of the data file (no second open and close of it).
            var fd: Int32 = -1
            let pages = mdb_env_get_fd(env, &fd) == 0 && fd >= 0
                ? DataFilePages(environmentDescriptor: fd, path: dataPath) : try DataFilePages(path: dataPath)
            let meta = try pages.newestMeta()
            if (Int(meta.lastPage) + 1) * meta.pageSize <= (try pages.fileSize()) { return }
            var pin: OpaquePointer?
            var rc = mdb_txn_begin(env, nil, LMDBFlags.readOnly, &pin)
            if rc == MDB_MAP_RESIZED {
                // Another process grew the map past this one's since it opened: adopt its size (no transaction of
                // this environment is active yet) rather than fail the open.
                rc = mdb_env_set_mapsize(env, 0)
                if rc == 0 { rc = mdb_txn_begin(env, nil, LMDBFlags.readOnly, &pin) }
            }
            guard rc == 0, let pin else { throw StoreError.from(lmdb: rc, operation: "mdb_txn_begin", path: path) }
            defer { mdb_txn_abort(pin) }
            // A meta page that another process's commit is rewriting can be read torn: a walk that finds damage
            // counts only when the meta page reads the same after it. While it never does, other processes are
            // committing to this file one transaction after another — it is in use, not truncated — and it opens.
            for _ in 0..<Self.damageConfirmations {
                let pinned = try pages.newestMeta()
                let tail = Result { try pages.tail(of: pinned) }
                if let found = try? tail.get(), !found.isTruncated { return }
                guard try pages.newestMeta() == pinned else { continue }
                if case .truncated(let page) = try tail.get() {
                    throw StoreError.corrupted(path: path, reason: .truncated(expectedBytes: (Int(page) + 1) * pinned.pageSize,
                                                                              actualBytes: try pages.fileSize()))
                }
                return
            }
        } catch let failure as SystemCallError {
            if failure.isPermissionDenied { throw StoreError.permissionDenied(path: path) }
            throw StoreError.ioError(errno: failure.errno, operation: failure.operation)
        } catch let damage as DataFilePages.Damage {
            throw StoreError.corrupted(path: path, reason: .structure(damage.description))
        }
    }

    /// How many times the open reads the meta pages again to confirm that a data file is truncated before it says
    /// so: damage is reported only from a meta page that read the same before and after the free-list walk.
    static let damageConfirmations = 16

    /// How the data file ends now (see ``DataFilePages``); nil when it cannot be read. Call it inside a read
    /// transaction, which keeps the free list's pages from being reused while they are read.
    func dataFileTail() -> DataFilePages.Tail? {
        guard let pages = try? DataFilePages(path: path + "/data.mdb"), let meta = try? pages.newestMeta() else { return nil }
        return try? pages.tail(of: meta)
    }

    /// Creates an LMDB environment and opens it on `path` with a map of `mapSize` bytes. Returns the handle
    /// and `mdb_env_open`'s result; the caller closes the handle when the result is not 0.
    static func openLMDB(path: String, configuration: EnvironmentConfiguration,
                                 mapSize: Int) throws -> (OpaquePointer, Int32) {
        var created: OpaquePointer?
        var rc = mdb_env_create(&created)
        guard rc == 0, let env = created else {
            throw StoreError.from(lmdb: rc, operation: "mdb_env_create", path: path)
        }
        func fail(_ rc: Int32, _ op: String) -> StoreError {
            mdb_env_close(env)
            return StoreError.from(lmdb: rc, operation: op, path: path, mapSize: mapSize)
        }
        rc = mdb_env_set_maxdbs(env, MDB_dbi(configuration.maximumDatabases))
        if rc != 0 { throw fail(rc, "mdb_env_set_maxdbs") }
        rc = mdb_env_set_maxreaders(env, UInt32(configuration.maximumReaders))
        if rc != 0 { throw fail(rc, "mdb_env_set_maxreaders") }
        rc = mdb_env_set_mapsize(env, mapSize)
        if rc != 0 { throw fail(rc, "mdb_env_set_mapsize") }

        var flags = LMDBFlags.noTLS
        if configuration.readOnly { flags |= LMDBFlags.readOnly }
        rc = mdb_env_open(env, path, flags, 0o644)
        // EAGAIN/EBUSY can come from another process opening or closing at the same instant: retry briefly.
        var attempts = 0
        while (rc == EAGAIN || rc == EBUSY) && attempts < 20 {
            CurrentProcess.pause(microseconds: 5_000)
            attempts += 1
            rc = mdb_env_open(env, path, flags, 0o644)
        }
        return (env, rc)
    }

    /// Closes an environment opened with ``openPrivate(path:configuration:)``.
    func closePrivate() { close() }

    static func fileSize(_ path: String) -> Int {
        (try? FileStatus.of(path))?.size ?? 0
    }

    static func roundToPage(_ size: Int) -> Int {
        let page = 1 << 20
        return (size + page - 1) / page * page
    }

    /// Whether this process opened the environment (not a parent before fork()). The process ID decides:
    /// an environment a child opens after fork() is its own.
    var isOwnedByThisProcess: Bool { CurrentProcess.id == openedInProcess }

    private func checkProcess() throws {
        if closedFlag.load(ordering: .relaxed) { throw StoreError.closed }
        if !isOwnedByThisProcess { throw StoreError.usedAfterFork }
    }

    // MARK: Transactions

    /// Runs `body` in a read-only transaction: a consistent snapshot, concurrent with other readers and
    /// with the writer.
    func read<T>(_ body: (Transaction) throws -> T) throws -> T {
        try checkProcess()
        readerSlots.acquire()
        defer { readerSlots.release() }
        return try readHoldingSlot(body)
    }

    /// Runs `body` in a read-only transaction as ``read(_:)`` does, if one of this process's reader slots is free
    /// now; nil, without waiting, when every slot is held. For work that can be left undone (the migration's
    /// read-ahead) and must never wait on readers that may themselves wait on it.
    func readIfSlotFree<T>(_ body: (Transaction) throws -> T) throws -> T? {
        try checkProcess()
        guard readerSlots.acquireIfFree() else { return nil }
        defer { readerSlots.release() }
        return try readHoldingSlot(body)
    }

    /// ``read(_:)`` once the caller holds a reader slot.
    private func readHoldingSlot<T>(_ body: (Transaction) throws -> T) throws -> T {
        while true {
            gate.lockShared()
            if isClosed { gate.unlockShared(); throw StoreError.closed }
            if isSuspended { gate.unlockShared(); throw StoreError.suspended(path: path) }
            let txn: Transaction
            do {
                txn = try beginRead()
            } catch let error as MapResized {
                _ = error
                gate.unlockShared()
                try adoptGrownMap()
                continue
            } catch {
                gate.unlockShared()
                throw error
            }
            defer { gate.unlockShared() }
            let result: T
            do {
                result = try body(txn)
            } catch {
                try? finishRead(txn)
                throw error
            }
            // Handles opened in `txn` exist only if its commit succeeds, and `result` may hold them (a bound
            // model): a failed commit is an error, never a result with dangling handles.
            try finishRead(txn)
            return result
        }
    }

    private struct MapResized: Error {}

    private func beginRead() throws -> Transaction {
        if let pooled = readPool.withLock({ $0.popLast() })?.pointer {
            let rc = mdb_txn_renew(pooled)
            if rc == 0 { return Transaction(pointer: pooled, isWrite: false, environment: self) }
            mdb_txn_abort(pooled)
            if rc == MDB_MAP_RESIZED { throw MapResized() }
            if rc != MDB_READERS_FULL { throw StoreError.from(lmdb: rc, operation: "mdb_txn_renew", path: path) }
        }
        var txn: OpaquePointer?
        var rc = FaultInjection.lmdbFault(.beginTransaction) ?? mdb_txn_begin(pointer, nil, LMDBFlags.readOnly, &txn)
        if rc == MDB_READERS_FULL {
            var dead: Int32 = 0
            mdb_reader_check(pointer, &dead)
            rc = mdb_txn_begin(pointer, nil, LMDBFlags.readOnly, &txn)
        }
        if rc == MDB_MAP_RESIZED { throw MapResized() }
        guard rc == 0, let txn else { throw StoreError.from(lmdb: rc, operation: "mdb_txn_begin", path: path) }
        return Transaction(pointer: txn, isWrite: false, environment: self)
    }

    private func finishRead(_ txn: Transaction) throws {
        guard !txn.isFinished else { return }
        if !txn.openedDatabases.isEmpty {
            // Only a commit exports the handles opened in a read transaction.
            try txn.commit()
            return
        }
        txn.reset()
        let keep = readPool.withLock { pool -> Bool in
            guard pool.count < Environment.poolCapacity else { return false }
            pool.append(PooledTransaction(pointer: txn.pointer))
            return true
        }
        if !keep { mdb_txn_abort(txn.pointer) }
    }

    /// Whether the calling thread is inside a write transaction of this environment.
    var isWritingOnCurrentThread: Bool { writer.isHeldByCurrentThread }

    /// Runs `body` in the write transaction, serialized with every other writer of the process (and, by
    /// LMDB's lock, of other processes). If the map fills (`MDB_MAP_FULL` from a put or from commit), the
    /// transaction is aborted, the map grown and `body` run again from the start: `body` must only have
    /// effects through the transaction. If `body` throws, nothing it wrote is kept.
    func write<T>(_ body: (Transaction) throws -> T) throws -> T {
        try checkProcess()
        if configuration.readOnly { throw StoreError.readOnly }
        if writer.isHeldByCurrentThread { throw StoreError.nestedWriteTransaction }
        writersWaiting.add(1, ordering: .relaxed)
        writer.lock()
        writersWaiting.subtract(1, ordering: .relaxed)
        defer { writer.unlock() }
        if isClosed { throw StoreError.closed }
        if isSuspended { throw StoreError.suspended(path: path) }
        while true {
            gate.lockShared()
            var raw: OpaquePointer?
            let rc = FaultInjection.lmdbFault(.beginTransaction) ?? mdb_txn_begin(pointer, nil, 0, &raw)
            if rc == MDB_MAP_RESIZED {
                gate.unlockShared()
                try adoptGrownMap()
                continue
            }
            guard rc == 0, let raw else {
                gate.unlockShared()
                throw StoreError.from(lmdb: rc, operation: "mdb_txn_begin", path: path)
            }
            let txn = Transaction(pointer: raw, isWrite: true, environment: self)
            do {
                let result = try body(txn)
                try txn.commit()
                gate.unlockShared()
                afterCommit()
                return result
            } catch {
                txn.abort()
                gate.unlockShared()
                if txn.sawMapFull {
                    try grow()
                    continue
                }
                throw error
            }
        }
    }

    private func afterCommit() {
        // Reliability tests: `txn.afterCommit` marks every durable commit (kill or trace there).
        try? FaultInjection.point("txn.afterCommit")
        if commitsSinceReaderCheck.add(1, ordering: .relaxed).newValue >= 1024 {
            commitsSinceReaderCheck.store(0, ordering: .relaxed)
            var dead: Int32 = 0
            mdb_reader_check(pointer, &dead)
        }
    }

    /// Called by a transaction as it ends: exports or forgets the database handles it opened or deleted,
    /// and releases the database-opening lock.
    func transactionEnded(_ txn: Transaction, committed: Bool) {
        if committed && (!txn.openedDatabases.isEmpty || !txn.deletedDatabases.isEmpty) {
            handles.withLock { h in
                for (name, dbi) in txn.openedDatabases { h[name] = dbi }
                for name in txn.deletedDatabases { h[name] = nil }
            }
        }
        if txn.holdsDatabaseLock {
            txn.holdsDatabaseLock = false
            databaseLock.unlock()
        }
    }

    // MARK: Databases

    /// A named database's handle, opening it in `txn` if this process has not yet. Returns nil when the
    /// database does not exist and `create` is false.
    func openDatabase(_ name: String, flags: UInt32, create: Bool, in txn: Transaction) throws -> MDB_dbi? {
        if let dbi = txn.openedDatabases[name] { return dbi }
        if !txn.deletedDatabases.contains(name), let dbi = handles.withLock({ $0[name] }) { return dbi }
        if !txn.holdsDatabaseLock {
            databaseLock.lock()
            txn.holdsDatabaseLock = true
        }
        if !txn.deletedDatabases.contains(name), let dbi = handles.withLock({ $0[name] }) { return dbi }
        var dbi: MDB_dbi = 0
        let rc = FaultInjection.lmdbFault(.openDatabase)
            ?? mdb_dbi_open(txn.pointer, name, flags | (create ? LMDBFlags.create : 0), &dbi)
        if rc == MDB_NOTFOUND { return nil }
        if rc != 0 { throw txn.fail(rc, "mdb_dbi_open(\(name))") }
        sealScopes.withLock { $0[dbi] = nil }
        txn.noteOpened(name, dbi)
        return dbi
    }

    /// The keyring of an encrypted store whose key was checked, or nil.
    @inline(__always)
    var keyring: StoreKeyring? {
        guard hasInstalledKeyring.load(ordering: .acquiring) else { return nil }
        return installedKeyring.withLock { $0 }
    }

    /// The current cipher of an encrypted store whose key was checked, or nil (also while it is being decrypted).
    var cipher: StoreCipher? { keyring?.current }

    /// Installs the keyring of an encrypted store once its key was checked (the first one stays when handles race:
    /// their keys were checked against the same record), or, with `replacing`, the keyring of a rotation.
    func install(_ keyring: StoreKeyring, replacing: Bool = false) {
        installedKeyring.withLock { if replacing || $0 == nil { $0 = keyring } }
        hasInstalledKeyring.store(true, ordering: .releasing)
    }

    /// Removes the keyring: the store was decrypted (or the transaction that began encrypting it failed), and
    /// transactions from now on do no sealing work.
    func uninstallKeyring() {
        installedKeyring.withLock { $0 = nil }
    }

    /// What the database with handle `dbi`, used in `txn`, seals (nil: nothing): a pure function of its name.
    func sealScope(_ dbi: MDB_dbi, in txn: Transaction) -> SealScope? {
        if let known = sealScopes.withLock({ $0[dbi] }) { return known }
        // Opened in `txn` (not exported yet), or by an earlier transaction.
        guard let name = txn.openedDatabases.first(where: { $0.value == dbi })?.key
                ?? handles.withLock({ $0.first(where: { $0.value == dbi })?.key }) else { return nil }
        let scope = SealScope.of(database: name)
        sealScopes.withLock { $0[dbi] = .some(scope) }
        return scope
    }

    /// Forgets a handle (after its database was found deleted by another process).
    func forgetDatabase(_ name: String) {
        _ = handles.withLock { $0.removeValue(forKey: name) }
    }

    // MARK: Map size

    /// Grows the map after `MDB_MAP_FULL`, or throws ``StoreError/mapFull(mapSize:ceiling:)`` at the ceiling.
    private func grow() throws {
        let current = currentMapSize
        let ceiling = configuration.maximumMapSize
        guard current < ceiling else { throw StoreError.mapFull(mapSize: current, ceiling: ceiling) }
        let step = current < (8 << 30) ? current : (8 << 30)
        let next = min(Environment.roundToPage(current + max(step, 1 << 20)), ceiling)
        guard gate.lockExclusive(timeout: configuration.growthWaitSeconds) else {
            // A read transaction of this process is still open (a pinned snapshot): the map cannot move.
            throw StoreError.mapGrowthBlocked(mapSize: current)
        }
        defer { gate.unlockExclusive() }
        let rc = mdb_env_set_mapsize(pointer, next)
        if rc != 0 {
            // LMDB unmapped the old map before failing to map the new one: map the old size again, or the
            // environment is left without a map and unusable.
            if mdb_env_set_mapsize(pointer, current) != 0 {
                closedFlag.store(true, ordering: .relaxed)
                throw StoreError.needsReopen
            }
            throw StoreError.from(lmdb: rc, operation: "mdb_env_set_mapsize", path: path, mapSize: next, ceiling: ceiling)
        }
        var info = MDB_envinfo()
        mdb_env_info(pointer, &info)
        mapSize.store(info.me_mapsize, ordering: .relaxed)
    }

    /// Adopts a map grown by another process (`MDB_MAP_RESIZED`).
    private func adoptGrownMap() throws {
        guard gate.lockExclusive(timeout: configuration.growthWaitSeconds) else {
            throw StoreError.from(lmdb: MDB_MAP_RESIZED, operation: "mdb_txn_begin", path: path)
        }
        defer { gate.unlockExclusive() }
        let rc = mdb_env_set_mapsize(pointer, 0)
        if rc != 0 { throw StoreError.from(lmdb: rc, operation: "mdb_env_set_mapsize", path: path) }
        var info = MDB_envinfo()
        mdb_env_info(pointer, &info)
        mapSize.store(info.me_mapsize, ordering: .relaxed)
    }

    // MARK: Information and copies

    struct Info: Sendable {
        var mapSize: Int
        var lastPageNumber: Int
        var pageSize: Int
        var maximumReaders: Int
        var readersInUse: Int
        var lastTransactionID: Int
    }

    func info() -> Info {
        gate.lockShared()
        defer { gate.unlockShared() }
        var info = MDB_envinfo()
        var stat = MDB_stat()
        guard !isClosed, !isSuspended else {
            return Info(mapSize: currentMapSize, lastPageNumber: 0, pageSize: 0, maximumReaders: configuration.maximumReaders,
                        readersInUse: 0, lastTransactionID: 0)
        }
        mdb_env_info(pointer, &info)
        mdb_env_stat(pointer, &stat)
        return Info(mapSize: info.me_mapsize, lastPageNumber: Int(info.me_last_pgno), pageSize: Int(stat.ms_psize),
                    maximumReaders: Int(info.me_maxreaders), readersInUse: Int(info.me_numreaders),
                    lastTransactionID: Int(info.me_last_txnid))
    }

    /// Clears reader slots left by dead processes; returns how many.
    func clearStaleReaders() -> Int {
        gate.lockShared()
        defer { gate.unlockShared() }
        guard !isClosed, !isSuspended else { return 0 }
        var dead: Int32 = 0
        mdb_reader_check(pointer, &dead)
        return Int(dead)
    }

    /// Writes a consistent copy of the environment into the empty directory `directory`
    /// (`mdb_env_copy2`, optionally compacting), while other transactions go on.
    func copy(toEmptyDirectory directory: String, compact: Bool) throws {
        try checkProcess()
        gate.lockShared()
        defer { gate.unlockShared() }
        if isClosed { throw StoreError.closed }
        if isSuspended { throw StoreError.suspended(path: path) }
        let rc = mdb_env_copy2(pointer, directory, compact ? LMDBFlags.compactCopy : 0)
        if rc != 0 { throw StoreError.from(lmdb: rc, operation: "mdb_env_copy2", path: directory) }
    }

    /// Flushes the data file to disk.
    func sync() throws {
        gate.lockShared()
        defer { gate.unlockShared() }
        if isSuspended { throw StoreError.suspended(path: path) }
        let rc = mdb_env_sync(pointer, 1)
        if rc != 0 { throw StoreError.from(lmdb: rc, operation: "mdb_env_sync", path: path) }
    }
}
