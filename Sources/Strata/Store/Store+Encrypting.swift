import Crypto
import Foundation

extension Store {
    /// Begins encrypting the unencrypted store at `url` under `key`, online (<doc:Encryption>, "Encrypting or
    /// decrypting an existing store").
    ///
    /// `configuration` opens the store as it is — without ``StoreConfiguration/encryption``. One short transaction
    /// makes `key` the key every write seals under, seals the store's metadata and change log, and changes its format
    /// to 4 (no earlier Strata reads a store of plain and sealed values); the store's maintenance then seals every
    /// other value in bounded write transactions — in the background of any handle opened with the key, or now with
    /// ``performMaintenance(batchSize:progress:)`` — and a kill loses at most the batch in flight. From the beginning
    /// the store opens only with `key`; while ``MaintenanceStatus/valuesToEncrypt`` is not nil, some values are still
    /// plain on disk. The last batch sets format 3.
    ///
    /// ```swift
    /// try Store.encrypt(at: url, with: key, configuration: StoreConfiguration())
    /// configuration.encryption = StoreEncryption(key: key)
    /// let store = try Store.open(at: url, schema: schema, configuration: configuration)
    /// ```
    ///
    /// Like a migration, the step changes the store's generation: handles opened before it throw
    /// ``StoreError/modelChanged(path:)`` on their next transaction and are opened again with the key.
    ///
    /// - Throws: ``StoreError/Code-swift.struct/storeAlreadyEncrypted`` for an encrypted store (nothing written),
    ///   ``StoreError/Code-swift.struct/keyRotationInProgress`` while the store is being encrypted or decrypted or its
    ///   key rotated, ``StoreError/Code-swift.struct/migrationInProgress`` during a migration,
    ///   ``StoreError/Code-swift.struct/invalidEncryptionKey`` for a key that is not 256 bits.
    public static func encrypt(at url: URL, with key: SymmetricKey, configuration: StoreConfiguration) throws {
        if configuration.readOnly { throw StoreError.readOnly }
        var configuration = configuration
        if let given = configuration.encryption {
            // The key given to open the store: an encrypted store (or one being encrypted) is refused below.
            guard given.key.bitCount == StoreEncryption.keySizeInBits else { throw StoreError.invalidEncryptionKey(bits: given.key.bitCount) }
        }
        func begin(_ configuration: StoreConfiguration) throws {
            try StoreOpener.withExistingEnvironment(at: url, configuration: configuration, schemas: []) { environment, _ in
                try KeyRotation.begin(environment: environment, .encrypt(with: key))
            }
        }
        let asked = configuration.encryption
        configuration.encryption = nil
        do {
            try begin(configuration)
        } catch let error as StoreError where error.code == .encryptionKeyRequired {
            // Encrypted already (or being encrypted or decrypted): say which, opened with the key if one was given.
            guard let asked else { throw StoreError.storeAlreadyEncrypted(path: url.storePath) }
            configuration.encryption = asked
            try begin(configuration)
        }
    }

    /// Begins decrypting the encrypted store at `url`, online (<doc:Encryption>, "Encrypting or decrypting an
    /// existing store").
    ///
    /// `configuration.encryption` holds the store's key. One short transaction makes every write plain, opens the
    /// store's metadata and change log, and changes its format to 4; the store's maintenance then opens every other
    /// value in bounded write transactions — in the background of any handle opened with the key, or now with
    /// ``performMaintenance(batchSize:progress:)`` — and a kill loses at most the batch in flight. Until
    /// ``MaintenanceStatus/valuesToDecrypt`` is nil the store opens only with its key
    /// (`StoreEncryption(key: key)`); the last batch removes the key's record and sets an unencrypted store's
    /// format (1, or 2 with a change history), and from then on the store opens only without a key.
    ///
    /// Like a migration, the step changes the store's generation: handles opened before it throw
    /// ``StoreError/modelChanged(path:)`` on their next transaction and are opened again.
    ///
    /// - Throws: ``StoreError/Code-swift.struct/storeNotEncrypted`` for an unencrypted store,
    ///   ``StoreError/Code-swift.struct/keyRotationInProgress`` while the store is being encrypted or decrypted or its
    ///   key rotated, ``StoreError/Code-swift.struct/migrationInProgress`` during a migration, the opening errors of
    ///   ``StoreConfiguration/encryption`` for a wrong or missing key; nothing is written.
    public static func decrypt(at url: URL, configuration: StoreConfiguration) throws {
        if configuration.readOnly { throw StoreError.readOnly }
        guard configuration.encryption != nil else { throw StoreError.encryptionKeyRequired(path: url.storePath) }
        try StoreOpener.withExistingEnvironment(at: url, configuration: configuration, schemas: []) { environment, _ in
            try KeyRotation.begin(environment: environment, .decrypt)
        }
    }
}
