import Foundation

/// Checks the key an open was given against the store's encryption record (<doc:Encryption>) and, when it is the
/// store's, installs the store's cipher in its environment so that every transaction from then on seals and
/// opens values. Runs before anything else reads or writes the store; reads only.
enum StoreUnlocking {
    /// Refuses an encrypted store opened without a key (``StoreError/Code-swift.struct/encryptionKeyRequired``)
    /// or with another key (``StoreError/Code-swift.struct/wrongEncryptionKey``), and an unencrypted store opened
    /// with a key (``StoreError/Code-swift.struct/storeNotEncrypted``); nothing is written either way.
    static func unlock(_ environment: Environment, with encryption: StoreEncryption?) throws {
        let path = environment.path
        let record = try environment.read { txn -> EncryptionRecord? in
            // A file without metadata is not a store: the header's reader says so next.
            guard let dbi = try txn.openDatabase(MetaTable.databaseName, flags: 0, create: false) else { return nil }
            return try EncryptionRecord.read(MetaTable(dbi: dbi, path: path), in: txn)
        }
        switch (record, encryption) {
        case (nil, nil):
            return
        case (nil, .some):
            throw StoreError.storeNotEncrypted(path: path)
        case (.some, nil):
            throw StoreError.encryptionKeyRequired(path: path)
        case (let record?, let encryption?):
            let cipher = try cipher(for: encryption, salt: record.salt)
            guard cipher.matches(check: record.check) else { throw StoreError.wrongEncryptionKey(path: path) }
            // Another handle of this process may have installed the same key's cipher first: either serves.
            environment.install(cipher)
        }
    }

    /// The cipher of a store salted with `salt` under the app's key, refusing a key that is not 256 bits.
    static func cipher(for encryption: StoreEncryption, salt: [UInt8]) throws -> StoreCipher {
        guard encryption.key.bitCount == StoreEncryption.keySizeInBits else {
            throw StoreError.invalidEncryptionKey(bits: encryption.key.bitCount)
        }
        return StoreCipher(key: encryption.key, salt: salt)
    }

    /// The encryption record of a new store encrypted under `encryption`, with a new random salt, after installing
    /// its cipher in `environment` (the new store's, before its first write).
    static func encryptNewStore(_ environment: Environment, with encryption: StoreEncryption) throws -> EncryptionRecord {
        let cipher = try cipher(for: encryption, salt: StoreCipher.makeSalt())
        environment.install(cipher)
        return EncryptionRecord(salt: cipher.salt, check: cipher.checkValue)
    }
}
