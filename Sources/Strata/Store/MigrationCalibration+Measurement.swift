import Crypto
import Foundation

/// Measuring a store's per-record costs for an estimate: writes in a scratch store beside it.
extension MigrationCalibration {
    /// Measures the costs on the store of `environment` (read only) and in a scratch environment.
    static func measure(environment: Environment, header: StoreHeader, schema: Schema) throws -> MigrationCalibration {
        var samples: [[UInt8]] = []
        var rows: [(entity: String, values: [Value])] = []
        var averageBytes: [String: Double] = [:]
        var readSeconds = 0.0, decodeSeconds = 0.0, encodeSeconds = 0.0
        try environment.read { txn in
            let model = try header.bind(schema, in: txn)
            for binding in model.entities {
                guard samples.count < sampleTotal else { break }
                let limit = min(samplePerEntity, sampleTotal - samples.count)
                // The records, copied once (the timings below read them where LMDB keeps them).
                var ids: [UInt64] = []
                var bytes = 0
                let cursor = try txn.cursor(binding.dbi)
                var entry = try cursor.first()
                while let e = entry, ids.count < limit {
                    let id = try ObjectKey.decode(e.key)
                    ids.append(id)
                    bytes += e.value.count
                    samples.append(Array(e.value))
                    entry = try cursor.next()
                }
                guard !ids.isEmpty else { continue }
                averageBytes[binding.name] = Double(bytes) / Double(ids.count)
                for (k, record) in samples.suffix(ids.count).enumerated() {
                    rows.append((binding.name, try record.withUnsafeBytes { try binding.decodeValues($0, id: ids[k]) }))
                }
                // Each pass timed several times, the fastest kept (``timedPasses``).
                let view = ObjectView(binding: binding)
                var values: [Value] = []
                var writer = BinaryWriter(capacity: 512)
                var passes: [(Double, Double, Double)] = []
                for _ in 0..<timedPasses {
                    let c = try txn.cursor(binding.dbi)
                    var t = MonotonicClock.now()
                    var e = try c.first()
                    var n = 0
                    while let entry = e, n < ids.count {
                        try view.show(entry.value, id: ids[n])
                        n += 1
                        e = try c.next()
                    }
                    let read = MonotonicClock.now() - t
                    t = MonotonicClock.now()
                    e = try c.first()
                    n = 0
                    while let entry = e, n < ids.count {
                        try binding.decodeValues(entry.value, id: ids[n], into: &values)
                        n += 1
                        e = try c.next()
                    }
                    let decode = MonotonicClock.now() - t
                    // Encoding the last record's values again and again: records of one entity are alike.
                    t = MonotonicClock.now()
                    for k in 0..<ids.count {
                        writer.reset()
                        try binding.encode(values, id: ids[k], into: &writer)
                    }
                    let encode = MonotonicClock.now() - t
                    passes.append((read, decode, encode))
                }
                view.invalidate()
                readSeconds += fastest(passes.map(\.0))
                decodeSeconds += fastest(passes.map(\.1))
                encodeSeconds += fastest(passes.map(\.2))
            }
        }
        guard !samples.isEmpty else {
            var c = unmeasured
            c.commitSeconds = measureWrites(samples: [[UInt8](repeating: 0, count: 64)])?.commit ?? unmeasured.commitSeconds
            return c
        }
        let n = Double(samples.count)
        let encrypted = environment.cipher != nil
        if encrypted {
            // An encrypted store's plain records never reach the scratch files: writes are timed on random bytes
            // of their sizes plus a seal's (<doc:Encryption>).
            samples = samples.map { sample in (0..<(sample.count + SealedValue.overhead)).map { _ in UInt8.random(in: 0...255) } }
        }
        // Where no scratch environment can be written, writes count as free and commits as 2 ms each.
        let writes = measureWrites(samples: samples) ?? (put: 0, commitPerByte: 0, commit: unmeasured.commitSeconds)
        let inserts = measureInserts(schema: schema, rows: rows, encrypted: encrypted) ?? (encodeSeconds + writes.put) / n
        return MigrationCalibration(
            sampledRecords: samples.count,
            readSecondsPerRecord: readSeconds / n,
            decodeSecondsPerRecord: max(decodeSeconds / n, readSeconds / n),
            encodeSecondsPerRecord: encodeSeconds / n,
            writeSecondsPerRecord: writes.put / n,
            insertSecondsPerRecord: inserts,
            commitSecondsPerByte: writes.commitPerByte,
            commitSeconds: writes.commit,
            averageRecordBytes: averageBytes)
    }

