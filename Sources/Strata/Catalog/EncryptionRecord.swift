import Foundation

/// The `meta` record of an encrypted store, kept in the clear (it is read before the key is checked):
///
/// ```
/// u8      record version (2; version 1 held one key, of epoch 1, without the count and epoch bytes)
/// u8      cipher: 1 = AES-256-GCM, subkeys by HKDF-SHA256
/// u8      number of key epochs the store's values may be sealed under (2 while a key rotation runs)
/// each, the current one first:
///   u8    key epoch (1 to 15: the low bits of its values' marker byte)
///   u8    salt length (32), then the epoch's random salt
///   u8    key check length (32), then HMAC-SHA256 of a constant under the epoch's key-check subkey
/// ```
///
/// An unencrypted store has no such record.
struct EncryptionRecord: Equatable {
    static let version: UInt8 = 2
    static let aes256GCM: UInt8 = 1

    /// One key epoch: its salt and key check.
    struct Epoch: Equatable {
        var epoch: UInt8
        var salt: [UInt8]
        var check: [UInt8]
    }

    /// The epochs, the current one (which writes use) first.
    var epochs: [Epoch]

    var current: Epoch { epochs[0] }

    func encoded() -> [UInt8] {
        var w = BinaryWriter()
        w.u8(EncryptionRecord.version)
        w.u8(EncryptionRecord.aes256GCM)
        w.u8(UInt8(epochs.count))
        for e in epochs {
            w.u8(e.epoch)
            w.u8(UInt8(e.salt.count))
            w.raw(e.salt)
            w.u8(UInt8(e.check.count))
            w.raw(e.check)
        }
        return w.bytes
    }

    init(epochs: [Epoch]) {
        self.epochs = epochs
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        let version = try r.u8()
        guard version == 1 || version == EncryptionRecord.version else { throw DecodeFailure("encryption record version \(version)") }
        let cipher = try r.u8()
        guard cipher == EncryptionRecord.aes256GCM else { throw DecodeFailure("unknown cipher \(cipher)") }
        let count = version == 1 ? 1 : Int(try r.u8())
        guard (1...2).contains(count) else { throw DecodeFailure("\(count) key epochs") }
        var epochs: [Epoch] = []
        for _ in 0..<count {
            let epoch = version == 1 ? 1 : try r.u8()
            let salt = Array(try r.bytes(Int(try r.u8())))
            let check = Array(try r.bytes(Int(try r.u8())))
            guard (1...15).contains(epoch), salt.count == StoreCipher.saltSize, check.count == 32,
                  !epochs.contains(where: { $0.epoch == epoch }) else {
                throw DecodeFailure("an encryption record of \(bytes.count) bytes")
            }
            epochs.append(Epoch(epoch: epoch, salt: salt, check: check))
        }
        guard r.isAtEnd else { throw DecodeFailure("an encryption record of \(bytes.count) bytes") }
        self.epochs = epochs
    }

    /// The store's encryption record, or nil for an unencrypted store.
    static func read(_ meta: MetaTable, in txn: Transaction) throws -> EncryptionRecord? {
        try meta.read(.encryption, in: txn, EncryptionRecord.init(decoding:))
    }
}

extension StoreKeyring {
    /// Whether this keyring is the one `record` describes (same current epoch, same epochs).
    func covers(_ record: EncryptionRecord) -> Bool {
        holds(current: record.current.epoch, epochs: record.epochs.map(\.epoch))
    }
}
