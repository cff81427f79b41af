import Crypto
import Foundation

/// Changing a store's key online (<doc:Encryption>) — rotating it, encrypting an unencrypted store, decrypting an
/// encrypted one: one transaction begins it — the new form (a new key epoch, or plain) becomes the one writes use,
/// the old one stays to open what is not rewritten yet, the small databases (`meta`, the change log) are rewritten
/// at once — and the store's background maintenance then rewrites every other value in bounded batches (the
/// sweep), each committing its cursor in the `keyRotation` record, until the last batch retires the old form.
enum KeyRotation {
    /// A key change.
    enum Change {
        /// Every value re-sealed under a new key.
        case rotate(to: SymmetricKey)
        /// Every value of an unencrypted store sealed under a key.
        case encrypt(with: SymmetricKey)
        /// Every value of an encrypted store opened and stored plain.
        case decrypt
    }

    /// What a store is doing, for its error messages: "being encrypted", "being decrypted", "having its key rotated".
    static func running(_ keyring: StoreKeyring) -> String {
        if keyring.current == nil { return "being decrypted" }
        return keyring.hasPlainValues ? "being encrypted" : "having its key rotated"
    }

    /// Begins `change` of the store of `environment` (unlocked with its current key, or without one when it is not
    /// encrypted). Like a migration's switch, it bumps the store's generation: handles opened before get
    /// ``StoreError/modelChanged(path:)`` and are opened again with the keys the change needs.
    static func begin(environment: Environment, _ change: Change) throws {
        let path = environment.path
        let old = environment.keyring
        if let old, old.isRotating { throw StoreError.keyChangeInProgress(path: path, running: running(old)) }
        let next: StoreKeyring
        switch change {
        case .rotate(let key), .encrypt(let key):
            guard key.bitCount == StoreEncryption.keySizeInBits else { throw StoreError.invalidEncryptionKey(bits: key.bitCount) }
            if let old {
                guard case .rotate = change, let current = old.current else { throw StoreError.storeAlreadyEncrypted(path: path) }
                let cipher = StoreCipher(key: key, salt: StoreCipher.makeSalt(), epoch: current.epoch % 15 + 1)
                next = StoreKeyring(current: cipher, retiring: [current])
            } else {
                guard case .encrypt = change else { throw StoreError.storeNotEncrypted(path: path) }
                next = StoreKeyring(current: StoreCipher(key: key, salt: StoreCipher.makeSalt(), epoch: 1), retiringPlain: true)
            }
        case .decrypt:
            guard let current = old?.current else { throw StoreError.storeNotEncrypted(path: path) }
            next = StoreKeyring(current: nil, retiring: [current])
        }
        guard let lock = try MigrationLock.acquire(storePath: path) else { throw StoreError.migrationInProgress(ownerPID: nil) }
        defer { lock.release() }
        do {
            try environment.write { txn in
                let header = try StoreHeader.read(in: txn, path: path)
                if header.state.migrating || header.hasJournal { throw StoreError.migrationInProgress(ownerPID: nil) }
                let record = try EncryptionRecord.read(header.meta, in: txn)
                // The record is what this handle was unlocked with (another process may have begun a change since).
                if let old {
                    guard let record, old.covers(record) else { throw StoreError.keyChangeInProgress(path: path, running: "having its key changed by another handle") }
                } else if let record {
                    throw record.epochs.count > 1 ? StoreError.keyChangeInProgress(path: path, running: "having its key changed by another handle")
                        : StoreError.storeAlreadyEncrypted(path: path)
                }
                if let pending = try KeyRotationRecord.read(header.meta, in: txn) {
                    // Decrypting a store whose pages are still to be written again after encrypting: moot.
                    if case .decrypt = change, pending.rewritingPages {} else {
                        throw StoreError.keyChangeInProgress(path: path, running: pending.rewritingPages
                            ? "being encrypted (its pages are written again by the next handle that opens it)" : "having its key changed")
                    }
                }
                // The small databases are read in their old form, then written in the new one by this transaction.
                let small = try [MetaTable.databaseName, ChangeLog.databaseName].map { ($0, try entries(of: $0, in: txn)) }
                txn.keyring = next
                for (name, entries) in small { try rewrite(entries, of: name, in: txn) }
                var total = 0
                for name in header.catalog.entities.map(\.database) + [HistoryLog.entriesDatabase, HistoryLog.modelsDatabase] {
                    if let dbi = try txn.openDatabase(name, flags: 0, create: false) { total += try txn.entryCount(dbi) }
                }
                try header.meta.put(.encryption, EncryptionRecord(epochs: next.epochs.map { epoch in
                    next.cipher(epoch: epoch).map { .init(epoch: epoch, salt: $0.salt, check: $0.checkValue) } ?? .plain
                }).encoded(), in: txn)
                try header.meta.put(.keyRotation, KeyRotationRecord(total: total).encoded(), in: txn)
                try header.meta.put(.state, StateRecord(generation: header.state.generation &+ 1, migrating: false).encoded(), in: txn)
                // Plain and sealed values side by side: no earlier Strata reads that (a rotation keeps format 3).
                if next.hasPlainValues { try setFormat(FormatRecord.versionChangingEncryption, meta: header.meta, in: txn) }
                // Installed under the write lock: no other writer of this process writes before the record lists the form.
                environment.install(next, replacing: true)
            }
        } catch {
            if let old { environment.install(old, replacing: true) } else { environment.uninstallKeyring() }
            throw error
        }
    }

