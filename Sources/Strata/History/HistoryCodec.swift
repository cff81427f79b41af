import Foundation

/// The one place history bytes are made and read: entries and the models they name are *sealed* here
/// (`seal`/`withUnsealed`: today a CRC-32C of the payload seeded with the database key, so a damaged entry or one
/// stored under the wrong key is refused, as records are; with encryption at rest, this is where they are
/// encrypted and authenticated), and encoded and decoded by one function pair each.
///
/// Entry payload (format 1):
/// `[u8 format] [u8 kind] [varint time ms] [u64 LE model id] [u8 has author] [string author]? [varint changes]
/// [varint entities]`, then per entity, tags ascending: `[varint tag] [u8 flags: 1 complete, 2 tombstones]`,
/// inserted IDs as runs `[varint runs] runs × ([varint gap] [varint length − 1])`, updates grouped by property
/// mask `[varint groups] groups × ([varint mask] [varint n] n × [varint ID delta])`, deletions
/// `[varint n] n × [varint ID delta]`, and with tombstones `[varint width]` then `width` tagged values per
/// deletion. A migration adds `[u64 LE source model id] [varint n] n × ([varint tag] [u8 step])`.
///
/// New object IDs come from one counter, so a bulk insert is one run: 100,000 inserts take a few bytes.
enum HistoryCodec {
    /// Decoding refuses a list longer than this (a damaged entry whose checksum happens to match must not make
    /// the reader allocate without bound).
    static let maximumListLength = 1 << 27

    // MARK: Sealing

    static let entrySeed = Checksum.crc32c(Array("strata.history.entry".utf8))
    static let modelSeed = Checksum.crc32c(Array("strata.history.model".utf8))

    /// `[u32 LE checksum of payload, seeded with the key] [payload]`.
    static func seal(_ payload: UnsafeRawBufferPointer, key: UInt64, seed: UInt32) -> [UInt8] {
        let keySeed = withUnsafeBytes(of: key.bigEndian) { Checksum.crc32c($0, seed: seed) }
        let crc = Checksum.crc32c(payload, seed: keySeed)
        var out = [UInt8](repeating: 0, count: 4 + payload.count)
        out.withUnsafeMutableBytes { o in
            o.storeBytes(of: crc.littleEndian, as: UInt32.self)
            if payload.count > 0 { UnsafeMutableRawBufferPointer(rebasing: o[4...]).copyMemory(from: payload) }
        }
        return out
    }

    /// Runs `body` with the payload of sealed `bytes` once they are checked.
    private static func withUnsealed<T>(_ bytes: UnsafeRawBufferPointer, key: UInt64, seed: UInt32,
                                        _ body: (UnsafeRawBufferPointer) throws(DecodeFailure) -> T) throws(DecodeFailure) -> T {
        guard bytes.count >= 4 else { throw DecodeFailure("\(bytes.count) bytes, shorter than a sealed value") }
        let stored = bytes.loadUnaligned(as: UInt32.self).littleEndian
        let payload = UnsafeRawBufferPointer(rebasing: bytes[4...])
        let keySeed = withUnsafeBytes(of: key.bigEndian) { Checksum.crc32c($0, seed: seed) }
        guard Checksum.crc32c(payload, seed: keySeed) == stored else { throw DecodeFailure("checksum mismatch") }
        return try body(payload)
    }

