import Crypto
import Foundation

/// Checks the key an open was given against the store's encryption record (<doc:Encryption>) and, when it is the
/// store's, installs the store's cipher in its environment so that every transaction from then on seals and
/// opens values. Runs before anything else reads or writes the store; reads only.
enum StoreUnlocking {
    /// Refuses an encrypted store opened without a key (``StoreError/Code-swift.struct/encryptionKeyRequired``)
    /// or with another key (``StoreError/Code-swift.struct/wrongEncryptionKey``), and an unencrypted store opened
    /// with a key (``StoreError/Code-swift.struct/storeNotEncrypted``); nothing is written either way.
    static func unlock(_ environment: Environment, with encryption: StoreEncryption?) throws {
        let record = try environment.read { try encryptionRecord(in: $0, path: environment.path) }
        try unlock(environment, record: record, with: encryption)
    }

    /// The store's encryption record as `txn` sees it: nil for an unencrypted store, and for a file without
    /// metadata (not a store: the header's reader says so next).
    static func encryptionRecord(in txn: Transaction, path: String) throws -> EncryptionRecord? {
        guard let dbi = try txn.openDatabase(MetaTable.databaseName, flags: 0, create: false) else { return nil }
        return try EncryptionRecord.read(MetaTable(dbi: dbi, path: path), in: txn)
    }

    /// ``unlock(_:with:)`` with the store's encryption `record` already read (``encryptionRecord(in:path:)``).
    static func unlock(_ environment: Environment, record: EncryptionRecord?, with encryption: StoreEncryption?) throws {
        let path = environment.path
        switch (record, encryption) {
        case (nil, nil):
            return
        case (nil, .some):
            throw StoreError.storeNotEncrypted(path: path)
        case (let record?, nil):
            throw record.current.isPlain ? StoreError.encryptionKeyRequiredDuringDecryption(path: path)
                : StoreError.encryptionKeyRequired(path: path)
        case (let record?, let encryption?):
            let keyring = try keyring(for: encryption, record: record, path: path)
            environment.install(keyring, replacing: environment.keyring.map { !$0.covers(record) } ?? false)
        }
    }

    /// The keyring of a store whose encryption record is `record`: the current epoch's cipher under
    /// `encryption.key`, and while a rotation runs, each retiring epoch's under one of `encryption.previousKeys`.
    static func keyring(for encryption: StoreEncryption, record: EncryptionRecord, path: String) throws -> StoreKeyring {
        for key in [encryption.key] + encryption.previousKeys where key.bitCount != StoreEncryption.keySizeInBits {
            throw StoreError.invalidEncryptionKey(bits: key.bitCount)
        }
        func cipher(_ epoch: EncryptionRecord.Epoch, from keys: [SymmetricKey]) -> StoreCipher? {
            keys.lazy.map { StoreCipher(key: $0, salt: epoch.salt, epoch: epoch.epoch) }.first { $0.matches(check: epoch.check) }
        }
        // Being decrypted: writes are plain; the values not opened yet need the store's key (given as the key, or
        // as a previous one).
        if record.current.isPlain {
            guard let sealed = record.epochs.last, !sealed.isPlain else { throw StoreError.wrongEncryptionKey(path: path) }
            guard let old = cipher(sealed, from: [encryption.key] + encryption.previousKeys) else {
                throw StoreError.wrongEncryptionKey(path: path)
            }
            return StoreKeyring(current: nil, retiring: [old])
        }
        // Being encrypted: values the sweep has not reached are plain.
        let retiringPlain = record.epochs.contains(where: \.isPlain)
        guard let current = cipher(record.current, from: [encryption.key]) else {
            // The old key given as the key while a rotation runs: the new one is needed too.
            if record.epochs.count > 1, record.epochs.dropFirst().contains(where: { cipher($0, from: [encryption.key]) != nil }) {
                throw StoreError.encryptionKeyRequiredDuringRotation(path: path)
            }
            throw StoreError.wrongEncryptionKey(path: path)
        }
        var retiring: [StoreCipher] = []
        for epoch in record.epochs.dropFirst() where !epoch.isPlain {
            guard let old = cipher(epoch, from: encryption.previousKeys) else {
                throw StoreError.encryptionKeyRequiredDuringRotation(path: path)
            }
            retiring.append(old)
        }
        return StoreKeyring(current: current, retiring: retiring, retiringPlain: retiringPlain)
    }

    /// A new cipher under `key` (which must be 256 bits) with a new random salt, for key epoch `epoch`.
    static func newCipher(key: SymmetricKey, epoch: UInt8) throws -> StoreCipher {
        guard key.bitCount == StoreEncryption.keySizeInBits else { throw StoreError.invalidEncryptionKey(bits: key.bitCount) }
        return StoreCipher(key: key, salt: StoreCipher.makeSalt(), epoch: epoch)
    }

    /// The encryption record of a new store encrypted under `encryption`, with a new random salt, after installing
    /// its keyring in `environment` (the new store's, before its first write).
    static func encryptNewStore(_ environment: Environment, with encryption: StoreEncryption) throws -> EncryptionRecord {
        let cipher = try newCipher(key: encryption.key, epoch: 1)
        environment.install(StoreKeyring(current: cipher))
        return EncryptionRecord(epochs: [.init(epoch: 1, salt: cipher.salt, check: cipher.checkValue)])
    }
}
