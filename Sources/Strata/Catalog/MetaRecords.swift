import Foundation

/// Keys of the `meta` database. Every value is wrapped in a checksummed envelope.
///
/// | key | value |
/// |---|---|
/// | `format` | magic `STRATA`, store format version, LMDB and Strata versions that created the store |
/// | `model` | the JSON of the model that wrote the store |
/// | `identity` | the model's version identifier, fingerprint and per-entity version hashes |
/// | `catalog` | databases, layouts and projections (see ``Catalog``) |
/// | `state` | a generation number bumped by every migration, and whether one is in progress |
/// | `counter` | the next object ID |
/// | `history` | the version identifiers the store has been at, oldest first |
/// | `journal` | the migration in progress, if any: its checkpoint, written with every batch |
/// | `maintenance` | records left in older layouts, indexes being built, the sweep's cursor (``MaintenanceRecord``) |
/// | `changeHistory` | the change history's state: on or off, the store's identity in tokens, how far it was pruned, its retention (`HistoryState`) |
/// | `encryption` | only in an encrypted store, in the clear: the cipher, each key epoch's salt and key check (``EncryptionRecord``) |
/// | `keyRotation` | while a key rotation runs: the sweep's progress (``KeyRotationRecord``) |
enum MetaKey: String, CaseIterable {
    case format, model, identity, catalog, state, counter, history, journal, maintenance, changeHistory, encryption, keyRotation
}

/// `[u32 LE CRC-32C of (key ‖ payload)] [payload]`.
enum MetaEnvelope {
    static func wrap(_ key: MetaKey, _ payload: [UInt8]) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(payload.count + 4)
        let seed = Checksum.crc32c(Array(key.rawValue.utf8))
        let crc = Checksum.crc32c(payload, seed: seed)
        withUnsafeBytes(of: crc.littleEndian) { out.append(contentsOf: $0) }
        out.append(contentsOf: payload)
        return out
    }

    static func unwrap(_ key: MetaKey, _ bytes: UnsafeRawBufferPointer) throws(DecodeFailure) -> UnsafeRawBufferPointer {
        guard bytes.count >= 4 else {
            if SealedValue.isUnopenable(bytes) { throw DecodeFailure("\(key.rawValue): \(SealedValue.unopenableReason)") }
            if SealedValue.isUnknownKey(bytes) { throw DecodeFailure("\(key.rawValue): \(SealedValue.unknownKeyReason)") }
            throw DecodeFailure("\(key.rawValue): too short")
        }
        let stored = bytes.loadUnaligned(as: UInt32.self).littleEndian
        let payload = UnsafeRawBufferPointer(rebasing: bytes[4...])
        let seed = Checksum.crc32c(Array(key.rawValue.utf8))
        guard Checksum.crc32c(payload, seed: seed) == stored else {
            throw DecodeFailure("\(key.rawValue): checksum mismatch")
        }
        return payload
    }
}

/// Reads and writes metadata values in a transaction.
struct MetaTable {
    let dbi: DatabaseHandle
    let path: String

    static let databaseName = "meta"

    func get(_ key: MetaKey, in txn: Transaction) throws -> UnsafeRawBufferPointer? {
        let raw = try Array(key.rawValue.utf8).withUnsafeBytes { try txn.get(dbi, key: $0) }
        guard let raw else { return nil }
        do {
            return try MetaEnvelope.unwrap(key, raw)
        } catch {
            throw StoreError.corrupted(path: path, reason: .metadata(error.reason))
        }
    }

    func put(_ key: MetaKey, _ payload: [UInt8], in txn: Transaction) throws {
        let value = MetaEnvelope.wrap(key, payload)
        try Array(key.rawValue.utf8).withUnsafeBytes { k in
            try value.withUnsafeBytes { v in _ = try txn.put(dbi, key: k, value: v) }
        }
    }

    func delete(_ key: MetaKey, in txn: Transaction) throws {
        try Array(key.rawValue.utf8).withUnsafeBytes { _ = try txn.delete(dbi, key: $0) }
    }

    /// Decodes a value with `decode`, turning any failure into a metadata corruption error.
    func read<T>(_ key: MetaKey, in txn: Transaction, _ decode: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        guard let payload = try get(key, in: txn) else { return nil }
        do {
            return try decode(payload)
        } catch let failure as DecodeFailure {
            throw StoreError.corrupted(path: path, reason: .metadata("\(key.rawValue): \(failure.reason)"))
        }
    }
}