    /// Times inserting the sampled objects (their decoded values) into a new store of the same model in the
    /// temporary directory (removed afterwards), in a write transaction that is rolled back, ``timedPasses`` times
    /// (the fastest kept). Seconds per object; nil when the scratch store cannot be made. The scratch store of an
    /// `encrypted` store is encrypted too, under a random key it forgets.
    static func measureInserts(schema: Schema, rows: [(entity: String, values: [Value])], encrypted: Bool) -> Double? {
        guard !rows.isEmpty else { return nil }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-calibration-\(CurrentProcess.id)-\(UInt32.random(in: 0...UInt32.max)).store")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = StoreConfiguration()
        if encrypted { configuration.encryption = StoreEncryption(key: .init(size: .bits256)) }
        guard let store = try? Store.open(at: directory, schema: schema, configuration: configuration) else { return nil }
        struct RolledBack: Error {}
        var times: [Double] = []
        for _ in 0..<timedPasses {
            var seconds = Double.infinity
            do {
                try store.write { context in
                    context.checksMinimumCountsAtCommit = false
                    let start = MonotonicClock.now()
                    for row in rows { _ = try context.insert(row.entity, orderedValues: row.values) }
                    seconds = MonotonicClock.now() - start
                    throw RolledBack()
                }
            } catch is RolledBack {
                times.append(seconds)
            } catch {
                store.close()
                return nil
            }
        }
        store.close()
        return fastest(times) / Double(rows.count)
    }

    /// Times appending `samples` in one durable transaction of a scratch environment, and a commit of one
    /// record. Returns the puts' total time, the commit's cost per byte beyond the fixed cost, and the fixed
    /// cost; nil when the scratch environment cannot be written.
    static func measureWrites(samples: [[UInt8]]) -> (put: Double, commitPerByte: Double, commit: Double)? {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-calibration-\(CurrentProcess.id)-\(UInt32.random(in: 0...UInt32.max))")
        guard (try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)) != nil else { return nil }
        defer { try? FileManager.default.removeItem(at: directory) }
        return try? measureWrites(samples: samples, in: directory)
    }

    private static func measureWrites(samples: [[UInt8]], in directory: URL) throws -> (put: Double, commitPerByte: Double, commit: Double) {
        let bytes = samples.reduce(0) { $0 + $1.count + 16 }
        let environment = try ScratchEnvironment(directory: directory, mapSize: max(64 << 20, bytes * 4))
        func transaction(_ records: ArraySlice<[UInt8]>, firstKey: UInt64) throws -> (put: Double, commit: Double) {
            try environment.appendTransaction(records, firstKey: firstKey)
        }
        // The first transaction of a new environment pays for growing its file; of the next three, the
        // fastest puts and the median commit are kept.
        _ = try transaction(samples[...], firstKey: 1)
        var puts: [Double] = [], commits: [Double] = []
        for k in 1...3 {
            let t = try transaction(samples[...], firstKey: UInt64(k * samples.count + 1))
            puts.append(t.put)
            commits.append(t.commit)
        }
        // The puts are work on this core, as the other passes are; the commits wait for the disk.
        let big = (put: fastest(puts), commit: median(commits))
        var small: [Double] = []
        for k in 0..<3 {
            small.append(try transaction(samples.prefix(1), firstKey: UInt64(4 * samples.count + 1 + k)).commit)
        }
        let fixed = median(small)
        let perByte = max(0, big.commit - fixed) / Double(max(1, bytes))
        return (big.put, perByte, fixed)
    }
}

/// The fastest of a pass's timings: the work itself, without what the machine's other tenants took from it
/// while it ran.
private func fastest(_ values: [Double]) -> Double {
    values.min() ?? 0
}

/// The median of timings (the mean of the middle two for an even count).
private func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}
