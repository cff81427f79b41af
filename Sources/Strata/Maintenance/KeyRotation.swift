import Crypto
import Foundation

/// Rotating an encrypted store's key online (<doc:Encryption>): one transaction begins it — a new key epoch becomes
/// the one writes use, the old one stays to open what is not rewritten yet, the small sealed databases are re-sealed
/// at once — and the store's background maintenance then re-seals every other value in bounded batches (the
/// sweep), each committing its cursor in the `keyRotation` record, until the last batch retires the old key.
enum KeyRotation {
    /// Begins a rotation of the store of `environment` (unlocked with its current key) to `key`. Like a migration's
    /// switch, it bumps the store's generation: handles opened before get ``StoreError/modelChanged(path:)`` and are
    /// opened again with both keys.
    static func begin(environment: Environment, to key: SymmetricKey) throws {
        let path = environment.path
        guard let old = environment.keyring else { throw StoreError.storeNotEncrypted(path: path) }
        guard key.bitCount == StoreEncryption.keySizeInBits else { throw StoreError.invalidEncryptionKey(bits: key.bitCount) }
        guard !old.isRotating else { throw StoreError.keyRotationInProgress(path: path) }
        guard let lock = try MigrationLock.acquire(storePath: path) else { throw StoreError.migrationInProgress(ownerPID: nil) }
        defer { lock.release() }
        let next = StoreCipher(key: key, salt: StoreCipher.makeSalt(), epoch: old.current.epoch % 15 + 1)
        let rotating = StoreKeyring(current: next, retiring: [old.current])
        do {
            try environment.write { txn in
                let header = try StoreHeader.read(in: txn, path: path)
                if header.state.migrating || header.hasJournal { throw StoreError.migrationInProgress(ownerPID: nil) }
                guard let record = try EncryptionRecord.read(header.meta, in: txn), old.covers(record),
                      try KeyRotationRecord.read(header.meta, in: txn) == nil else {
                    throw StoreError.keyRotationInProgress(path: path)
                }
                // From here this transaction seals under the new key (and still opens under the old one).
                txn.keyring = rotating
                for name in [MetaTable.databaseName, ChangeLog.databaseName] {
                    try reseal(database: name, in: txn)
                }
                var total = 0
                for name in header.catalog.entities.map(\.database) + [HistoryLog.entriesDatabase, HistoryLog.modelsDatabase] {
                    if let dbi = try txn.openDatabase(name, flags: 0, create: false) { total += try txn.entryCount(dbi) }
                }
                try header.meta.put(.encryption, EncryptionRecord(epochs: [
                    .init(epoch: next.epoch, salt: next.salt, check: next.checkValue),
                    record.current,
                ]).encoded(), in: txn)
                try header.meta.put(.keyRotation, KeyRotationRecord(total: total).encoded(), in: txn)
                try header.meta.put(.state, StateRecord(generation: header.state.generation &+ 1, migrating: false).encoded(), in: txn)
                // Installed under the write lock: no other writer of this process seals before the record lists the key.
                environment.install(rotating, replacing: true)
            }
        } catch {
            environment.install(old, replacing: true)
            throw error
        }
    }

    /// Re-seals every value of a small database under the transaction's current key.
    private static func reseal(database name: String, in txn: Transaction) throws {
        guard let dbi = try txn.openDatabase(name, flags: 0, create: false) else { return }
        var entries: [(key: [UInt8], value: [UInt8])] = []
        let cursor = try txn.cursor(dbi)
        var entry = try cursor.first()
        while let e = entry {
            if !SealedValue.isUnopenable(e.value) && !SealedValue.isUnknownKey(e.value) {
                entries.append((Array(e.key), Array(e.value)))
            }
            entry = try cursor.next()
        }
        for e in entries {
            try e.key.withUnsafeBytes { k in try e.value.withUnsafeBytes { v in _ = try txn.put(dbi, key: k, value: v) } }
        }
    }

    /// What one batch of the sweep did.
    struct Batch {
        var resealed = 0
        var remaining = 0
        /// The batch re-sealed the last value and retired the old key.
        var finished = false
    }

