import CStrataLMDB

/// Values kept per LMDB database handle, found by indexing: handles are small integers (below the environment's
/// maximum number of databases), so no hashing is needed.
///
/// It is also cheaper to make than a dictionary the first time in a process: a dictionary keyed by `MDB_dbi` makes
/// the Swift runtime check `UInt32: Hashable` by scanning every protocol conformance in the binary (about 440,000
/// instructions, once per process), which was a fifth of a process's first `Store.open`.
struct DatabaseHandleTable<Value> {
    private var slots: [Value?] = []

    /// The value kept for `dbi`, or nil; setting nil forgets it.
    subscript(dbi: MDB_dbi) -> Value? {
        get {
            let index = Int(dbi)
            return index < slots.count ? slots[index] : nil
        }
        set {
            let index = Int(dbi)
            if index >= slots.count {
                guard newValue != nil else { return }
                slots.append(contentsOf: repeatElement(nil, count: index + 1 - slots.count))
            }
            slots[index] = newValue
        }
    }

    /// Forgets every value.
    mutating func removeAll() { slots.removeAll(keepingCapacity: true) }
}

extension DatabaseHandleTable: Sendable where Value: Sendable {}
