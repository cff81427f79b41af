import Foundation

/// The `meta` record of an encrypted store, kept in the clear (it is read before the key is checked):
///
/// ```
/// u8      record version (2, or 3 when it lists the plain epoch; version 1 held one key, of epoch 1, without the
///         count and epoch bytes)
/// u8      cipher: 1 = AES-256-GCM, subkeys by HKDF-SHA256
/// u8      number of key epochs the store's values may be stored under (2 while a key change runs)
/// each, the current one first:
///   u8    key epoch (1 to 15: the low bits of its values' marker byte; 0: plain, no key — version 3 only)
///   u8    salt length (32; 0 for the plain epoch), then the epoch's random salt
///   u8    key check length (32; 0 for the plain epoch), then HMAC-SHA256 of a constant under the epoch's key-check
///         subkey
/// ```
///
/// An unencrypted store has no such record. While a store is being encrypted the record lists its key's epoch,
/// then the plain one; while it is being decrypted, the plain one, then its key's. (The store's format is then 4,
/// which a Strata that cannot read plain and sealed values side by side refuses.)
struct EncryptionRecord: Equatable {
    static let version: UInt8 = 2
    /// The version of a record that lists the plain epoch.
    static let versionWithPlainEpoch: UInt8 = 3
    static let aes256GCM: UInt8 = 1

    /// One key epoch: its salt and key check.
    struct Epoch: Equatable {
        var epoch: UInt8
        var salt: [UInt8]
        var check: [UInt8]

        /// The plain form: values not sealed (the store is being encrypted or decrypted).
        static let plain = Epoch(epoch: StoreKeyring.plainEpoch, salt: [], check: [])
        var isPlain: Bool { epoch == StoreKeyring.plainEpoch }
    }

    /// The epochs, the current one (which writes use) first.
    var epochs: [Epoch]

    var current: Epoch { epochs[0] }

    func encoded() -> [UInt8] {
        var w = BinaryWriter()
        w.u8(epochs.contains(where: \.isPlain) ? EncryptionRecord.versionWithPlainEpoch : EncryptionRecord.version)
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
        guard (1...EncryptionRecord.versionWithPlainEpoch).contains(version) else { throw DecodeFailure("encryption record version \(version)") }
        let cipher = try r.u8()
        guard cipher == EncryptionRecord.aes256GCM else { throw DecodeFailure("unknown cipher \(cipher)") }
        let count = version == 1 ? 1 : Int(try r.u8())
        guard (1...2).contains(count) else { throw DecodeFailure("\(count) key epochs") }
        var epochs: [Epoch] = []
        for _ in 0..<count {
            let epoch = version == 1 ? 1 : try r.u8()
            let salt = Array(try r.bytes(Int(try r.u8())))
            let check = Array(try r.bytes(Int(try r.u8())))
            let plain = epoch == StoreKeyring.plainEpoch && version == EncryptionRecord.versionWithPlainEpoch && count == 2
                && salt.isEmpty && check.isEmpty
            guard plain || ((1...15).contains(epoch) && salt.count == StoreCipher.saltSize && check.count == 32),
                  !epochs.contains(where: { $0.epoch == epoch }) else {
                throw DecodeFailure("an encryption record of \(bytes.count) bytes")
            }
            epochs.append(Epoch(epoch: epoch, salt: salt, check: check))
        }
        guard r.isAtEnd, version != EncryptionRecord.versionWithPlainEpoch || epochs.contains(where: \.isPlain) else {
            throw DecodeFailure("an encryption record of \(bytes.count) bytes")
        }
        self.epochs = epochs
    }

    /// The store's encryption record, or nil for an unencrypted store.
    static func read(_ meta: MetaTable, in txn: Transaction) throws -> EncryptionRecord? {
        try meta.read(.encryption, in: txn, EncryptionRecord.init(decoding:))
    }
}

extension StoreKeyring {
    /// Whether this keyring is the one `record` describes (same current epoch, same epochs, the plain one included).
    func covers(_ record: EncryptionRecord) -> Bool {
        holds(current: record.current.epoch, epochs: record.epochs.map(\.epoch))
    }
}