    /// The values of a small database (in the transaction's current form, read as plain values), except those that
    /// do not open (left as they are, for verification to report).
    private static func entries(of name: String, in txn: Transaction) throws -> [(key: [UInt8], value: [UInt8])] {
        guard let dbi = try txn.openDatabase(name, flags: 0, create: false) else { return [] }
        var entries: [(key: [UInt8], value: [UInt8])] = []
        let cursor = try txn.cursor(dbi)
        var entry = try cursor.first()
        while let e = entry {
            if !SealedValue.isUnopenable(e.value) && !SealedValue.isUnknownKey(e.value) {
                entries.append((Array(e.key), Array(e.value)))
            }
            entry = try cursor.next()
        }
        return entries
    }

    /// Writes `entries` back into database `name`, in the transaction's current form.
    private static func rewrite(_ entries: [(key: [UInt8], value: [UInt8])], of name: String, in txn: Transaction) throws {
        guard !entries.isEmpty, let dbi = try txn.openDatabase(name, flags: 0, create: false) else { return }
        for e in entries {
            try e.key.withUnsafeBytes { k in try e.value.withUnsafeBytes { v in _ = try txn.put(dbi, key: k, value: v) } }
        }
    }

    /// Sets the store's format number.
    private static func setFormat(_ version: UInt16, meta: MetaTable, in txn: Transaction) throws {
        guard var format = try meta.read(.format, in: txn, FormatRecord.init(decoding:)) else {
            throw StoreError.corrupted(path: meta.path, reason: .metadata("the format record is missing"))
        }
        format.formatVersion = version
        try meta.put(.format, format.encoded(), in: txn)
    }

    /// When a batch of the sweep (or of the page rewrite) ends: after `limit` entries (at least one) or `seconds`,
    /// the clock read every 64 entries.
    struct Budget {
        let limit: Int
        let began = DispatchTime.now().uptimeNanoseconds
        let nanoseconds: UInt64

        init(limit: Int, seconds: Double) {
            self.limit = max(1, limit)
            nanoseconds = UInt64(max(0, seconds) * 1e9)
        }

        /// Whether a batch that visited `visited` entries is done.
        func isSpent(after visited: Int) -> Bool {
            visited >= limit || (visited & 63 == 63 && DispatchTime.now().uptimeNanoseconds - began > nanoseconds)
        }
    }

    /// What one batch of the sweep did.
    struct Batch {
        var resealed = 0
        var remaining = 0
        /// The batch rewrote the last value and retired the old form.
        var finished = false
        /// An encryption's pages are all written again: its free pages are to be overwritten (``endEncrypting(_:)``).
        var freePagesDue = false
    }

    /// Ends an encryption whose pages were written again: overwrites the free pages (``FreePageScrub``), then, in a
    /// transaction of its own, removes the `keyRotation` record and sets format 3. A kill in between leaves the record:
    /// the next handle scrubs again (dropping a filler database a kill left).
    static func endEncrypting(_ model: BoundModel, environment: Environment) throws {
        try FreePageScrub.run(environment)
        try environment.write { txn in
            guard let r = try KeyRotationRecord.read(model.meta, in: txn), r.phase == .freePages else { return }
            try model.meta.delete(.keyRotation, in: txn)
            try setFormat(FormatRecord.versionEncrypted, meta: model.meta, in: txn)
        }
    }

