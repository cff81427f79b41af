/// The work a store's background maintenance has left (the `maintenance` metadata value): records still in
/// older layouts, indexes still being built, and where the sweep stopped.
///
/// Metadata-only migrations leave records in the layouts that wrote them (read through projections) and add
/// indexes without building them at open; the sweep (``Store/performMaintenance(batchSize:progress:)``, and the
/// background maintenance a store runs after open) rewrites the records into the current layout and builds
/// the indexes, in bounded write transactions that also update this record, so a kill never loses or repeats
/// work. Writers keep it exact: updating or deleting a record of an older layout decrements its count.
struct MaintenanceRecord: Sendable, Equatable {
    static let formatVersion: UInt8 = 1

    /// Records of each entity (by tag) in each older layout (by ID). An entity whose catalog lists older
    /// layouts but that has no counts here (a store migrated by an earlier version of Strata) may have records
    /// in them: the sweep passes over it once all the same.
    var oldLayoutCounts: [UInt32: [UInt32: Int]] = [:]
    /// Indexes (by tag) that writers maintain but that the sweep has not finished building: queries do not use
    /// them yet.
    var buildingIndexes: Set<UInt32> = []
    /// The entity the sweep is in and the last object it finished.
    var cursor: (entity: UInt32, lastID: UInt64)?

    static func == (a: MaintenanceRecord, b: MaintenanceRecord) -> Bool {
        a.oldLayoutCounts == b.oldLayoutCounts && a.buildingIndexes == b.buildingIndexes && a.cursor?.entity == b.cursor?.entity && a.cursor?.lastID == b.cursor?.lastID
    }

    /// Whether nothing is left to do.
    var isEmpty: Bool { oldLayoutCounts.isEmpty && buildingIndexes.isEmpty }

    /// Records of older layouts left, in all.
    var oldRecords: Int { oldLayoutCounts.values.reduce(0) { $0 + $1.values.reduce(0, +) } }

    /// Subtracts `counts` (records per layout) of entity `tag` that a writer or the sweep moved to the current
    /// layout, or deleted: a transaction's or a batch's at once. (The nested
    /// dictionary is taken out before it changes, so that it is never copied.)
    mutating func remove(entity tag: UInt32, counts: [UInt32: Int]) {
        guard var layouts = oldLayoutCounts.removeValue(forKey: tag) else { return }
        for (layout, k) in counts {
            guard let n = layouts[layout] else { continue }
            layouts[layout] = n > k ? n - k : nil
        }
        if !layouts.isEmpty { oldLayoutCounts[tag] = layouts }
    }

    func encoded() -> [UInt8] {
        var w = BinaryWriter(capacity: 64)
        w.u8(MaintenanceRecord.formatVersion)
        w.varint(oldLayoutCounts.count)
        for tag in oldLayoutCounts.keys.sorted() {
            let layouts = oldLayoutCounts[tag] ?? [:]
            w.varint(UInt64(tag))
            w.varint(layouts.count)
            for id in layouts.keys.sorted() {
                w.varint(UInt64(id))
                w.varint(UInt64(max(0, layouts[id] ?? 0)))
            }
        }
        w.varint(buildingIndexes.count)
        for tag in buildingIndexes.sorted() { w.varint(UInt64(tag)) }
        if let cursor {
            w.u8(1)
            w.varint(UInt64(cursor.entity))
            w.fixed(cursor.lastID)
        } else {
            w.u8(0)
        }
        return w.bytes
    }

    init() {}

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        let version = try r.u8()
        guard version == MaintenanceRecord.formatVersion else { throw DecodeFailure("maintenance record format \(version)") }
        func tag() throws -> UInt32 {
            let v = try r.varint()
            guard v <= UInt64(UInt32.max) else { throw DecodeFailure("tag out of range") }
            return UInt32(v)
        }
        let limit = 1 << 20
        for _ in 0..<(try r.count(limit: limit)) {
            let entity = try tag()
            var layouts: [UInt32: Int] = [:]
            for _ in 0..<(try r.count(limit: limit)) {
                let id = try tag()
                layouts[id] = try r.count(limit: Int.max)
            }
            if !layouts.isEmpty { oldLayoutCounts[entity] = layouts }
        }
        for _ in 0..<(try r.count(limit: limit)) { buildingIndexes.insert(try tag()) }
        switch try r.u8() {
        case 0: cursor = nil
        case 1: cursor = (try tag(), try r.fixed(UInt64.self))
        case let b: throw DecodeFailure("invalid cursor flag \(b)")
        }
        guard r.isAtEnd else { throw DecodeFailure("bytes after the maintenance record") }
    }

    static func read(_ meta: MetaTable, in txn: Transaction) throws -> MaintenanceRecord {
        try readIfAny(meta, in: txn) ?? MaintenanceRecord()
    }

    /// The record, or nil when the store has no maintenance left (its usual state). Opening a store asks this way:
    /// making a `MaintenanceRecord` value at all makes the Swift runtime check `UInt32: Hashable` for its
    /// dictionary the first time in a process, a scan of every protocol conformance in the binary (about 440,000
    /// instructions, a third of a process's first open).
    static func readIfAny(_ meta: MetaTable, in txn: Transaction) throws -> MaintenanceRecord? {
        try meta.read(.maintenance, in: txn, MaintenanceRecord.init(decoding:))
    }

    func write(_ meta: MetaTable, in txn: Transaction) throws {
        if isEmpty && cursor == nil {
            try meta.delete(.maintenance, in: txn)
        } else {
            try meta.put(.maintenance, encoded(), in: txn)
        }
    }
}
