import Foundation

/// The `keyRotation` metadata record (sealed like the rest of `meta`), present while a key rotation's sweep has
/// values left under the retiring key (<doc:Encryption>):
///
/// ```
/// u8      record version (1)
/// varint  entries the sealed databases held when the rotation began, and entries the sweep has passed
/// varint  number of databases done, then each name (varint length + UTF-8)
/// string  the database the sweep is in ("" for none), then its cursor: the last key done (varint length + bytes)
/// u8      version 2 only: the phase after the values (an encryption's): 1, the store's pages being written again
///         (``PageRewrite``); 2, its free pages being overwritten (``FreePageScrub``)
/// ```
struct KeyRotationRecord: Equatable {
    static let version: UInt8 = 1

    var total: Int
    var passed: Int
    var done: [String]
    var cursorDatabase: String?
    var cursorKey: [UInt8]
    /// What an encryption does once its values are sealed: every page of the store written again, in an environment
    /// that never held plain pages, so that none keeps plain bytes in its free space; then the free pages overwritten.
    enum Phase: UInt8 {
        case values = 0, pages = 1, freePages = 2
    }
    var phase = Phase.values
    /// Whether the values are done and the pages (or free pages) are being written again.
    var rewritingPages: Bool { phase != .values }

    /// Values left under the retiring key, at most (the app's writes since the rotation began are under the new one).
    var remaining: Int { max(1, total - passed) }

    func encoded() -> [UInt8] {
        var w = BinaryWriter()
        w.u8(rewritingPages ? 2 : KeyRotationRecord.version)
        w.varint(total)
        w.varint(passed)
        w.varint(done.count)
        for name in done { w.string(name) }
        w.string(cursorDatabase ?? "")
        w.varint(cursorKey.count)
        w.raw(cursorKey)
        if rewritingPages { w.u8(phase.rawValue) }
        return w.bytes
    }

    init(total: Int) {
        self.total = total
        passed = 0
        done = []
        cursorDatabase = nil
        cursorKey = []
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        let version = try r.u8()
        guard version == KeyRotationRecord.version || version == 2 else { throw DecodeFailure("key rotation record version \(version)") }
        total = Int(clamping: try r.varint())
        passed = Int(clamping: try r.varint())
        let count = try r.varint()
        guard count <= 1 << 20 else { throw DecodeFailure("\(count) databases done") }
        done = try (0..<Int(count)).map { _ in try r.string() }
        let database = try r.string()
        cursorDatabase = database.isEmpty ? nil : database
        let length = try r.varint()
        guard length <= 511 else { throw DecodeFailure("a cursor key of \(length) bytes") }
        cursorKey = Array(try r.bytes(Int(length)))
        if version == 2 {
            guard let phase = Phase(rawValue: try r.u8()), phase != .values else {
                throw DecodeFailure("a key rotation record of an unknown phase")
            }
            self.phase = phase
        }
        guard r.isAtEnd else { throw DecodeFailure("a key rotation record of \(bytes.count) bytes") }
    }

    static func read(_ meta: MetaTable, in txn: Transaction) throws -> KeyRotationRecord? {
        try meta.read(.keyRotation, in: txn, KeyRotationRecord.init(decoding:))
    }
}

extension KeyRotationRecord {
    /// The first entry of `database` the sweep has still to do, through `cursor`: the one after the record's cursor
    /// when the last batch stopped in it (`next` steps past the cursor's key), else the first.
    func firstEntryLeft(in database: String, _ cursor: Cursor, next: (Cursor) throws -> Entry?) throws -> Entry? {
        guard cursorDatabase == database, !cursorKey.isEmpty else { return try cursor.first() }
        let entry = try cursorKey.withUnsafeBytes { try cursor.seek($0) }
        if let e = entry, e.key.elementsEqual(cursorKey) { return try next(cursor) }
        return entry
    }
}
