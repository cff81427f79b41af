import Crypto
import Foundation

extension Store {
    /// Begins rotating the key of the encrypted store at `url` to `newKey`, online (<doc:Encryption>).
    ///
    /// `configuration.encryption` holds the store's current key. One short transaction makes `newKey` the key every
    /// write uses and re-seals the store's metadata and change log; the store's maintenance then re-seals every
    /// other value in bounded write transactions — in the background of any handle opened with both keys, or now
    /// with ``performMaintenance(batchSize:progress:)`` — and a kill loses at most the batch in flight. Until
    /// ``maintenanceStatus()`` has no ``MaintenanceStatus/valuesUnderPreviousKey`` left, open the store with both
    /// keys, `StoreEncryption(key: newKey, previousKeys: [oldKey])`; afterwards the old key opens nothing.
    ///
    /// Like a migration, the rotation changes the store's generation: handles opened before it throw
    /// ``StoreError/modelChanged(path:)`` on their next transaction and are opened again with both keys.
    ///
    /// - Throws: ``StoreError/Code-swift.struct/keyRotationInProgress`` when a rotation runs already,
    ///   ``StoreError/Code-swift.struct/migrationInProgress`` during a migration, the opening errors of
    ///   ``StoreConfiguration/encryption`` for a wrong or missing current key.
    public static func rotateEncryptionKey(at url: URL, to newKey: SymmetricKey, configuration: StoreConfiguration) throws {
        guard configuration.encryption != nil else { throw StoreError.encryptionKeyRequired(path: url.storePath) }
        if configuration.readOnly { throw StoreError.readOnly }
        try StoreOpener.withExistingEnvironment(at: url, configuration: configuration, schemas: []) { environment, _ in
            try KeyRotation.begin(environment: environment, .rotate(to: newKey))
        }
    }
}
