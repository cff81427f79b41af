#if ReliabilityHooks
import Foundation

/// Raw writes into a store's own databases for Strata's reliability suite (`@_spi(Testing)`): the metadata
/// fuzz tier puts hostile bytes where the store keeps its metadata (`meta`, the change log `changes`, the change
/// history `history` and `historymodels`), bypassing every check of the store's write path, then opens the store
/// through the public API. Values are written as given: ``seal(database:key:payload:)`` recomputes the
/// checksum a value of that database needs, so that a mutated payload reaches the decoders behind it.
///
/// Only for unencrypted stores (values are written in the clear). Each call opens the store's LMDB environment
/// through the process's registry of open stores, so it is safe while this process has the store open too.
@_spi(Testing)
public enum StoreTampering {
    /// The database of store metadata (keys: ``DecoderEntryPoints/metadataKeys``).
    public static let metaDatabase = MetaTable.databaseName
    /// The change log observers in other processes read (keys: 8-byte big-endian transaction IDs).
    public static let changeLogDatabase = ChangeLog.databaseName
    /// The change history's entries (keys: 8-byte big-endian sequence numbers).
    public static let historyDatabase = HistoryLog.entriesDatabase
    /// The models history entries name (keys: 8-byte big-endian model IDs).
    public static let historyModelsDatabase = HistoryLog.modelsDatabase

    /// One key and value of a database.
    public struct Entry: Sendable, Equatable {
        /// The key's bytes.
        public var key: [UInt8]
        /// The value's bytes, as stored (checksum included).
        public var value: [UInt8]
    }

    /// One change to a database: `value` nil deletes the key.
    public struct Edit: Sendable {
        /// The database (one of this type's database names, or an entity's).
        public var database: String
        /// The key's bytes.
        public var key: [UInt8]
        /// The new value, or nil to delete the key.
        public var value: [UInt8]?

        /// An edit of `key` in `database`.
        public init(database: String, key: [UInt8], value: [UInt8]?) {
            self.database = database
            self.key = key
            self.value = value
        }
    }

    static func withEnvironment<T>(_ url: URL, _ body: (Environment) throws -> T) throws -> T {
        let path = url.storePath
        guard case .existing = try StoreFiles.inspect(path) else { throw StoreError.notFound(path: path) }
        var configuration = StoreConfiguration()
        configuration.createIfMissing = false
        let (environment, _) = try Environment.acquire(
            path: path, configuration: configuration.environmentConfiguration(databases: configuration.maximumDatabases))
        defer { environment.release() }
        return try body(environment)
    }

    /// Every key and value of `database` (empty when the database does not exist), in key order.
    public static func entries(at url: URL, database: String) throws -> [Entry] {
        try withEnvironment(url) { environment in
            try environment.read { txn in
                guard let dbi = try txn.openDatabase(database, flags: 0, create: false), txn.sees(dbi) else { return [] }
                var out: [Entry] = []
                let cursor = try txn.cursor(dbi)
                var entry = try cursor.first()
                while let e = entry {
                    out.append(Entry(key: Array(e.key), value: Array(e.value)))
                    entry = try cursor.next()
                }
                return out
            }
        }
    }

    /// Applies `edits` in one write transaction (creating a database an edit names if it is missing).
    public static func apply(_ edits: [Edit], at url: URL) throws {
        try withEnvironment(url) { environment in
            try environment.write { txn in
                for edit in edits {
                    guard let dbi = try txn.openDatabase(edit.database, flags: 0, create: edit.value != nil) else { continue }
                    try edit.key.withUnsafeBytes { k in
                        if let value = edit.value {
                            _ = try value.withUnsafeBytes { try txn.put(dbi, key: k, value: $0) }
                        } else {
                            _ = try txn.delete(dbi, key: k)
                        }
                    }
                }
            }
        }
    }

    /// Commits one write transaction that stores `value` as its own change-log entry (keyed by its transaction
    /// ID) and changes nothing else: to this process's observers, a commit of another process whose entry is
    /// `value`. Returns the transaction ID.
    @discardableResult
    public static func commitChangeLogEntry(_ value: [UInt8], at url: URL) throws -> UInt64 {
        try withEnvironment(url) { environment in
            try environment.write { txn in
                guard let dbi = try txn.openDatabase(ChangeLog.databaseName, flags: 0, create: true) else {
                    throw StoreError.internalInconsistency("the change log cannot be created")
                }
                let id = txn.id
                try ChangeLog.key(id).withUnsafeBytes { k in
                    _ = try value.withUnsafeBytes { try txn.put(dbi, key: k, value: $0) }
                }
                return id
            }
        }
    }

    /// The payload of a stored value of `database` (what its checksum covers): every kind this type names keeps
    /// a 4-byte checksum first. Nil for shorter values.
    public static func payload(of value: [UInt8]) -> [UInt8]? {
        value.count >= 4 ? Array(value[4...]) : nil
    }

    /// `payload` with the checksum a value under `key` of `database` needs, as the store would write it; nil
    /// for a database or key this type cannot seal (an unknown metadata key, a history key that is not 8 bytes).
    public static func seal(database: String, key: [UInt8], payload: [UInt8]) -> [UInt8]? {
        switch database {
        case MetaTable.databaseName:
            guard let name = String(validating: key, as: UTF8.self), let k = MetaKey(rawValue: name) else { return nil }
            return MetaEnvelope.wrap(k, payload)
        case ChangeLog.databaseName:
            let crc = Checksum.crc32c(payload)
            return withUnsafeBytes(of: crc.littleEndian) { Array($0) } + payload
        case HistoryLog.entriesDatabase, HistoryLog.modelsDatabase:
            guard let n = key.withUnsafeBytes({ HistoryLog.number(of: $0) }) else { return nil }
            let seed = database == HistoryLog.entriesDatabase ? HistoryCodec.entrySeed : HistoryCodec.modelSeed
            return payload.withUnsafeBytes { HistoryCodec.seal($0, key: n, seed: seed) }
        default:
            return nil
        }
    }
}
#endif