    /// One batch of the sweep, in `txn` (a maintenance batch's): at most `limit` values and `seconds`; nil when no key
    /// change runs (or an encryption's page rewrite waits for another environment, ``PageRewrite``). Values already in
    /// the current form (the app's writes since the change began) are passed over — a value is in the form it opens
    /// in (``Cursor/lastEpoch``); a record's index entries move from the old form's keys to the new one's with it.
    static func sweep(model: BoundModel, catalog: Catalog, txn: Transaction, limit: Int, seconds: Double) throws -> Batch? {
        guard var r = try KeyRotationRecord.read(model.meta, in: txn) else { return nil }
        switch r.phase {
        case .values:
            break
        case .pages:
            // After encrypting: the pages written again, in an environment that never held plain pages.
            guard var batch = try PageRewrite.batch(&r, model: model, txn: txn, limit: limit, seconds: seconds) else { return nil }
            if batch.finished {
                r = KeyRotationRecord(total: 1)
                r.phase = .freePages
                batch.finished = false
                batch.remaining = 1
            }
            try model.meta.put(.keyRotation, r.encoded(), in: txn)
            return batch
        case .freePages:
            // Then the free pages overwritten, outside this transaction (``endEncrypting(_:)``).
            guard !txn.environment.wrotePlainPages.load(ordering: .relaxed) else { return nil }
            var batch = Batch()
            batch.freePagesDue = true
            batch.remaining = 1
            return batch
        }
        let path = txn.environment.path
        guard let keyring = txn.keyring, keyring.isRotating else {
            // A handle of this process ended the change (its keyring is the new one) or the record outlived it.
            throw StoreError.encryptionKeyRequiredDuringRotation(path: path)
        }
        var targets: [(name: String, binding: EntityBinding?)] = model.entities.compactMap { b in
            catalog.entity(tag: b.tag).map { ($0.database, b) }
        }
        targets += [(HistoryLog.entriesDatabase, nil), (HistoryLog.modelsDatabase, nil)]
        let budget = Budget(limit: limit, seconds: seconds)
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
            var entry = try r.firstEntryLeft(in: target.name, cursor) { try $0.next() }
            while let e = entry {
                if budget.isSpent(after: visited) {
                    r.cursorDatabase = target.name
                    try model.meta.put(.keyRotation, r.encoded(), in: txn)
                    batch.remaining = r.remaining
                    return batch
                }
                visited += 1
                r.passed += 1
                r.cursorKey = Array(e.key)
                // Values already in the current form (the app's writes since the change began) are passed over.
                if cursor.lastEpoch != keyring.currentEpoch,
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
        // Nothing is in the old form any more: retire it.
        if let current = keyring.current {
            try model.meta.put(.encryption, EncryptionRecord(epochs: [
                .init(epoch: current.epoch, salt: current.salt, check: current.checkValue),
            ]).encoded(), in: txn)
            if keyring.hasPlainValues {
                // Encrypted: the pages are written again next (the format stays 4 until then).
                var pages = KeyRotationRecord(total: try PageRewrite.entries(in: txn))
                pages.phase = .pages
                try model.meta.put(.keyRotation, pages.encoded(), in: txn)
                batch.finished = true
                return batch
            }
        } else {
            // Decrypted: an unencrypted store's format, 2 while it keeps a change history.
            try model.meta.delete(.encryption, in: txn)
            let history = try HistoryState.read(model.meta, in: txn)?.isEnabled ?? false
            try setFormat(history ? FormatRecord.versionWithHistory : FormatRecord.versionWithoutHistory, meta: model.meta, in: txn)
        }
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

    /// Values left in the old form (at most) by the key change under way, none when none runs.
    struct Remaining {
        /// A rotation's values under the previous key, an encryption's plain values, a decryption's sealed ones.
        var underPreviousKey: Int?
        var toEncrypt: Int?
        var toDecrypt: Int?
    }

    /// What the key change under way has left, which the `encryption` record tells apart.
    static func remaining(_ meta: MetaTable, in txn: Transaction) throws -> Remaining {
        guard let record = try KeyRotationRecord.read(meta, in: txn) else { return Remaining() }
        let left = record.remaining
        if record.rewritingPages { return Remaining(toEncrypt: left) }
        let epochs = try EncryptionRecord.read(meta, in: txn)?.epochs ?? []
        if epochs.first?.isPlain == true { return Remaining(toDecrypt: left) }
        if epochs.contains(where: \.isPlain) { return Remaining(toEncrypt: left) }
        return Remaining(underPreviousKey: left)
    }
}