    /// One batch of the sweep, in `txn` (a maintenance batch's): at most `limit` values and `seconds`; nil when no
    /// rotation runs. Values already under the current key (the app's writes since the rotation began) are passed
    /// over on their marker alone; a record's index entries move from the old key's hash to the new one's with it.
    static func sweep(model: BoundModel, catalog: Catalog, txn: Transaction, limit: Int, seconds: Double) throws -> Batch? {
        guard var r = try KeyRotationRecord.read(model.meta, in: txn) else { return nil }
        let path = txn.environment.path
        guard let keyring = txn.keyring, keyring.isRotating else { throw StoreError.encryptionKeyRequiredDuringRotation(path: path) }
        var targets: [(name: String, binding: EntityBinding?)] = model.entities.compactMap { b in
            catalog.entity(tag: b.tag).map { ($0.database, b) }
        }
        targets += [(HistoryLog.entriesDatabase, nil), (HistoryLog.modelsDatabase, nil)]
        let began = DispatchTime.now().uptimeNanoseconds
        let budget = UInt64(max(0, seconds) * 1e9)
        var batch = Batch()
        var visited = 0
        for target in targets where !r.done.contains(target.name) {
            let dbi: DatabaseHandle
            if let binding = target.binding {
                dbi = binding.dbi
            } else if let found = try txn.openDatabase(target.name, flags: 0, create: false), txn.sees(found) {
                dbi = found
            } else {
                r.done.append(target.name)
                continue
            }
            let cursor = try txn.cursor(dbi)
            var entry: Entry?
            if r.cursorDatabase == target.name, !r.cursorKey.isEmpty {
                entry = try r.cursorKey.withUnsafeBytes { try cursor.seek($0) }
                if let e = entry, e.key.elementsEqual(r.cursorKey) { entry = try cursor.next() }
            } else {
                entry = try cursor.first()
            }
            while let e = entry {
                if visited >= max(1, limit) || (visited & 63 == 63 && DispatchTime.now().uptimeNanoseconds - began > budget) {
                    r.cursorDatabase = target.name
                    try model.meta.put(.keyRotation, r.encoded(), in: txn)
                    batch.remaining = r.remaining
                    return batch
                }
                visited += 1
                r.passed += 1
                r.cursorKey = Array(e.key)
                if cursor.lastEpoch != 0, cursor.lastEpoch != keyring.current.epoch,
                   !SealedValue.isUnopenable(e.value), !SealedValue.isUnknownKey(e.value) {
                    if let binding = target.binding {
                        try moveIndexEntries(binding, record: e, keyring: keyring, in: txn)
                    }
                    let plain = Array(e.value)
                    try r.cursorKey.withUnsafeBytes { k in
                        try plain.withUnsafeBytes { v in _ = try cursor.put(key: k, value: v, flags: LMDBFlags.current) }
                    }
                    batch.resealed += 1
                }
                entry = try cursor.next()
            }
            r.done.append(target.name)
            r.cursorDatabase = nil
            r.cursorKey = []
        }
        // Nothing is sealed under the old key any more: retire it.
        let current = keyring.current
        try model.meta.put(.encryption, EncryptionRecord(epochs: [
            .init(epoch: current.epoch, salt: current.salt, check: current.checkValue),
        ]).encoded(), in: txn)
        try model.meta.delete(.keyRotation, in: txn)
        batch.finished = true
        return batch
    }

    /// Moves the index entries of one record from the retiring keys' hashes to the current key's. A record that
    /// does not decode is left as it is (verification reports it).
    private static func moveIndexEntries(_ binding: EntityBinding, record e: Entry, keyring: StoreKeyring, in txn: Transaction) throws {
        guard !binding.indexes.isEmpty else { return }
        let id = try ObjectKey.decode(e.key)
        guard let values = try? binding.decodeValues(e.value, id: id) else { return }
        try RotatingIndexEntries.moveToCurrentKey(binding.indexes, values: values, id: id, in: txn)
    }

    /// Values left under the retiring key (at most), or nil when no rotation runs.
    static func remaining(_ meta: MetaTable, in txn: Transaction) throws -> Int? {
        try KeyRotationRecord.read(meta, in: txn)?.remaining
    }
}