    /// The stored checksum of a sealed value (what a token remembers of the entry it names).
    static func storedChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        bytes.count >= 4 ? bytes.loadUnaligned(as: UInt32.self).littleEndian : 0
    }

    // MARK: Models

    static func encode(_ model: HistoryModel) -> [UInt8] {
        model.body.withUnsafeBytes { seal($0, key: model.id, seed: modelSeed) }
    }

    static func decodeModel(_ bytes: UnsafeRawBufferPointer, id: UInt64) throws(DecodeFailure) -> HistoryModel {
        try withUnsealed(bytes, key: id, seed: modelSeed) { payload throws(DecodeFailure) in try HistoryModel(decoding: payload, id: id) }
    }

    // MARK: Entries

    static func encode(_ entry: HistoryEntry, sequence: UInt64) -> [UInt8] {
        var w = BinaryWriter(capacity: 64)
        w.u8(1)
        w.u8(entry.kind.rawValue)
        w.varint(UInt64(bitPattern: entry.time))
        w.fixed(entry.modelID)
        if let author = entry.author {
            w.u8(1)
            w.string(author)
        } else {
            w.u8(0)
        }
        w.varint(entry.changeCount)
        w.varint(entry.entities.count)
        for (tag, e) in entry.entities.sorted(by: { $0.key < $1.key }) {
            w.varint(UInt64(tag))
            let hasTombstones = !e.tombstones.isEmpty && e.tombstones.count == e.deleted.count
            w.u8((e.isComplete ? 1 : 0) | (hasTombstones ? 2 : 0))
            // Inserted: runs of consecutive IDs.
            let inserted = isAscending(e.inserted) ? e.inserted : e.inserted.sorted()
            var runs: [(start: UInt64, length: UInt64)] = []
            for id in inserted {
                if let last = runs.last, last.start &+ last.length == id {
                    runs[runs.count - 1].length += 1
                } else {
                    runs.append((id, 1))
                }
            }
            w.varint(runs.count)
            var next: UInt64 = 0
            for run in runs {
                w.varint(run.start &- next)
                w.varint(run.length - 1)
                next = run.start &+ run.length
            }
            // Updated: grouped by property mask, IDs ascending within a group.
            var groups: [UInt64: [UInt64]] = [:]
            for (id, mask) in e.updated { groups[mask.bits, default: []].append(id) }
            w.varint(groups.count)
            for (mask, ids) in groups.sorted(by: { $0.key < $1.key }) {
                w.varint(mask)
                writeDeltas(isAscending(ids) ? ids : ids.sorted(), into: &w)
            }
            // Deleted, with their tombstones in the same order.
            if hasTombstones {
                let order = e.deleted.indices.sorted { e.deleted[$0] < e.deleted[$1] }
                writeDeltas(order.map { e.deleted[$0] }, into: &w)
                let width = e.tombstones.first?.count ?? 0
                w.varint(width)
                for i in order {
                    let values = e.tombstones[i]
                    for k in 0..<width { FieldCodec.encodeTagged(k < values.count ? values[k] : .null, into: &w) }
                }
            } else {
                writeDeltas(isAscending(e.deleted) ? e.deleted : e.deleted.sorted(), into: &w)
            }
        }
        if entry.kind == .migration, let m = entry.migration {
            w.fixed(m.sourceModelID)
            w.varint(m.steps.count)
            for (tag, step) in m.steps {
                w.varint(UInt64(tag))
                w.u8(step.code)
            }
        }
        return seal(w.buffer, key: sequence, seed: entrySeed)
    }

    private static func isAscending(_ ids: [UInt64]) -> Bool {
        zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }
    }

    private static func writeDeltas(_ ids: [UInt64], into w: inout BinaryWriter) {
        w.varint(ids.count)
        var previous: UInt64 = 0
        for id in ids {
            w.varint(id &- previous)
            previous = id
        }
    }

    /// Decodes the entry stored under `sequence`.
    static func decode(_ bytes: UnsafeRawBufferPointer, sequence: UInt64) throws(DecodeFailure) -> HistoryEntry {
        try withUnsealed(bytes, key: sequence, seed: entrySeed) { payload throws(DecodeFailure) in
            do {
                return try decodePayload(payload)
            } catch let failure as DecodeFailure {
                throw failure
            } catch {
                throw DecodeFailure("\(error)")
            }
        }
    }

    private static func decodePayload(_ payload: UnsafeRawBufferPointer) throws -> HistoryEntry {
        var r = BinaryReader(payload)
        let format = try r.u8()
        guard format == 1 else { throw DecodeFailure("entry format \(format)") }
        guard let kind = HistoryEntry.Kind(rawValue: try r.u8()) else { throw DecodeFailure("unknown entry kind") }
        let time = Int64(bitPattern: try r.varint())
        let modelID = try r.fixed(UInt64.self)
        let author: String?
        switch try r.u8() {
        case 0: author = nil
        case 1: author = try r.string()
        case let b: throw DecodeFailure("invalid author flag \(b)")
        }
        let declaredChanges = try r.varint()
        var entities: [UInt32: EntityChanges] = [:]
        var previousTag: UInt64? = nil
        var changes: UInt64 = 0
        for _ in 0..<(try r.count(limit: r.remaining)) {
            let tag = try r.varint()
            guard tag <= UInt64(UInt32.max), previousTag.map({ $0 < tag }) ?? true else { throw DecodeFailure("entity tag \(tag) out of order") }
            previousTag = tag
            let flags = try r.u8()
            guard flags & ~3 == 0 else { throw DecodeFailure("invalid entity flags \(flags)") }
            var e = EntityChanges()
            e.isComplete = flags & 1 != 0
            // Inserted runs.
            var next: UInt64 = 0
            for _ in 0..<(try r.count(limit: r.remaining)) {
                let (start, o1) = next.addingReportingOverflow(try r.varint())
                let length = try r.varint()
                guard !o1, length < UInt64(maximumListLength), e.inserted.count + Int(length) + 1 <= maximumListLength else {
                    throw DecodeFailure("an inserted run is out of range")
                }
                let (end, o2) = start.addingReportingOverflow(length + 1)
                guard !o2 else { throw DecodeFailure("an inserted run is out of range") }
                e.inserted.append(contentsOf: start..<end)
                next = end
            }
            // Updated groups.
            var groups = 0
            for _ in 0..<(try r.count(limit: r.remaining)) {
                let mask = PropertyMask(bits: try r.varint())
                guard !mask.isEmpty else { throw DecodeFailure("an update group names no property") }
                for id in try readDeltas(&r) { e.updated.append((id: id, properties: mask)) }
                e.properties.formUnion(mask)
                groups += 1
            }
            if groups > 1 { e.updated.sort { $0.id < $1.id } }
            e.deleted = try readDeltas(&r)
            if flags & 2 != 0 {
                // Every value takes at least one byte.
                let width = try r.count(limit: r.remaining)
                let (cells, overflow) = e.deleted.count.multipliedReportingOverflow(by: width)
                guard !overflow, cells <= r.remaining else { throw DecodeFailure("tombstones run past the end") }
                e.tombstones.reserveCapacity(e.deleted.count)
                for _ in e.deleted {
                    var values: [Value] = []
                    values.reserveCapacity(width)
                    for _ in 0..<width { values.append(try FieldCodec.decodeTagged(from: &r)) }
                    e.tombstones.append(values)
                }
            }
            changes += UInt64(e.inserted.count + e.updated.count + e.deleted.count)
            entities[UInt32(tag)] = e
        }
        guard changes == declaredChanges else { throw DecodeFailure("\(changes) changes listed, \(declaredChanges) declared") }
        var migration: HistoryEntry.MigrationPart? = nil
        if kind == .migration {
            let source = try r.fixed(UInt64.self)
            var steps: [(tag: UInt32, step: HistoryMigration.Step)] = []
            for _ in 0..<(try r.count(limit: r.remaining)) {
                let tag = try r.varint()
                guard tag <= UInt64(UInt32.max) else { throw DecodeFailure("entity tag \(tag) out of range") }
                guard let step = HistoryMigration.Step(code: try r.u8()) else { throw DecodeFailure("unknown migration step") }
                steps.append((UInt32(tag), step))
            }
            migration = HistoryEntry.MigrationPart(sourceModelID: source, steps: steps)
        }
        guard r.isAtEnd else { throw DecodeFailure("\(r.remaining) bytes past the end") }
        return HistoryEntry(kind: kind, time: time, author: author, modelID: modelID, entities: entities, migration: migration)
    }

    private static func readDeltas(_ r: inout BinaryReader) throws -> [UInt64] {
        // Every ID takes at least one byte.
        let n = try r.count(limit: min(r.remaining, maximumListLength))
        var out: [UInt64] = []
        out.reserveCapacity(n)
        var previous: UInt64 = 0
        for i in 0..<n {
            let delta = try r.varint()
            guard i == 0 || delta > 0 else { throw DecodeFailure("IDs out of order") }
            let (id, overflow) = previous.addingReportingOverflow(delta)
            guard !overflow else { throw DecodeFailure("an ID is out of range") }
            out.append(id)
            previous = id
        }
        return out
    }
}
