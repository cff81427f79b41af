/// Index entries while an encrypted store's key changes (a rotation; encrypting or decrypting the store): index keys
/// are HMACs under the store's key, or order-preserving encodings in an unencrypted store, so an object's entries
/// live in the retiring form until they are moved to the current one. Here, below
/// the writers (objects, models) and the rotation's sweep (maintenance), which all move them.
enum RotatingIndexEntries {
    /// Moves the entries of object `id` in `indexes` (its `values` unchanged) from the retiring keys' hashes to the
    /// current key's, while a rotation runs. Wherever a record is written again under the current key with indexed
    /// values it keeps — an update, a layout rewrite — its entries must move with it: the sweep passes over a record
    /// already under the current key, and entries left under a retiring key's hash would vanish with that key.
    static func moveToCurrentKey(_ indexes: [IndexBinding], values: [Value], id: UInt64, in txn: Transaction) throws {
        guard let keyring = txn.keyring, keyring.isRotating else { return }
        for index in indexes where !values[index.attribute].isNull {
            let keys = txn.indexKeys(values[index.attribute])
            try ObjectKey.with(id) { v in
                for old in keys.dropFirst() {
                    try old.withUnsafeBytes { k in _ = try txn.delete(index.dbi, key: k, value: v) }
                }
                try keys[0].withUnsafeBytes { k in
                    _ = try txn.put(index.dbi, key: k, value: v, flags: LMDBFlags.noDupData)
                }
            }
        }
    }
}
