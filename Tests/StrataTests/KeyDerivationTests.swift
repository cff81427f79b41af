import Crypto
import Foundation
@testable import Strata
import Testing

/// An encrypted store's four subkeys are HKDF-SHA256 of the app's key and the store's salt (RFC 5869): the
/// derivation Strata computes itself must give swift-crypto's `HKDF` keys exactly, or every store encrypted
/// before would no longer open.
struct KeyDerivationTests {
    static func hkdf(_ key: SymmetricKey, salt: [UInt8], purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, salt: salt, info: Array("strata \(purpose) v1".utf8), outputByteCount: 32)
    }

    @Test func theFourSubkeysAreHKDFs() throws {
        for _ in 0..<20 {
            let key = SymmetricKey(size: .bits256)
            let salt = StoreCipher.makeSalt()
            let cipher = StoreCipher(key: key, salt: salt)

            // The key check: an HMAC under the "key check" subkey.
            let check = HMAC<SHA256>.authenticationCode(for: StoreCipher.checkInput, using: Self.hkdf(key, salt: salt, purpose: "key check"))
            #expect(cipher.checkValue == Array(check))

            // Index keys: an HMAC under the "index keys" subkey.
            let encoding: [UInt8] = Array("a value".utf8)
            let indexKey = HMAC<SHA256>.authenticationCode(for: encoding, using: Self.hkdf(key, salt: salt, purpose: "index keys"))
            #expect(cipher.indexKey(encoding) == [0x01] + Array(indexKey))

            // Records and metadata: what the cipher seals opens under the HKDF subkey of its scope, and only that one.
            let plain: [UInt8] = Array("the plain value".utf8)
            let lmdbKey: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 7]
            for (database, purpose, other) in [("e3-1", "records", "metadata"), ("meta", "metadata", "records")] {
                let scope = try #require(SealScope.of(database: database))
                let sealed = try plain.withUnsafeBytes { p in try lmdbKey.withUnsafeBytes { k in try cipher.seal(p, scope: scope, lmdbKey: k) } }
                var opened = [UInt8](repeating: 0, count: plain.count)
                func open(under subkey: SymmetricKey) -> Bool {
                    sealed.withUnsafeBytes { s in lmdbKey.withUnsafeBytes { k in opened.withUnsafeMutableBytes { d in
                        (try? SealedValue.open(s, key: subkey, scope: scope.label, lmdbKey: k, into: d)) != nil
                    } } }
                }
                #expect(open(under: Self.hkdf(key, salt: salt, purpose: purpose)))
                #expect(opened == plain)
                #expect(!open(under: Self.hkdf(key, salt: salt, purpose: other)))
            }
        }
    }
}
