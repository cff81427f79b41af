/// The ciphers an encrypted store's values may be sealed under: the current one, which every write uses, and
/// while a key rotation runs (<doc:Encryption>) the retiring ones, which still open the values the rotation's
/// sweep has not reached. Immutable: a rotation installs a new keyring.
// `@unchecked`: immutable, its ciphers `@unchecked Sendable` for the same reason.
final class StoreKeyring: @unchecked Sendable {
    let current: StoreCipher
    /// Every cipher, current first.
    let ciphers: [StoreCipher]
    /// Ciphers by key epoch (1 to 15).
    private let byEpoch: [StoreCipher?]

    init(current: StoreCipher, retiring: [StoreCipher] = []) {
        self.current = current
        ciphers = [current] + retiring
        var byEpoch = [StoreCipher?](repeating: nil, count: 16)
        for cipher in ciphers { byEpoch[Int(cipher.epoch & 0x0F)] = cipher }
        self.byEpoch = byEpoch
    }

    /// Whether a rotation is under way: values may be sealed under more than one key.
    var isRotating: Bool { ciphers.count > 1 }

    /// The cipher of key epoch `epoch`, or nil when this keyring has none.
    @inline(__always)
    func cipher(epoch: UInt8) -> StoreCipher? { byEpoch[Int(epoch & 0x0F)] }

    /// The index keys `encoding` may be stored under: the current cipher's first (the one writes use).
    func indexKeys(_ encoding: [UInt8]) -> [[UInt8]] { ciphers.map { $0.indexKey(encoding) } }

    /// Whether this keyring holds exactly the epochs `epochs` lists, with the same current one.
    func holds(current: UInt8, epochs: [UInt8]) -> Bool {
        self.current.epoch == current && Set(ciphers.map(\.epoch)) == Set(epochs)
    }
}
