import Foundation

/// The `meta` record of an encrypted store, kept in the clear (it is read before the key is checked):
///
/// ```
/// u8      record version (1)
/// u8      cipher: 1 = AES-256-GCM, subkeys by HKDF-SHA256
/// u8      salt length (32), then the store's random salt
/// u8      key check length (32), then HMAC-SHA256 of a constant under the key-check subkey
/// ```
///
/// An unencrypted store has no such record.
struct EncryptionRecord: Equatable {
    static let version: UInt8 = 1
    static let aes256GCM: UInt8 = 1

    var salt: [UInt8]
    var check: [UInt8]

    func encoded() -> [UInt8] {
        var w = BinaryWriter()
        w.u8(EncryptionRecord.version)
        w.u8(EncryptionRecord.aes256GCM)
        w.u8(UInt8(salt.count))
        w.raw(salt)
        w.u8(UInt8(check.count))
        w.raw(check)
        return w.bytes
    }

    init(salt: [UInt8], check: [UInt8]) {
        self.salt = salt
        self.check = check
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        let version = try r.u8()
        guard version == EncryptionRecord.version else { throw DecodeFailure("encryption record version \(version)") }
        let cipher = try r.u8()
        guard cipher == EncryptionRecord.aes256GCM else { throw DecodeFailure("unknown cipher \(cipher)") }
        salt = Array(try r.bytes(Int(try r.u8())))
        check = Array(try r.bytes(Int(try r.u8())))
        guard salt.count == StoreCipher.saltSize, check.count == 32, r.isAtEnd else {
            throw DecodeFailure("an encryption record of \(bytes.count) bytes")
        }
    }

    /// The store's encryption record, or nil for an unencrypted store.
    static func read(_ meta: MetaTable, in txn: Transaction) throws -> EncryptionRecord? {
        try meta.read(.encryption, in: txn, EncryptionRecord.init(decoding:))
    }
}
