import Crypto
import Foundation

/// An encrypted store's keys, derived from the app's key and the store's salt, and what it does with them:
/// seals and opens values (``SealedValue``), hashes index keys, and checks that a key is the store's.
///
/// Four subkeys are derived with HKDF-SHA256 from the app's 256-bit key, salted with the store's random salt
/// (so two stores under one app key share no subkey): records, metadata, index keys, and the key check. The app's
/// key itself is used for nothing else and kept nowhere.
// `@unchecked`: every property is immutable; `SymmetricKey` is not marked `Sendable` by swift-crypto on every platform.
final class StoreCipher: @unchecked Sendable {
    let salt: [UInt8]
    let checkValue: [UInt8]
    /// The key epoch this cipher seals under (1 for a store's first key; the next after each rotation).
    let epoch: UInt8
    private let recordKey: SymmetricKey
    private let metadataKey: SymmetricKey
    private let indexHashKey: SymmetricKey

    static let saltSize = 32
    static let checkInput = Array("Strata encryption key check".utf8)

    /// The cipher of the store salted with `salt`, under `key` (which must be 256 bits).
    init(key: SymmetricKey, salt: [UInt8], epoch: UInt8 = 1) {
        self.salt = salt
        self.epoch = epoch
        // HKDF-SHA256 (RFC 5869) for 32-byte keys is one extract and one HMAC block per key: the extract's
        // pseudorandom key is made once for the four. Equal to `HKDF<SHA256>.deriveKey` (a test checks it), whose
        // generic code cost an encrypted store's first open a million instructions.
        let pseudorandomKey = SymmetricKey(data: StoreCipher.bytes(of: key.withUnsafeBytes {
            HMAC<SHA256>.authenticationCode(for: $0, using: SymmetricKey(data: salt))
        }))
        func derive(_ purpose: String) -> SymmetricKey {
            SymmetricKey(data: StoreCipher.bytes(of: HMAC<SHA256>.authenticationCode(for: Array("strata \(purpose) v1".utf8) + [1],
                                                                                      using: pseudorandomKey)))
        }
        recordKey = derive("records")
        metadataKey = derive("metadata")
        indexHashKey = derive("index keys")
        checkValue = StoreCipher.bytes(of: HMAC<SHA256>.authenticationCode(for: StoreCipher.checkInput, using: derive("key check")))
    }

    /// The bytes of an authentication code, copied at once (`Array(code)` iterates it byte by byte through
    /// generic code, and its first use in a process makes the runtime scan every protocol conformance).
    static func bytes(of code: HashedAuthenticationCode<SHA256>) -> [UInt8] {
        code.withUnsafeBytes { Array($0) }
    }

    /// A new random salt for a new encrypted store.
    static func makeSalt() -> [UInt8] {
        SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }
    }

    /// Whether this cipher's key is the one that gave `storedCheck`, compared in constant time.
    func matches(check storedCheck: [UInt8]) -> Bool {
        guard storedCheck.count == checkValue.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<checkValue.count { difference |= checkValue[i] ^ storedCheck[i] }
        return difference == 0
    }

    private func key(_ subkey: SealScope.Subkey) -> SymmetricKey {
        switch subkey {
        case .records: recordKey
        case .metadata: metadataKey
        }
    }

    /// Seals a value stored under `lmdbKey` in a database of `scope`.
    func seal(_ value: UnsafeRawBufferPointer, scope: SealScope, lmdbKey: UnsafeRawBufferPointer) throws -> [UInt8] {
        try SealedValue.seal(value, key: key(scope.subkey), epoch: epoch, scope: scope.label, lmdbKey: lmdbKey)
    }

    /// Opens a sealed value into `destination` (``SealedValue/open(_:key:scope:lmdbKey:into:)``).
    func open(_ sealed: UnsafeRawBufferPointer, scope: SealScope, lmdbKey: UnsafeRawBufferPointer,
              into destination: UnsafeMutableRawBufferPointer) throws(DecodeFailure) {
        try SealedValue.open(sealed, key: key(scope.subkey), scope: scope.label, lmdbKey: lmdbKey, into: destination)
    }

    /// The index key of a value whose plain encoding is `encoding` (``IndexKey``): `0x01` followed by the
    /// HMAC-SHA256 of the encoding under the index subkey. Equal values have equal keys, so equality lookups and
    /// unique constraints work; the key says nothing else about the value, and orders nothing.
    func indexKey(_ encoding: [UInt8]) -> [UInt8] {
        [0x01] + StoreCipher.bytes(of: HMAC<SHA256>.authenticationCode(for: encoding, using: indexHashKey))
    }
}