/// What created the store: the first thing checked when a store is opened.
struct FormatRecord: Equatable {
    static let magic: [UInt8] = Array("STRATA".utf8)
    /// The newest format this Strata reads and writes: 4 is a store being encrypted or decrypted; 3 is an encrypted store (<doc:Encryption>), whether or not
    /// it keeps a change history (an older Strata, which cannot open seals, refuses it); 2 is a store that keeps a
    /// change history (an older Strata, which would commit without recording history, refuses it); 1 is every
    /// other store.
    static let currentVersion: UInt16 = 4
    /// The format of an encrypted store.
    static let versionEncrypted: UInt16 = 3
    /// The format of a store being encrypted or decrypted (``Store/encrypt(at:with:configuration:)``,
    /// ``Store/decrypt(at:configuration:)``): plain and sealed values side by side, which no earlier Strata reads.
    /// The step's end sets 3 (encrypted) or 1/2 (decrypted).
    static let versionChangingEncryption: UInt16 = 4
    /// The format of a store without change history (what a new store is created with).
    static let versionWithoutHistory: UInt16 = 1
    /// The format of a store that keeps a change history.
    static let versionWithHistory: UInt16 = 2
    static let strataVersion = "0.1.0"

    var formatVersion: UInt16
    var lmdbVersion: String
    var strataVersion: String
    var createdAt: Double

    static func current() -> FormatRecord {
        FormatRecord(formatVersion: versionWithoutHistory, lmdbVersion: LMDBStatus.libraryVersion,
                     strataVersion: strataVersion, createdAt: Date().timeIntervalSince1970)
    }

    func encoded() -> [UInt8] {
        var w = BinaryWriter()
        FormatRecord.magic.withUnsafeBytes { w.raw($0) }
        w.fixed(formatVersion)
        w.string(lmdbVersion)
        w.string(strataVersion)
        w.fixed(createdAt.bitPattern)
        return w.bytes
    }

    init(formatVersion: UInt16, lmdbVersion: String, strataVersion: String, createdAt: Double) {
        self.formatVersion = formatVersion
        self.lmdbVersion = lmdbVersion
        self.strataVersion = strataVersion
        self.createdAt = createdAt
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        guard Array(try r.bytes(6)) == FormatRecord.magic else { throw DecodeFailure("not a Strata format record") }
        formatVersion = try r.fixed(UInt16.self)
        lmdbVersion = try r.string()
        strataVersion = try r.string()
        createdAt = Double(bitPattern: try r.fixed(UInt64.self))
    }
}

/// The model that wrote the store, as compared at open: version identifier, fingerprint, version hashes.
struct IdentityRecord: Equatable {
    var versionIdentifier: String
    var fingerprint: VersionHash
    var entityHashes: [String: VersionHash]

    init(schema: Schema) {
        versionIdentifier = schema.versionIdentifier
        fingerprint = schema.fingerprint
        entityHashes = schema.entityVersionHashes
    }

    func encoded() -> [UInt8] {
        var w = BinaryWriter()
        w.string(versionIdentifier)
        fingerprint.bytes.withUnsafeBytes { w.raw($0) }
        let sorted = entityHashes.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
        w.varint(sorted.count)
        for (name, hash) in sorted {
            w.string(name)
            hash.bytes.withUnsafeBytes { w.raw($0) }
        }
        return w.bytes
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        versionIdentifier = try r.string()
        fingerprint = VersionHash(bytes: Array(try r.bytes(32)))
        var hashes: [String: VersionHash] = [:]
        for _ in 0..<(try r.count(limit: 1 << 20)) {
            let name = try r.string()
            hashes[name] = VersionHash(bytes: Array(try r.bytes(32)))
        }
        entityHashes = hashes
    }

    /// Whether `schema` has exactly these version hashes (the stored layout is the same).
    func hasSameLayout(as schema: Schema) -> Bool { entityHashes == schema.entityVersionHashes }
}

/// Bumped by every migration so that other handles and processes notice the model changed. Generations are only
/// compared for equality, so the bump wraps (`&+ 1`): a damaged record holding the largest value must not trap.
struct StateRecord: Equatable {
    var generation: UInt64
    var migrating: Bool

    func encoded() -> [UInt8] {
        var w = BinaryWriter()
        w.fixed(generation)
        w.u8(migrating ? 1 : 0)
        return w.bytes
    }

    init(generation: UInt64, migrating: Bool) {
        self.generation = generation
        self.migrating = migrating
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        generation = try r.fixed(UInt64.self)
        migrating = try r.u8() == 1
    }
}

enum CounterRecord {
    static func encode(_ next: UInt64) -> [UInt8] {
        var w = BinaryWriter()
        w.fixed(next)
        return w.bytes
    }
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> UInt64 {
        var r = BinaryReader(bytes)
        return try r.fixed(UInt64.self)
    }
}

enum HistoryRecord {
    static func encode(_ versions: [String]) -> [UInt8] {
        var w = BinaryWriter()
        w.varint(versions.count)
        for v in versions { w.string(v) }
        return w.bytes
    }
    static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [String] {
        var r = BinaryReader(bytes)
        var out: [String] = []
        for _ in 0..<(try r.count(limit: 1 << 16)) { out.append(try r.string()) }
        return out
    }
}
