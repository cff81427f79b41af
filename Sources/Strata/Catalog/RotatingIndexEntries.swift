/// Index entries while an encrypted store's key rotates: index keys are HMACs under the store's key, so an
/// object's entries live under the retiring key's hash until they are moved to the current key's. Here, below
/// the writers (objects, models) and the rotation's sweep (maintenance), which all move them.
enum RotatingIndexEntries {
    /// Moves the entries of object `id` in `indexes` (its `values` unchanged) from the retiring keys' hashes to the
    /// current key's, while a rotation runs. Wherever a record is written again under the current key with indexed
    /// values it keeps — an update, a layout rewrite — its entries must move with it: the sweep passes over a record
    /// already under the current key, and entries left under a retiring key's hash would vanish with that key.
    static func moveToCurrentKey(_ indexes: [IndexBinding], values: [Value], id: UInt64, in txn: Transaction) throws {
        guard let keyring = txn.keyring, keyring.isRotating else { return }
        for index in indexes where !values[index.attribute].isNull {
            let encoding = IndexKey.plainEncoding(values[index.attribute])
            try ObjectKey.with(id) { v in
                for old in keyring.ciphers.dropFirst() {
                    try old.indexKey(encoding).withUnsafeBytes { k in _ = try txn.delete(index.dbi, key: k, value: v) }
                }
                try keyring.current.indexKey(encoding).withUnsafeBytes { k in
                    _ = try txn.put(index.dbi, key: k, value: v, flags: LMDBFlags.noDupData)
                }
            }
        }
    }
}
