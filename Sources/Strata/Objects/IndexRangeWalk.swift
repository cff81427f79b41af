import Foundation

/// The entries of an index between a query condition's bounds, in key order: the one walk over an index range,
/// taken by every query that reads through an index (``ObjectCursor``, typed queries and their aggregates).
///
/// The walk starts at the lower bound's key (or the index's first entry) and ends at the first key past the upper
/// bound's. What it yields are candidates: an exclusive bound, and a bound whose key the index cuts to its key
/// length, admit objects the condition itself does not, so every caller checks the condition on each object.
///
/// Keys are compared where they lie in the memory map: no entry is copied.
final class IndexRangeWalk {
    private let transaction: Transaction
    private let cursor: Cursor
    private let lowerKey: [UInt8]?
    private let upperKey: [UInt8]?
    private var started = false

    /// A walk over `index`'s entries within `condition`'s bounds.
    init(_ condition: ObjectQuery.AttributeCondition, index: DatabaseHandle, in txn: Transaction) throws {
        transaction = txn
        cursor = try txn.cursor(index)
        lowerKey = condition.lower.map { txn.indexKey($0) }
        upperKey = condition.upper.map { txn.indexKey($0) }
    }

    /// The identifier of the object the next entry names, or nil past the upper bound or at the index's end.
    /// - Throws: ``StoreError/Code-swift.struct/corrupted`` for an entry that does not name an object.
    func next() throws -> UInt64? {
        let entry: Entry?
        if started {
            entry = try cursor.next()
        } else {
            started = true
            entry = try lowerKey.map { lower in try lower.withUnsafeBytes { try cursor.seek($0) } } ?? cursor.first()
        }
        guard let entry else { return nil }
        if let upperKey, Self.key(upperKey, precedes: entry.key) { return nil }
        return try transaction.objectID(ofKey: entry.value)
    }

    /// Whether `a` sorts before `b` in LMDB's default key order (bytes compared unsigned, a prefix first).
    static func key(_ a: [UInt8], precedes b: UnsafeRawBufferPointer) -> Bool {
        a.withUnsafeBytes { a in
            let shared = min(a.count, b.count)
            if shared > 0 {
                let order = memcmp(a.baseAddress!, b.baseAddress!, shared)
                if order != 0 { return order < 0 }
            }
            return a.count < b.count
        }
    }
}
