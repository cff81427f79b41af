import Foundation

/// Associations kept as runs: when consecutive source objects each make one new object of an entity, and the
/// new objects take consecutive identifiers (a split: one `Section` per `Post`), the associations of a whole
/// batch are one entry — source `s` made `destination + (s - source)` for `s` in `source ..< source + count` —
/// instead of one entry per object.
///
/// Runs live in the association database beside the single entries (8-byte source keys), under 13-byte keys
/// that sort after them: `0xFF`, the destination entity's tag, the run's first source (big-endian); the value is
/// the run's first destination (8 bytes) and its length (4 bytes), 12 bytes as a single entry's. A run is
/// written once, when it ends or its batch commits, so it commits with the objects it describes.
///
/// Runs of one entity never cover one source object twice: a mapping keeps runs only when no other mapping
/// of the stage reads its source entity (``StepRunner/associatesInRuns(_:)``), its sources arrive in key order,
/// and a second object of one entity made from the same source is a single entry.
struct AssociationRun: Equatable {
    var tag: UInt32
    var source: UInt64
    var destination: UInt64
    var count: UInt32

    static let keyPrefix: UInt8 = 0xFF
    static let keySize = 13

    /// Whether the run covers `source`, and the destination it made from it.
    func destination(for source: UInt64) -> UInt64? {
        guard source >= self.source, source - self.source < UInt64(count) else { return nil }
        return destination + (source - self.source)
    }

    /// Whether `source → id` continues the run.
    @inline(__always)
    func isContinued(by source: UInt64, _ id: UInt64) -> Bool {
        count < UInt32.max && source == self.source &+ UInt64(count) && id == destination &+ UInt64(count)
    }

    static func key(tag: UInt32, source: UInt64) -> [UInt8] {
        var key = [keyPrefix]
        withUnsafeBytes(of: tag.bigEndian) { key.append(contentsOf: $0) }
        withUnsafeBytes(of: source.bigEndian) { key.append(contentsOf: $0) }
        return key
    }

    var value: [UInt8] {
        var value: [UInt8] = []
        value.reserveCapacity(12)
        withUnsafeBytes(of: destination.bigEndian) { value.append(contentsOf: $0) }
        withUnsafeBytes(of: count.bigEndian) { value.append(contentsOf: $0) }
        return value
    }

    /// The run an entry of the association database holds, nil for a single entry (an 8-byte key).
    static func decode(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws -> AssociationRun? {
        guard key.count == keySize, key[0] == keyPrefix else {
            guard key.count == 8 else { throw DecodeFailure("association key of \(key.count) bytes") }
            return nil
        }
        guard value.count == 12 else { throw DecodeFailure("association run of \(value.count) bytes") }
        let run = AssociationRun(tag: UInt32(bigEndian: key.loadUnaligned(fromByteOffset: 1, as: UInt32.self)),
                                 source: UInt64(bigEndian: key.loadUnaligned(fromByteOffset: 5, as: UInt64.self)),
                                 destination: UInt64(bigEndian: value.loadUnaligned(as: UInt64.self)),
                                 count: UInt32(bigEndian: value.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        guard run.count > 0, run.source <= UInt64.max - UInt64(run.count), run.destination <= UInt64.max - UInt64(run.count) else {
            throw DecodeFailure("association run of \(run.count) objects from \(run.source)")
        }
        return run
    }

    /// Stores the run (appended when its key is the greatest, as it is while one entity's runs are written).
    func store(in txn: Transaction, _ associations: DatabaseHandle) throws {
        let k = Self.key(tag: tag, source: source)
        let v = value
        _ = try k.withUnsafeBytes { kb in try v.withUnsafeBytes { vb in try txn.addDuplicate(associations, key: kb, value: vb) } }
    }

    /// The stored run of entity `tag` that covers `source`, if any: the run with the greatest first source
    /// not after it.
    static func stored(covering source: UInt64, tag: UInt32, in txn: Transaction, _ associations: DatabaseHandle) throws -> AssociationRun? {
        let cursor = try txn.sharedCursor(associations)
        let after = source == .max ? nil : key(tag: tag, source: source + 1)
        var entry = try after.flatMap { k in try k.withUnsafeBytes { try cursor.seek($0) } }
        entry = entry == nil ? try cursor.last() : try cursor.previous()
        guard let entry, let run = try decode(key: entry.key, value: entry.value), run.tag == tag else { return nil }
        return run.destination(for: source) != nil ? run : nil
    }
}
