import BenchCore
import Foundation
import StrataBenchLMDB

/// Raw LMDB: the same records and the same work through the same system library, with no object layer,
/// no checksums and no journal — the physical limit Strata is compared with. Durability is LMDB's default
/// (every commit synced), as in Strata.
///
/// Record formats (key: the ID as 8 bytes big-endian):
/// - v1 `[1][uuid 16][date f64 LE 8][len 1][colour 7][len 1][text n][views i32 LE 4]`
/// - v2 (views widened) `[2][uuid][date][len][colour][len][text][views i64 LE 8]`
/// - split post `[3][uuid][date][len][colour][views i32]`, section `[1][len][title][len][body][index i64]`
/// The `meta` database holds a 36-byte schema record `[version u32 LE][32-byte hash]`, which `open` reads
/// and compares as Strata compares its version hashes.
public enum RawLMDB {
    static let mapSize = 1 << 40

    public static func run(_ task: ChildTask) throws -> ChildReport? {
        let task = task.asPeer
        switch (task.role, task.scenario) {
        case (_, .cliImport), (_, .cliExport):
            throw BenchFailure("\(task.scenario.rawValue) measures the strata tool only")
        case (_, .observeLatency), (_, .observeInsert), (_, .observeMemory), (.observedWriter, _):
            throw BenchFailure("\(task.scenario.rawValue) measures Strata's observation only")
        case (_, .keyRotation):
            throw BenchFailure("key-rotation measures Strata's encrypted stores only")
        case (.prepare, .insert):
            return nil
        case (.prepare, _):
            try load(task)
            return nil
        case (.measure, .insert):
            return try measured(path: task.path) {
                let seconds = try load(task)
                return (seconds, task.records, "records", [:], [])
            }
        case (.measure, .open): return try measureOpen(task)
        case (.measure, .scan): return try measureScan(task)
        case (.measure, .get): return try measureGet(task)
        case (.measure, .aggregate): return try measureAggregate(task)
        case (.measure, .lightweightMetadata): return try measureMetadata(task)
        case (.measure, .lightweightRewrite): return try measureRewrite(task)
        case (.measure, .customSplit): return try measureSplit(task)
        case (.measure, .forcedRewrite), (.measure, .sweep), (.measure, .scanOldLayout), (.measure, .writesDuringSweep),
             (.measure, .codableReshape):
            throw BenchFailure("\(task.scenario.rawValue) has no equivalent here")
        }
    }

    // MARK: LMDB plumbing

    final class Env {
        let env: OpaquePointer
        init(_ path: String, create: Bool = false) throws {
            if create { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true) }
            var e: OpaquePointer?
            try check(mdb_env_create(&e), "mdb_env_create")
            guard let e else { throw BenchFailure("mdb_env_create") }
            env = e
            try check(mdb_env_set_mapsize(e, RawLMDB.mapSize), "mdb_env_set_mapsize")
            try check(mdb_env_set_maxdbs(e, 8), "mdb_env_set_maxdbs")
            try check(mdb_env_open(e, path, 0, 0o644), "mdb_env_open")
        }
        deinit { mdb_env_close(env) }

