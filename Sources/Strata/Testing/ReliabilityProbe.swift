#if ReliabilityHooks
import Foundation

/// Read-only views of a store's internals for Strata's reliability suite (`@_spi(Testing)`): the state of a
/// migration as the journal records it, LMDB's last transaction, and where records lie in `data.mdb` (for
/// bit-flip tests). Nothing here writes, resumes or rolls back anything.
@_spi(Testing)
public enum ReliabilityProbe {
    /// A migration in progress, as its journal records it.
    public struct JournalState: Sendable, Codable, Equatable {
        /// The step's source version identifier.
        public var sourceVersion: String
        /// The step's destination version identifier.
        public var destinationVersion: String
        /// The task in progress (its index in the step's task list).
        public var taskIndex: Int
        /// How many tasks the step has.
        public var taskCount: Int
        /// The task in progress, described.
        public var task: String
        /// The last source object the current task finished, if any.
        public var cursor: UInt64?
        /// Objects the current task finished.
        public var completed: Int
        /// Batches (write transactions) the step committed.
        public var batches: Int
        /// The process that began the step.
        public var ownerPID: Int32
    }

    /// What the store holds, read in one snapshot.
    public struct Snapshot: Sendable, Codable, Equatable {
        /// The version identifier of the model the store is at (a migration's source until its switch).
        public var modelVersion: String
        /// The versions the store has been at, oldest first.
        public var history: [String]
        /// Bumped by every migration's switch.
        public var generation: UInt64
        /// Whether a migration is in progress (its journal exists, or its `didMigrate` is pending).
        public var migrating: Bool
        /// The migration in progress, as its journal records it.
        public var journal: JournalState?
        /// LMDB's last committed transaction.
        public var lastTransactionID: Int
        /// The number of records of each entity of the recorded model.
        public var entityCounts: [String: Int]
        /// The next object identifier.
        public var counter: UInt64
    }

    /// Where one record's bytes lie in `data.mdb`.
    public struct RecordLocation: Sendable, Codable, Equatable {
        /// The object's identifier.
        public var id: UInt64
        /// Where the record's first byte is in `data.mdb`.
        public var offset: Int
        /// The record's length in bytes.
        public var length: Int
    }

    static func configuration() -> EnvironmentConfiguration {
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        configuration.createIfMissing = false
        return configuration.environmentConfiguration(databases: configuration.maximumDatabases)
    }

    static func withEnvironment<T>(_ url: URL, _ body: (Environment) throws -> T) throws -> T {
        let path = url.storePath
        guard case .existing = try StoreFiles.inspect(path) else { throw StoreError.notFound(path: path) }
        let (environment, _) = try Environment.acquire(path: path, configuration: configuration())
        defer { environment.release() }
        return try body(environment)
    }

    /// The store's state, without resuming or rolling back a migration in progress.
    public static func snapshot(at url: URL) throws -> Snapshot {
        try withEnvironment(url) { environment in
            try environment.read { txn in
                let path = environment.path
                let header = try StoreHeader.read(in: txn, path: path)
                var journalState: JournalState? = nil
                if let journal = try header.meta.read(.journal, in: txn, MigrationJournal.decode) {
                    journalState = JournalState(
                        sourceVersion: journal.sourceVersion, destinationVersion: journal.destinationVersion,
                        taskIndex: journal.taskIndex, taskCount: journal.tasks.count,
                        task: journal.currentTask?.description ?? "done", cursor: journal.cursor,
                        completed: journal.completed, batches: journal.batches, ownerPID: journal.ownerPID)
                }
                var counts: [String: Int] = [:]
                for entry in header.catalog.entities {
                    if let dbi = try txn.openDatabase(entry.database, flags: 0, create: false) {
                        counts[entry.name] = try txn.entryCount(dbi)
                    }
                }
                let counter = try header.meta.read(.counter, in: txn, CounterRecord.decode) ?? 0
                return Snapshot(modelVersion: header.identity.versionIdentifier, history: header.history,
                                generation: header.state.generation, migrating: header.state.migrating,
                                journal: journalState, lastTransactionID: environment.info().lastTransactionID,
                                entityCounts: counts, counter: counter)
            }
        }
    }

