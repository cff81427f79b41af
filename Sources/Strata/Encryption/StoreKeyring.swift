/// The forms an encrypted store's values may be stored in: sealed under the current cipher, which every write uses,
/// and while a key change runs (<doc:Encryption>) the retiring forms, which still open the values the change's sweep
/// has not reached. A key change is a rotation (retiring: the old key's cipher), encrypting an unencrypted store
/// (retiring: the plain form, values not sealed yet) or decrypting one (no current cipher: writes are plain; retiring:
/// the old key's cipher). Immutable: a key change installs a new keyring.
// `@unchecked`: immutable, its ciphers `@unchecked Sendable` for the same reason.
final class StoreKeyring: @unchecked Sendable {
    /// The cipher writes seal under; nil while the store is being decrypted (writes are plain).
    let current: StoreCipher?
    /// Every cipher, the current one (if any) first.
    let ciphers: [StoreCipher]
    /// Whether values may be stored plain: the store is being encrypted (values the sweep has not sealed yet) or
    /// decrypted (values written or opened since). A value that does not open as a seal is then read as it is.
    let hasPlainValues: Bool
    /// Ciphers by key epoch (1 to 15).
    private let byEpoch: [StoreCipher?]

    /// The key epoch of the plain form (no key), in the `encryption` record and in ``currentEpoch``.
    static let plainEpoch: UInt8 = 0

    /// A keyring writing under `current` (nil: plain), still opening values under `retiring`, and, with
    /// `retiringPlain`, reading values not sealed yet as they are.
    init(current: StoreCipher?, retiring: [StoreCipher] = [], retiringPlain: Bool = false) {
        self.current = current
        ciphers = (current.map { [$0] } ?? []) + retiring
        hasPlainValues = current == nil || retiringPlain
        var byEpoch = [StoreCipher?](repeating: nil, count: 16)
        for cipher in ciphers { byEpoch[Int(cipher.epoch & 0x0F)] = cipher }
        self.byEpoch = byEpoch
    }

    /// The epoch writes use: the current cipher's, or ``plainEpoch``.
    var currentEpoch: UInt8 { current?.epoch ?? StoreKeyring.plainEpoch }

    /// Whether a key change is under way: values may be stored in more than one form.
    var isRotating: Bool { ciphers.count + (hasPlainValues ? 1 : 0) > 1 }

    /// The cipher of key epoch `epoch`, or nil when this keyring has none.
    @inline(__always)
    func cipher(epoch: UInt8) -> StoreCipher? { byEpoch[Int(epoch & 0x0F)] }

    /// The index key writes use for a value whose plain encoding is `encoding`: the current cipher's keyed hash, or
    /// while decrypting the order-preserving encoding `plain` of an unencrypted store.
    func indexKey(_ encoding: [UInt8], plain: @autoclosure () -> [UInt8]) -> [UInt8] {
        current.map { $0.indexKey(encoding) } ?? plain()
    }

    /// Every index key the value may be stored under: the one writes use first, then the retiring forms' (each
    /// retiring cipher's hash, and the order-preserving encoding while the store is being encrypted).
    func indexKeys(_ encoding: [UInt8], plain: @autoclosure () -> [UInt8]) -> [[UInt8]] {
        var keys = ciphers.map { $0.indexKey(encoding) }
        if hasPlainValues {
            if current == nil { keys.insert(plain(), at: 0) } else { keys.append(plain()) }
        }
        return keys
    }

    /// The epochs this keyring holds (``plainEpoch`` for the plain form), current first.
    var epochs: [UInt8] {
        let retiring = ciphers.map(\.epoch).filter { $0 != currentEpoch }
        return [currentEpoch] + retiring + (hasPlainValues && current != nil ? [StoreKeyring.plainEpoch] : [])
    }

    /// Whether this keyring holds exactly the epochs `epochs` lists, with the same current one.
    func holds(current: UInt8, epochs: [UInt8]) -> Bool {
        currentEpoch == current && Set(self.epochs) == Set(epochs)
    }
}
