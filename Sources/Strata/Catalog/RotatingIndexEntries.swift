extension Transaction {
    /// Moves the entries of object `id` in `indexes` (its `values` unchanged) from the retiring keys' hashes to the
    /// current key's, while a key rotation runs (<doc:Encryption>); nothing otherwise. Wherever a record is written
    /// again under the current key with indexed values it keeps — the rotation's sweep, an update, a layout rewrite —
    /// its entries must move with it: the sweep passes over a record already under the current key, and entries left
    /// under a retiring key's hash would vanish with that key.
    func moveIndexEntriesToCurrentKey(_ indexes: [IndexBinding], values: [Value], id: UInt64) throws {
        guard let keyring, keyring.isRotating else { return }
        for index in indexes where !values[index.attribute].isNull {
            let encoding = IndexKey.plainEncoding(values[index.attribute])
            try ObjectKey.with(id) { v in
                for old in keyring.ciphers.dropFirst() {
                    try old.indexKey(encoding).withUnsafeBytes { k in _ = try delete(index.dbi, key: k, value: v) }
                }
                try keyring.current.indexKey(encoding).withUnsafeBytes { k in
                    _ = try put(index.dbi, key: k, value: v, flags: LMDBFlags.noDupData)
                }
            }
        }
    }
}