    /// The offset and length in `data.mdb` of every record of `entity` (as the store's recorded catalog
    /// names it), read through LMDB's read-only map.
    public static func recordLocations(at url: URL, entity: String) throws -> [RecordLocation] {
        try withEnvironment(url) { environment in
            let pageSize = environment.info().pageSize
            return try environment.read { txn in
                let header = try StoreHeader.read(in: txn, path: environment.path)
                guard let entry = header.catalog.entity(named: entity),
                      let dbi = try txn.openDatabase(entry.database, flags: 0, create: false) else {
                    throw StoreError.unknownEntity(entity)
                }
                var out: [RecordLocation] = []
                let cursor = try txn.cursor(dbi)
                var e = try cursor.first()
                while let item = e {
                    if item.key.count == 8, let address = item.value.baseAddress, pageSize > 0 {
                        // The map is page-aligned: the page holding the value (or, for a large value, its first
                        // overflow page) starts at the address rounded down, with its page number first.
                        let pointer = Int(bitPattern: address)
                        let pageStart = pointer - pointer % pageSize
                        let pageNumber = UnsafeRawPointer(bitPattern: pageStart)?.loadUnaligned(as: UInt64.self) ?? 0
                        let id = UInt64(bigEndian: item.key.loadUnaligned(as: UInt64.self))
                        let (pageOffset, overflow) = Int(truncatingIfNeeded: pageNumber).multipliedReportingOverflow(by: pageSize)
                        guard !overflow, pageOffset >= 0 else {
                            throw StoreError.corrupted(path: environment.path, reason: .structure("page number \(pageNumber)"))
                        }
                        out.append(RecordLocation(id: id, offset: pageOffset + (pointer - pageStart), length: item.value.count))
                    }
                    e = try cursor.next()
                }
                return out
            }
        }
    }

    /// The entity tag the store's catalog gives `entity` (records' checksums cover it).
    public static func entityTag(at url: URL, entity: String) throws -> UInt32 {
        try withEnvironment(url) { environment in
            try environment.read { txn in
                let header = try StoreHeader.read(in: txn, path: environment.path)
                guard let entry = header.catalog.entity(named: entity) else { throw StoreError.unknownEntity(entity) }
                return entry.tag
            }
        }
    }

    /// Clears the reader slots of dead processes in the store's lock file; returns how many were cleared.
    public static func clearStaleReaders(at url: URL) throws -> Int {
        try withEnvironment(url) { $0.clearStaleReaders() }
    }

    /// The records of the store's entity databases as stored on disk: how many are sealed (a seal's marker byte and
    /// length) and how many plain (a record's own format byte first). Call it with no handle of the store open in
    /// this process (an open handle's environment would open the seals).
    public static func recordForms(at url: URL) throws -> (sealed: Int, plain: Int) {
        try withEnvironment(url) { environment in
            try environment.read { txn in
                var names: [String] = []
                let main = try txn.cursor(1)
                var named = try main.first()
                while let e = named {
                    names.append(String(decoding: e.key, as: UTF8.self))
                    named = try main.next()
                }
                var forms = (sealed: 0, plain: 0)
                for name in names where SealScope.of(database: name)?.subkey == .records {
                    guard let dbi = try txn.openDatabase(name, flags: 0, create: false) else { continue }
                    let cursor = try txn.cursor(dbi)
                    var entry = try cursor.first()
                    while let e = entry {
                        if SealedValue.epoch(of: e.value) != nil { forms.sealed += 1 } else { forms.plain += 1 }
                        entry = try cursor.next()
                    }
                }
                return forms
            }
        }
    }

    /// Rewrites the store's format record with another format version (for version-mismatch tests; a store
    /// "written by a newer Strata").
    public static func overwriteFormatVersion(at url: URL, with version: UInt16) throws {
        let path = url.storePath
        guard case .existing = try StoreFiles.inspect(path) else { throw StoreError.notFound(path: path) }
        var configuration = StoreConfiguration()
        configuration.createIfMissing = false
        let (environment, _) = try Environment.acquire(path: path, configuration: configuration.environmentConfiguration(databases: configuration.maximumDatabases))
        defer { environment.release() }
        try environment.write { txn in
            let header = try StoreHeader.read(in: txn, path: path)
            var format = header.format
            format.formatVersion = version
            try header.meta.put(.format, format.encoded(), in: txn)
        }
    }
}
#endif
