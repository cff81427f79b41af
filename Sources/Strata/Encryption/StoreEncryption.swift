import Crypto

/// The key that encrypts a store at rest (<doc:Encryption>), set as ``StoreConfiguration/encryption``.
///
/// The app supplies a 256-bit `SymmetricKey` (from the Keychain, a password-derived key, a key server) every
/// time it opens the store; Strata never writes the key anywhere. A new store created with a key is encrypted;
/// an existing store must be opened with the key it was created with:
///
/// ```swift
/// var configuration = StoreConfiguration()
/// configuration.encryption = StoreEncryption(key: key)
/// let store = try Store(at: url, schema: schema, configuration: configuration)
/// ```
///
/// Opening an encrypted store without a key throws ``StoreError/Code-swift.struct/encryptionKeyRequired``, with
/// another key ``StoreError/Code-swift.struct/wrongEncryptionKey``, and opening an unencrypted store with a key
/// ``StoreError/Code-swift.struct/storeNotEncrypted``; none of them writes anything.
// `@unchecked`: `SymmetricKey` is an immutable value that swift-crypto does not mark `Sendable` on every platform.
public struct StoreEncryption: @unchecked Sendable {
    /// The app's key: 256 bits. Another size is refused at open with
    /// ``StoreError/Code-swift.struct/invalidEncryptionKey``.
    public var key: SymmetricKey
    /// The store's earlier keys, needed while a key rotation (``Store/rotateEncryptionKey(to:)``) has values
    /// left under them — until ``Store/maintenanceStatus()`` says the rotation is done. Empty by default.
    public var previousKeys: [SymmetricKey]

    /// Encryption with `key`, a 256-bit key the app keeps, and while a rotation from them runs, the earlier keys.
    public init(key: SymmetricKey, previousKeys: [SymmetricKey] = []) {
        self.key = key
        self.previousKeys = previousKeys
    }

    /// The key's size Strata accepts, in bits.
    public static let keySizeInBits = 256
}
