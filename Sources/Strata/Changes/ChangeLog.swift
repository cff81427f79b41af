import Foundation

/// The `changes` database: what each recent write transaction changed, keyed by its LMDB transaction ID,
/// written in the transaction itself, so that observers in other processes learn exactly which objects a
/// commit touched (a commit that is killed half-way leaves neither its data nor its entry).
///
/// Only the last ``retainedCommits`` entries are kept: each commit deletes a few of the oldest. An observer
/// that falls further behind, or finds an entry it cannot read, treats the commits as unknown changes and
/// reloads everything.
///
/// Entry: `[u32 LE CRC-32C of the rest] [u8 version = 1] [varint entities]` then per entity
/// `[u32 LE tag] [u8 complete] [u64 LE property mask] [varint n] n × [varint id] (inserted)
/// [varint n] n × ([varint id] [u64 LE mask]) (updated) [varint n] n × [varint id] (deleted)`.
enum ChangeLog {
    static let databaseName = "changes"
    /// How many recent commits the log holds.
    static let retainedCommits: UInt64 = 1024
    /// How many old entries one commit deletes at most (more than one, so the log shrinks back after bursts).
    static let prunedPerCommit = 4

    static func key(_ transactionID: UInt64) -> [UInt8] {
        withUnsafeBytes(of: transactionID.bigEndian) { Array($0) }
    }

    /// Appends `changes` to the log in `txn` (the transaction that made them) and drops the oldest entries.
    static func append(_ changes: CommitChanges, in txn: Transaction) throws {
        guard let dbi = try txn.openDatabase(databaseName, flags: 0, create: true) else { return }
        let value = encode(changes)
        try key(changes.transactionID).withUnsafeBytes { k in
            try value.withUnsafeBytes { v in _ = try txn.put(dbi, key: k, value: v) }
        }
        guard changes.transactionID > retainedCommits else { return }
        let oldest = changes.transactionID - retainedCommits
        let cursor = try txn.cursor(dbi)
        var pruned = 0
        while pruned < prunedPerCommit, let entry = try cursor.first(), let id = transactionID(of: entry.key), id <= oldest {
            try cursor.deleteCurrent()
            pruned += 1
        }
    }

    /// The entries of transactions after `after`, up to `through`, in order. A damaged entry is returned as
    /// an unknown change; a gap that may hide pruned entries is reported by `isContinuous`.
    static func entries(after: UInt64, through: UInt64, in txn: Transaction) throws -> (entries: [CommitChanges], isContinuous: Bool) {
        guard through > after else { return ([], true) }
        let isContinuous = through - after < retainedCommits
        // Absent, or created after this snapshot (then every entry is after `through` too): nothing to read.
        guard let dbi = try txn.openDatabase(databaseName, flags: 0, create: false), txn.sees(dbi) else { return ([], isContinuous) }
        let cursor = try txn.cursor(dbi)
        var result: [CommitChanges] = []
        var entry = try key(after &+ 1).withUnsafeBytes { try cursor.seek($0) }
        while let current = entry, let id = transactionID(of: current.key), id <= through {
            result.append((try? decode(current.value, transactionID: id)) ?? .unknown(transactionID: id))
            entry = try cursor.next()
        }
        return (result, isContinuous)
    }

    /// Empties the log when it holds entries of transactions that have not happened: the data file is a
    /// compacted copy (``Store/backup(to:compact:)``, `mdb_copy -c`), in which LMDB restarts transaction IDs at 1
    /// but keeps this database, keyed by the old, larger IDs. Left in place, such an entry would be read as the
    /// changes of the restored store's transaction that reaches its key without logging anything (a
    /// maintenance batch, a write that changed nothing), and observers would reload objects nobody changed.
    /// Entries below the restored IDs cannot be told apart from new ones, so the whole log goes: observers
    /// already treat a store whose transaction IDs went back as replaced (everything reloads).
    /// - Returns: whether the log was emptied.
    @discardableResult
    static func discardEntriesFromAnotherFile(environment: Environment) throws -> Bool {
        guard try environment.read({ try hasEntriesFromAnotherFile(in: $0) }) else { return false }
        return try environment.write { txn in
            // Checked again under the write lock: another process may have emptied it meanwhile.
            guard let dbi = try txn.openDatabase(databaseName, flags: 0, create: false),
                  let last = try txn.cursor(dbi).last(), let id = transactionID(of: last.key), id >= txn.id else { return false }
            try txn.drop(dbi, delete: false)
            return true
        }
    }

    /// Whether the change log, as `txn` sees it, holds entries of transaction IDs after `txn`'s: entries of
    /// another file (a compacted copy put in place of the store), which
    /// ``discardEntriesFromAnotherFile(environment:)`` drops.
    static func hasEntriesFromAnotherFile(in txn: Transaction) throws -> Bool {
        guard let dbi = try txn.openDatabase(databaseName, flags: 0, create: false), txn.sees(dbi),
              let last = try txn.cursor(dbi).last(), let id = transactionID(of: last.key) else { return false }
        return id > txn.id
    }

    private static func transactionID(of key: UnsafeRawBufferPointer) -> UInt64? {
        guard key.count == 8 else { return nil }
        return UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
    }

    // MARK: Coding

    static func encode(_ changes: CommitChanges) -> [UInt8] {
        var w = BinaryWriter(capacity: 64)
        w.fixed(UInt32(0))
        w.u8(1)
        w.varint(changes.entities.count)
        for (tag, e) in changes.entities.sorted(by: { $0.key < $1.key }) {
            w.fixed(tag)
            w.u8(e.isComplete ? 1 : 0)
            w.fixed(e.properties.bits)
            w.varint(e.inserted.count)
            for id in e.inserted { w.varint(id) }
            w.varint(e.updated.count)
            for (id, mask) in e.updated { w.varint(id); w.fixed(mask.bits) }
            w.varint(e.deleted.count)
            for id in e.deleted { w.varint(id) }
        }
        var bytes = w.bytes
        let crc = bytes.withUnsafeBytes { Checksum.crc32c(UnsafeRawBufferPointer(rebasing: $0[4...])) }
        withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { bytes[i] = $0[i] } }
        return bytes
    }

    static func decode(_ bytes: UnsafeRawBufferPointer, transactionID: UInt64) throws -> CommitChanges {
        var r = BinaryReader(bytes)
        let stored = try r.fixed(UInt32.self)
        guard Checksum.crc32c(UnsafeRawBufferPointer(rebasing: bytes[4...])) == stored else { throw DecodeFailure("changes: checksum mismatch") }
        guard try r.u8() == 1 else { throw DecodeFailure("changes: unknown version") }
        var entities: [UInt32: EntityChanges] = [:]
        // Every ID takes at least one byte: no count can exceed what remains.
        for _ in 0..<(try r.count(limit: r.remaining)) {
            let tag = try r.fixed(UInt32.self)
            var e = EntityChanges()
            e.isComplete = try r.u8() != 0
            e.properties = PropertyMask(bits: try r.fixed(UInt64.self))
            for _ in 0..<(try r.count(limit: r.remaining)) { e.inserted.append(try r.varint()) }
            for _ in 0..<(try r.count(limit: r.remaining)) {
                let id = try r.varint()
                e.updated.append((id: id, properties: PropertyMask(bits: try r.fixed(UInt64.self))))
            }
            for _ in 0..<(try r.count(limit: r.remaining)) { e.deleted.append(try r.varint()) }
            entities[tag] = e
        }
        guard r.isAtEnd else { throw DecodeFailure("changes: \(r.remaining) bytes past the end") }
        return CommitChanges(transactionID: transactionID, entities: entities)
    }
}