        func begin(readOnly: Bool) throws -> OpaquePointer {
            var t: OpaquePointer?
            try check(mdb_txn_begin(env, nil, readOnly ? UInt32(MDB_RDONLY) : 0, &t), "mdb_txn_begin")
            guard let t else { throw BenchFailure("mdb_txn_begin") }
            return t
        }
    }

    static func check(_ rc: Int32, _ what: String) throws {
        if rc != 0 { throw BenchFailure("\(what): \(String(cString: mdb_strerror(rc)))") }
    }

    static func dbi(_ txn: OpaquePointer, _ name: String, flags: Int32 = 0, create: Bool = false) throws -> MDB_dbi {
        var d: MDB_dbi = 0
        try check(mdb_dbi_open(txn, name, UInt32(flags | (create ? MDB_CREATE : 0)), &d), "mdb_dbi_open \(name)")
        return d
    }

    static func commit(_ txn: OpaquePointer) throws { try check(mdb_txn_commit(txn), "mdb_txn_commit") }

    @inline(__always)
    static func withKey<T>(_ id: UInt64, _ body: (inout MDB_val) throws -> T) rethrows -> T {
        var big = id.bigEndian
        return try withUnsafeMutableBytes(of: &big) { raw in
            var k = MDB_val(mv_size: 8, mv_data: raw.baseAddress)
            return try body(&k)
        }
    }

    @inline(__always)
    static func keyID(_ k: MDB_val) -> UInt64 {
        UInt64(bigEndian: UnsafeRawBufferPointer(start: k.mv_data, count: 8).loadUnaligned(as: UInt64.self))
    }

    @inline(__always)
    static func bytes(_ v: MDB_val) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size) }

    /// The 36-byte schema record of a version.
    static func schemaRecord(_ version: UInt32) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 36)
        withUnsafeBytes(of: version.littleEndian) { for i in 0..<4 { out[i] = $0[i] } }
        var rng = SplitMix64(seed: UInt64(version) &* 0x5851_F42D_4C95_7F2D)
        for i in 4..<36 { out[i] = UInt8(truncatingIfNeeded: rng.next()) }
        return out
    }

    static func putSchema(_ txn: OpaquePointer, _ version: UInt32) throws {
        let meta = try dbi(txn, "meta", create: true)
        var record = schemaRecord(version)
        try record.withUnsafeMutableBytes { raw in
            var k = MDB_val(mv_size: 6, mv_data: UnsafeMutableRawPointer(mutating: ("schema" as StaticString).utf8Start))
            var v = MDB_val(mv_size: 36, mv_data: raw.baseAddress)
            try check(mdb_put(txn, meta, &k, &v, 0), "mdb_put schema")
        }
    }

    // MARK: Records

    static func encodeV1(_ r: PostRecord, into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.append(1)
        appendCommon(r, into: &out)
        withUnsafeBytes(of: r.views.littleEndian) { out.append(contentsOf: $0) }
    }

    static func appendCommon(_ r: PostRecord, into out: inout [UInt8]) {
        withUnsafeBytes(of: r.uuid.uuid) { out.append(contentsOf: $0) }
        withUnsafeBytes(of: r.date.bitPattern.littleEndian) { out.append(contentsOf: $0) }
        out.append(UInt8(r.color.utf8.count))
        out.append(contentsOf: r.color.utf8)
        out.append(UInt8(r.content.utf8.count))
        out.append(contentsOf: r.content.utf8)
    }

    /// The fields of a v1/v2 record, as byte ranges; checks the version and every length.
    struct Fields {
        var uuid: Int = 1
        var date: Int = 17
        var color: Range<Int> = 0..<0
        var content: Range<Int> = 0..<0
        var views: Int = 0
        var viewsSize = 4
    }

    @inline(__always)
    static func parse(_ b: UnsafeRawBufferPointer) throws -> Fields {
        guard b.count >= 27, b[0] == 1 || b[0] == 2 else { throw BenchFailure("bad record version") }
        var f = Fields()
        let colorLength = Int(b[25])
        f.color = 26..<(26 + colorLength)
        guard f.color.upperBound < b.count else { throw BenchFailure("bad colour length") }
        let contentLength = Int(b[f.color.upperBound])
        f.content = (f.color.upperBound + 1)..<(f.color.upperBound + 1 + contentLength)
        f.views = f.content.upperBound
        f.viewsSize = b[0] == 1 ? 4 : 8
        guard f.views + f.viewsSize == b.count else { throw BenchFailure("bad record length") }
        return f
    }

    /// Folds every field of a record, reading every byte of its texts, as the other systems do.
    @inline(__always)
    static func foldRecord(_ b: UnsafeRawBufferPointer, into fold: inout Fold) throws {
        let f = try parse(b)
        fold.add(b.loadUnaligned(fromByteOffset: 1, as: UInt64.self) ^ b.loadUnaligned(fromByteOffset: 9, as: UInt64.self))
        fold.add(Double(bitPattern: UInt64(littleEndian: b.loadUnaligned(fromByteOffset: f.date, as: UInt64.self))))
        fold.add(text: UnsafeRawBufferPointer(rebasing: b[f.color]))
        fold.add(text: UnsafeRawBufferPointer(rebasing: b[f.content]))
        if f.viewsSize == 4 {
            fold.add(Int32(littleEndian: b.loadUnaligned(fromByteOffset: f.views, as: Int32.self)))
        } else {
            fold.add(Int64(littleEndian: b.loadUnaligned(fromByteOffset: f.views, as: Int64.self)))
        }
    }

    // MARK: Insert (also the preparation of every other scenario)

    /// Loads the data set with `MDB_APPEND`, `batchSize` records per write transaction; returns the seconds
    /// from before the environment opens to after the last commit.
    @discardableResult
    static func load(_ task: ChildTask) throws -> Double {
        let data = task.dataSet
        let progress = Progress("lmdb insert", total: task.records)
        var clock = Stopwatch()
        clock.start()
        let env = try Env(task.path, create: true)
        clock.stop()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        let batches = data.batches(of: task.batchSize)
        for (n, range) in batches.enumerated() {
            let records = data.batch(range)
            clock.start()
            let txn = try env.begin(readOnly: false)
            let posts = try dbi(txn, "posts", create: true)
            if n == 0 { try putSchema(txn, 1) }
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, posts, &cursor), "mdb_cursor_open")
            var id = UInt64(range.lowerBound)
            for r in records {
                encodeV1(r, into: &buffer)
                try withKey(id) { k in
                    try buffer.withUnsafeMutableBytes { raw in
                        var v = MDB_val(mv_size: raw.count, mv_data: raw.baseAddress)
                        try check(mdb_cursor_put(cursor, &k, &v, UInt32(MDB_APPEND)), "mdb_cursor_put")
                    }
                }
                id += 1
            }
            try commit(txn)
            clock.stop()
            progress.update(range.upperBound)
        }
        withExtendedLifetime(env) {}
        return clock.seconds
    }

    // MARK: Open

    static func measureOpen(_ task: ChildTask) throws -> ChildReport {
        let expected = schemaRecord(1)
        var first = 0.0
        let report = try measured(path: task.path) {
            let start = Clock.now()
            for cycle in 0..<task.openCycles {
                let t0 = Clock.now()
                let env = try Env(task.path)
                let txn = try env.begin(readOnly: true)
                let meta = try dbi(txn, "meta")
                var k = MDB_val(mv_size: 6, mv_data: UnsafeMutableRawPointer(mutating: ("schema" as StaticString).utf8Start))
                var v = MDB_val()
                try check(mdb_get(txn, meta, &k, &v), "mdb_get schema")
                let matches = bytes(v).elementsEqual(expected)
                mdb_txn_abort(txn)
                withExtendedLifetime(env) {}
                guard matches else { throw BenchFailure("schema record differs") }
                if cycle == 0 { first = Clock.now() - t0 }
            }
            let seconds = (Clock.now() - start) / Double(task.openCycles)
            return (seconds, 1, "opens", ["first_open_seconds": first, "cycles": Double(task.openCycles)], [])
        }
        return report
    }

    // MARK: Scan and get

    static func measureScan(_ task: ChildTask) throws -> ChildReport {
        var fold = Fold()
        var n = 0
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let env = try Env(task.path)
            let txn = try env.begin(readOnly: true)
            let posts = try dbi(txn, "posts")
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, posts, &cursor), "mdb_cursor_open")
            var k = MDB_val(), v = MDB_val()
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            while rc == 0 {
                fold.add(keyID(k))
                try foldRecord(bytes(v), into: &fold)
                n += 1
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            guard rc == MDB_NOTFOUND else { throw BenchFailure("mdb_cursor_get: \(rc)") }
            mdb_cursor_close(cursor)
            mdb_txn_abort(txn)
            withExtendedLifetime(env) {}
            return (Clock.now() - start, n, "records", [:], [])
        }
        guard n == task.records else { throw BenchFailure("scan read \(n) records, expected \(task.records)") }
        report.extra["fold"] = Double(fold.value % (1 << 50))
        return report
    }

    /// `aggregate`: the count from LMDB's own statistics (as Strata's unfiltered count), everything else a cursor
    /// fold over every record in a read transaction of its own, reading `views` from each.
    static func measureAggregate(_ task: ChildTask) throws -> ChildReport {
        let env = try Env(task.path)
        defer { withExtendedLifetime(env) {} }
        return try AggregateQuery.measure(task) { name in
            let txn = try env.begin(readOnly: true)
            defer { mdb_txn_abort(txn) }
            let posts = try dbi(txn, "posts")
            if name == "count" {
                var stat = MDB_stat()
                try check(mdb_stat(txn, posts, &stat), "mdb_stat")
                return Int64(stat.ms_entries)
            }
            let filtered = name.hasSuffix("_filtered")
            var count: Int64 = 0, sum: Int64 = 0, least = Int64.max, greatest = Int64.min
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, posts, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val(), v = MDB_val()
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            while rc == 0 {
                let b = bytes(v)
                let f = try parse(b)
                let views = f.viewsSize == 4 ? Int64(Int32(littleEndian: b.loadUnaligned(fromByteOffset: f.views, as: Int32.self)))
                    : Int64(littleEndian: b.loadUnaligned(fromByteOffset: f.views, as: Int64.self))
                if !filtered || views >= Int64(AggregateQuery.threshold) {
                    count += 1
                    sum &+= views
                    least = Swift.min(least, views)
                    greatest = Swift.max(greatest, views)
                }
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            guard rc == MDB_NOTFOUND else { throw BenchFailure("mdb_cursor_get: \(rc)") }
            switch name.split(separator: "_")[0] {
            case "count": return count
            case "sum": return sum
            case "min": return count == 0 ? nil : least
            default: return count == 0 ? nil : greatest
            }
        }
    }

    static func measureGet(_ task: ChildTask) throws -> ChildReport {
        var fold = Fold()
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let env = try Env(task.path)
            let txn = try env.begin(readOnly: true)
            let posts = try dbi(txn, "posts")
            try task.dataSet.randomIDs(task.gets) { id in
                var v = MDB_val()
                try withKey(id) { k in try check(mdb_get(txn, posts, &k, &v), "mdb_get \(id)") }
                fold.add(id)
                try foldRecord(bytes(v), into: &fold)
            }
            mdb_txn_abort(txn)
            withExtendedLifetime(env) {}
            return (Clock.now() - start, task.gets, "fetches", [:], [])
        }
        report.extra["fold"] = Double(fold.value % (1 << 50))
        return report
    }

    // MARK: Migrations

    /// The metadata-only change: a new schema record, one durable write transaction.
    static func measureMetadata(_ task: ChildTask) throws -> ChildReport {
        try measured(path: task.path) {
            let start = Clock.now()
            let env = try Env(task.path)
            let txn = try env.begin(readOnly: false)
            try putSchema(txn, 2)
            try commit(txn)
            withExtendedLifetime(env) {}
            return (Clock.now() - start, task.records, "records", [:],
                    ["raw LMDB has no schema in its records: a metadata change is one schema-record write"])
        }
    }

    /// Copies every record into a new database through `transform` (which returns the bytes it wrote: keys,
    /// values and 16 bytes per entry, counted as Strata counts them), a batch per write transaction — as many
    /// records as `migrationBatchRecords`, or else as many as write ``ChildTask/migrationBatchBytes`` —, each
    /// batch resuming after the last key the previous one wrote; the last transaction drops the source and
    /// writes the new schema record.
    static func copyForward(_ task: ChildTask, label: String, extraDatabases: [(String, Int32)],
                            _ transform: (OpaquePointer, [MDB_dbi], UInt64, UnsafeRawBufferPointer) throws -> Int) throws -> (Double, Double) {
        let progress = Progress("lmdb \(label)", total: task.records)
        var dropSeconds = 0.0
        let start = Clock.now()
        let env = try Env(task.path)
        var last: UInt64 = 0
        var done = 0
        while true {
            let txn = try env.begin(readOnly: false)
            let posts = try dbi(txn, "posts")
            var outputs = [try dbi(txn, "posts_v2", create: true)]
            for (name, flags) in extraDatabases { outputs.append(try dbi(txn, name, flags: flags, create: true)) }
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, posts, &cursor), "mdb_cursor_open")
            var k = MDB_val(), v = MDB_val()
            var rc: Int32
            if last == 0 {
                rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            } else {
                rc = withKey(last + 1) { key in
                    k = key
                    return mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE)
                }
            }
            var count = 0, written = 0
            let recordLimit = task.migrationBatchRecords ?? Int.max
            while rc == 0 && count < recordLimit && written < ChildTask.migrationBatchBytes {
                let id = keyID(k)
                written += try transform(txn, outputs, id, bytes(v))
                last = id
                count += 1
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            guard rc == 0 || rc == MDB_NOTFOUND else { try check(rc, "mdb_cursor_get") ; break }
            mdb_cursor_close(cursor)
            done += count
            let finished = rc == MDB_NOTFOUND
            if finished {
                let t0 = Clock.now()
                try check(mdb_drop(txn, posts, 1), "mdb_drop")
                dropSeconds = Clock.now() - t0
                try putSchema(txn, 2)
            }
            try commit(txn)
            progress.update(done)
            if finished { break }
        }
        withExtendedLifetime(env) {}
        guard done == task.records else { throw BenchFailure("\(label) copied \(done) records, expected \(task.records)") }
        return (Clock.now() - start, dropSeconds)
    }

    static func appendPut(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ id: UInt64, _ value: UnsafeRawBufferPointer, flags: Int32 = MDB_APPEND) throws {
        try withKey(id) { k in
            var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
            try check(mdb_put(txn, dbi, &k, &v, UInt32(flags)), "mdb_put")
        }
    }

    /// Rewrites every record with `views` widened to Int64: the raw form of Strata's rewrite step.
    static func measureRewrite(_ task: ChildTask) throws -> ChildReport {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(256)
        let report = try measured(path: task.path) {
            let (seconds, drop) = try copyForward(task, label: "rewrite", extraDatabases: []) { txn, dbs, id, b in
                let f = try parse(b)
                guard f.viewsSize == 4 else { throw BenchFailure("record \(id) is not v1") }
                buffer.removeAll(keepingCapacity: true)
                buffer.append(2)
                buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[1..<f.views]))
                let views = Int64(Int32(littleEndian: b.loadUnaligned(fromByteOffset: f.views, as: Int32.self)))
                withUnsafeBytes(of: views.littleEndian) { buffer.append(contentsOf: $0) }
                try buffer.withUnsafeBytes { try appendPut(txn, dbs[0], id, $0) }
                return 8 + buffer.count + 16
            }
            return (seconds, task.records, "records", ["drop_seconds": drop], [])
        }
        try verifyCount(task.path, "posts_v2", task.records)
        return report
    }

    /// Moves `content` into a section per post: posts rewritten without it, sections appended under new
    /// IDs, and both sides of the link stored (post → sections dupsort, section → post).
    static func measureSplit(_ task: ChildTask) throws -> ChildReport {
        var post: [UInt8] = [], section: [UInt8] = []
        post.reserveCapacity(128)
        section.reserveCapacity(256)
        let report = try measured(path: task.path) {
            var nextSection = UInt64(task.records)
            let (seconds, drop) = try copyForward(task, label: "split", extraDatabases: [
                ("sections", 0), ("post_sections", MDB_DUPSORT | MDB_DUPFIXED), ("section_post", MDB_DUPSORT | MDB_DUPFIXED),
            ]) { txn, dbs, id, b in
                let f = try parse(b)
                guard f.viewsSize == 4 else { throw BenchFailure("record \(id) is not v1") }
                post.removeAll(keepingCapacity: true)
                post.append(3)
                post.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[1..<f.color.upperBound]))
                post.append(contentsOf: UnsafeRawBufferPointer(rebasing: b[f.views..<(f.views + 4)]))
                try post.withUnsafeBytes { try appendPut(txn, dbs[0], id, $0) }
                let content = UnsafeRawBufferPointer(rebasing: b[f.content])
                section.removeAll(keepingCapacity: true)
                section.append(1)
                section.append(UInt8(min(4, content.count) + 3))
                section.append(contentsOf: content.prefix(4))
                section.append(contentsOf: "...".utf8)
                section.append(UInt8(content.count))
                section.append(contentsOf: content)
                withUnsafeBytes(of: Int64(0)) { section.append(contentsOf: $0) }
                nextSection += 1
                let sid = nextSection
                try section.withUnsafeBytes { try appendPut(txn, dbs[1], sid, $0) }
                try withKey(sid) { sk in
                    try withKey(id) { pk in
                        var value = sk
                        try check(mdb_put(txn, dbs[2], &pk, &value, UInt32(MDB_APPEND)), "mdb_put link")
                        var back = pk
                        var key = sk
                        try check(mdb_put(txn, dbs[3], &key, &back, UInt32(MDB_APPEND)), "mdb_put link")
                    }
                }
                // The post, the section and both link entries.
                return 8 + post.count + 8 + section.count + 2 * (8 + 8) + 4 * 16
            }
            return (seconds, task.records, "records", ["drop_seconds": drop], [])
        }
        try verifyCount(task.path, "posts_v2", task.records)
        try verifyCount(task.path, "sections", task.records)
        return report
    }

    static func verifyCount(_ path: String, _ name: String, _ expected: Int) throws {
        let env = try Env(path)
        let txn = try env.begin(readOnly: true)
        defer { mdb_txn_abort(txn) }
        let d = try dbi(txn, name)
        var stat = MDB_stat()
        try check(mdb_stat(txn, d, &stat), "mdb_stat")
        guard stat.ms_entries == expected else { throw BenchFailure("\(name) holds \(stat.ms_entries) entries, expected \(expected)") }
    }

    /// The LMDB library's version string.
    public static var version: String { String(cString: mdb_version(nil, nil, nil)) }
}
