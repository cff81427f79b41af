/// Which values of an LMDB database an encrypted store seals, under which subkey, and the label that goes into
/// their associated data (see ``SealedValue``). A pure function of the database's name.
///
/// | database | sealed | label |
/// |---|---|---|
/// | `e<tag>-<generation>` (an entity's records) | every value, with the record subkey | `e<tag>` (the same in every generation, so a migration's copy opens) |
/// | `meta` | every value but `format` and `encryption`, with the metadata subkey | `meta` |
/// | `changes`, `history`, `historymodels` | every value, with the metadata subkey | the name |
/// | links (`l…`), indexes (`i…`), `m.assoc`, `m.lookup` | nothing: their values are object IDs; index and lookup keys are keyed hashes (``StoreCipher/indexKey(_:)``) | — |
struct SealScope: Sendable, Equatable {
    enum Subkey: UInt8, Sendable { case records, metadata }

    let subkey: Subkey
    let label: [UInt8]
    /// Keys of the database left in the clear (the `meta` records read before the key is checked).
    let clearKeys: [[UInt8]]

    /// The scope of the database called `name`, or nil when its values stay in the clear.
    static func of(database name: String) -> SealScope? {
        switch name {
        case "meta":
            return SealScope(subkey: .metadata, label: Array(name.utf8), clearKeys: [Array("format".utf8), Array("encryption".utf8)])
        case "changes", "history", "historymodels":
            return SealScope(subkey: .metadata, label: Array(name.utf8), clearKeys: [])
        default:
            let bytes = Array(name.utf8)
            guard bytes.first == UInt8(ascii: "e"), let dash = bytes.firstIndex(of: UInt8(ascii: "-")), dash > 1,
                  bytes[1..<dash].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            return SealScope(subkey: .records, label: Array(bytes[..<dash]), clearKeys: [])
        }
    }

    /// Whether the value under `key` is sealed.
    @inline(__always)
    func seals(key: UnsafeRawBufferPointer) -> Bool {
        if clearKeys.isEmpty { return true }
        for clear in clearKeys where clear.count == key.count && clear.elementsEqual(key) { return false }
        return true
    }
}
