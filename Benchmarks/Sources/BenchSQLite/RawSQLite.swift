import BenchCore
import Foundation
import StrataBenchSQLite

/// SQLite, the peer: the same records in a table, read and migrated the way a Core Data, GRDB or
/// hand-written SQLite app would, through the C API, in WAL mode with `synchronous=NORMAL` (what apps set).
///
/// `post(id INTEGER PRIMARY KEY, uuid BLOB, date REAL, color TEXT, content TEXT, views INTEGER)`; the
/// version is `PRAGMA user_version`. Every timing runs from before `sqlite3_open_v2` to after
/// `sqlite3_close`: closing the last connection checkpoints the WAL, so work left in it is paid for.
public enum RawSQLite {
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
            try FileManager.default.createDirectory(atPath: task.path, withIntermediateDirectories: true)
            return nil
        case (.prepare, _):
            try FileManager.default.createDirectory(atPath: task.path, withIntermediateDirectories: true)
            try load(task)
            return nil
        case (.measure, .insert):
            let report = try measured(path: task.path) {
                let seconds = try load(task)
                return (seconds, task.records, "records", [:], [])
            }
            try verifyPosts(task)
            return report
        case (.measure, .open): return try measureOpen(task)
        case (.measure, .scan): return try measureScan(task)
        case (.measure, .get): return try measureGet(task)
        case (.measure, .aggregate): return try measureAggregate(task)
        case (.measure, .lightweightMetadata): return try measureMetadata(task)
        case (.measure, .lightweightRewrite): return try measureRebuild(task)
        case (.measure, .customSplit): return try measureSplit(task)
        case (.measure, .forcedRewrite), (.measure, .sweep), (.measure, .scanOldLayout), (.measure, .writesDuringSweep),
             (.measure, .codableReshape):
            throw BenchFailure("\(task.scenario.rawValue) has no equivalent here")
        }
    }

    // MARK: Plumbing

    final class Connection {
        let db: OpaquePointer
        init(_ task: ChildTask, configure: Bool = true) throws {
            var d: OpaquePointer?
            let rc = sqlite3_open_v2(RawSQLite.file(task), &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil)
            guard rc == SQLITE_OK, let d else { throw BenchFailure("sqlite3_open_v2: \(rc)") }
            db = d
            if configure {
                try exec("PRAGMA journal_mode=WAL")
                try exec("PRAGMA synchronous=NORMAL")
            }
        }

        func close() throws {
            let rc = sqlite3_close(db)
            guard rc == SQLITE_OK else { throw BenchFailure("sqlite3_close: \(rc)") }
        }

        func exec(_ sql: String) throws {
            var message: UnsafeMutablePointer<CChar>?
            let rc = sqlite3_exec(db, sql, nil, nil, &message)
            if rc != SQLITE_OK {
                let text = message.map { String(cString: $0) } ?? "\(rc)"
                sqlite3_free(message)
                throw BenchFailure("\(sql): \(text)")
            }
        }

        func prepare(_ sql: String) throws -> OpaquePointer {
            var s: OpaquePointer?
            let rc = sqlite3_prepare_v2(db, sql, -1, &s, nil)
            guard rc == SQLITE_OK, let s else { throw BenchFailure("prepare \(sql): \(String(cString: sqlite3_errmsg(db)))") }
            return s
        }

        /// The single integer a query returns.
        func integer(_ sql: String) throws -> Int64 {
            let s = try prepare(sql)
            defer { sqlite3_finalize(s) }
            guard sqlite3_step(s) == SQLITE_ROW else { throw BenchFailure("\(sql): no row") }
            return sqlite3_column_int64(s, 0)
        }
    }

    static func file(_ task: ChildTask) -> String { task.path + "/post.db" }

    // MARK: Insert

    @discardableResult
    static func load(_ task: ChildTask) throws -> Double {
        let data = task.dataSet
        let progress = Progress("sqlite insert", total: task.records)
        try FileManager.default.createDirectory(atPath: task.path, withIntermediateDirectories: true)
        var clock = Stopwatch()
        clock.start()
        let c = try Connection(task)
        try c.exec("""
            CREATE TABLE post(id INTEGER PRIMARY KEY, uuid BLOB NOT NULL, date REAL NOT NULL, color TEXT NOT NULL,
                              content TEXT NOT NULL, views INTEGER NOT NULL);
            PRAGMA user_version = 1;
            """)
        let insert = try c.prepare("INSERT INTO post(id, uuid, date, color, content, views) VALUES (?, ?, ?, ?, ?, ?)")
        clock.stop()
        for range in data.batches(of: task.batchSize) {
            let records = data.batch(range)
            clock.start()
            try c.exec("BEGIN")
            var id = Int64(range.lowerBound)
            for r in records {
                sqlite3_bind_int64(insert, 1, id)
                sqlite3_bind_double(insert, 3, r.date)
                sqlite3_bind_int64(insert, 6, Int64(r.views))
                var u = r.uuid.uuid
                var color = r.color, content = r.content
                // The blob and texts are bound without a copy (SQLITE_STATIC), so the step runs while their
                // buffers are still valid.
                let rc = withUnsafeBytes(of: &u) { uuid in
                    color.withUTF8 { colorBytes in
                        content.withUTF8 { contentBytes in
                            sqlite3_bind_blob(insert, 2, uuid.baseAddress, 16, nil)
                            sqlite3_bind_text(insert, 4, colorBytes.baseAddress, Int32(colorBytes.count), nil)
                            sqlite3_bind_text(insert, 5, contentBytes.baseAddress, Int32(contentBytes.count), nil)
                            return sqlite3_step(insert)
                        }
                    }
                }
                guard rc == SQLITE_DONE else { throw BenchFailure("insert: \(String(cString: sqlite3_errmsg(c.db)))") }
                sqlite3_reset(insert)
                id += 1
            }
            try c.exec("COMMIT")
            clock.stop()
            progress.update(range.upperBound)
        }
        clock.start()
        sqlite3_finalize(insert)
        try c.close()
        clock.stop()
        return clock.seconds
    }

    // MARK: Open

    static func measureOpen(_ task: ChildTask) throws -> ChildReport {
        var first = 0.0
        return try measured(path: task.path) {
            let start = Clock.now()
            for cycle in 0..<task.openCycles {
                let t0 = Clock.now()
                let c = try Connection(task, configure: false)
                let version = try c.integer("PRAGMA user_version")
                try c.close()
                guard version == 1 else { throw BenchFailure("user_version \(version)") }
                if cycle == 0 { first = Clock.now() - t0 }
            }
            return ((Clock.now() - start) / Double(task.openCycles), 1, "opens",
                    ["first_open_seconds": first, "cycles": Double(task.openCycles)], [])
        }
    }

    // MARK: Reads

    @inline(__always)
    static func foldRow(_ s: OpaquePointer, into fold: inout Fold) {
        if let p = sqlite3_column_blob(s, 1), sqlite3_column_bytes(s, 1) == 16 {
            fold.add(p.loadUnaligned(as: UInt64.self) ^ p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
        }
        fold.add(sqlite3_column_double(s, 2))
        for column: Int32 in [3, 4] {
            let p = sqlite3_column_text(s, column)
            let n = Int(sqlite3_column_bytes(s, column))
            fold.add(text: UnsafeRawBufferPointer(start: p, count: n))
        }
        fold.add(Int32(truncatingIfNeeded: sqlite3_column_int64(s, 5)))
    }

    static func measureScan(_ task: ChildTask) throws -> ChildReport {
        var fold = Fold()
        var n = 0
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let c = try Connection(task)
            let s = try c.prepare("SELECT id, uuid, date, color, content, views FROM post")
            var rc = sqlite3_step(s)
            while rc == SQLITE_ROW {
                fold.add(UInt64(sqlite3_column_int64(s, 0)))
                foldRow(s, into: &fold)
                n += 1
                rc = sqlite3_step(s)
            }
            guard rc == SQLITE_DONE else { throw BenchFailure("scan: \(rc)") }
            sqlite3_finalize(s)
            try c.close()
            return (Clock.now() - start, n, "records", [:], [])
        }
        guard n == task.records else { throw BenchFailure("scan read \(n) rows, expected \(task.records)") }
        report.extra["fold"] = Double(fold.value % (1 << 50))
        return report
    }

    /// `aggregate`: `SELECT COUNT(*)/SUM(views)/MIN(views)/MAX(views) FROM post [WHERE views >= threshold]`, each
    /// statement prepared, stepped and finalized in a transaction of its own.
    static func measureAggregate(_ task: ChildTask) throws -> ChildReport {
        let c = try Connection(task)
        defer { try? c.close() }
        return try AggregateQuery.measure(task) { name in
            let filtered = name.hasSuffix("_filtered")
            let function = ["count": "COUNT(*)", "sum": "SUM(views)", "min": "MIN(views)", "max": "MAX(views)"][String(name.split(separator: "_")[0])]!
            try c.exec("BEGIN")
            let s = try c.prepare("SELECT \(function) FROM post" + (filtered ? " WHERE views >= \(AggregateQuery.threshold)" : ""))
            defer { sqlite3_finalize(s) }
            guard sqlite3_step(s) == SQLITE_ROW else { throw BenchFailure("aggregate \(name): \(String(cString: sqlite3_errmsg(c.db)))") }
            let answer: Int64? = sqlite3_column_type(s, 0) == SQLITE_NULL ? (name.hasPrefix("sum") ? 0 : nil) : sqlite3_column_int64(s, 0)
            try c.exec("COMMIT")
            return answer
        }
    }

    static func measureGet(_ task: ChildTask) throws -> ChildReport {
        var fold = Fold()
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let c = try Connection(task)
            let s = try c.prepare("SELECT id, uuid, date, color, content, views FROM post WHERE id = ?")
            try c.exec("BEGIN")
            try task.dataSet.randomIDs(task.gets) { id in
                sqlite3_bind_int64(s, 1, Int64(id))
                guard sqlite3_step(s) == SQLITE_ROW else { throw BenchFailure("no row \(id)") }
                fold.add(UInt64(sqlite3_column_int64(s, 0)))
                foldRow(s, into: &fold)
                sqlite3_reset(s)
            }
            try c.exec("COMMIT")
            sqlite3_finalize(s)
            try c.close()
            return (Clock.now() - start, task.gets, "fetches", [:], [])
        }
        report.extra["fold"] = Double(fold.value % (1 << 50))
        return report
    }

    // MARK: Migrations

    /// Rename + add with a default + remove, in one transaction as an app's migration would. The parts are
    /// timed one by one: `RENAME COLUMN` and `ADD COLUMN … DEFAULT` change only the schema text, while
    /// `DROP COLUMN` rewrites every row of the table.
    static func measureMetadata(_ task: ChildTask) throws -> ChildReport {
        var parts: [String: Double] = [:]
        let report = try measured(path: task.path) {
            var clock = Stopwatch()
            let start = Clock.now()
            let c = try Connection(task)
            try c.exec("BEGIN IMMEDIATE")
            parts["open_seconds"] = Clock.now() - start
            clock.start(); try c.exec("ALTER TABLE post RENAME COLUMN color TO hexColor"); clock.stop()
            parts["rename_seconds"] = clock.seconds
            clock = Stopwatch()
            clock.start(); try c.exec("ALTER TABLE post ADD COLUMN softDelete INTEGER NOT NULL DEFAULT 0"); clock.stop()
            parts["add_seconds"] = clock.seconds
            clock = Stopwatch()
            clock.start(); try c.exec("ALTER TABLE post DROP COLUMN views"); clock.stop()
            parts["drop_seconds"] = clock.seconds
            clock = Stopwatch()
            clock.start()
            try c.exec("PRAGMA user_version = 2")
            try c.exec("COMMIT")
            try c.close()
            clock.stop()
            parts["commit_close_seconds"] = clock.seconds
            return (Clock.now() - start, task.records, "records", parts, [])
        }
        let c = try Connection(task)
        defer { try? c.close() }
        guard try c.integer("PRAGMA user_version") == 2 else { throw BenchFailure("user_version not 2") }
        return report
    }

    /// The table rebuild a type change needs (SQLite's documented 12-step procedure, in one transaction):
    /// a new table with `views` declared BIGINT, `INSERT … SELECT`, drop, rename.
    static func measureRebuild(_ task: ChildTask) throws -> ChildReport {
        let report = try measured(path: task.path) {
            let start = Clock.now()
            let c = try Connection(task)
            try c.exec("""
                BEGIN IMMEDIATE;
                CREATE TABLE post_new(id INTEGER PRIMARY KEY, uuid BLOB NOT NULL, date REAL NOT NULL, color TEXT NOT NULL,
                                      content TEXT NOT NULL, views BIGINT NOT NULL);
                INSERT INTO post_new(id, uuid, date, color, content, views) SELECT id, uuid, date, color, content, views FROM post;
                DROP TABLE post;
                ALTER TABLE post_new RENAME TO post;
                PRAGMA user_version = 2;
                COMMIT;
                """)
            try c.close()
            return (Clock.now() - start, task.records, "records", [:], [])
        }
        try verify(task, table: "post")
        return report
    }

    /// The posts split: `INSERT … SELECT` into a new `section` table, then `post` rebuilt without
    /// `content`, in one transaction.
    static func measureSplit(_ task: ChildTask) throws -> ChildReport {
        let report = try measured(path: task.path) {
            let start = Clock.now()
            let c = try Connection(task)
            try c.exec("""
                BEGIN IMMEDIATE;
                CREATE TABLE section(id INTEGER PRIMARY KEY, post_id INTEGER NOT NULL, title TEXT NOT NULL,
                                     body TEXT NOT NULL, idx INTEGER NOT NULL);
                INSERT INTO section(post_id, title, body, idx) SELECT id, substr(content, 1, 4) || '...', content, 0 FROM post;
                CREATE TABLE post_new(id INTEGER PRIMARY KEY, uuid BLOB NOT NULL, date REAL NOT NULL, color TEXT NOT NULL,
                                      views INTEGER NOT NULL);
                INSERT INTO post_new(id, uuid, date, color, views) SELECT id, uuid, date, color, views FROM post;
                DROP TABLE post;
                ALTER TABLE post_new RENAME TO post;
                PRAGMA user_version = 2;
                COMMIT;
                """)
            try c.close()
            return (Clock.now() - start, task.records, "records", [:], [])
        }
        try verify(task, table: "post")
        try verify(task, table: "section")
        return report
    }

    /// After an insert: the row count and three sampled rows hold the data set.
    static func verifyPosts(_ task: ChildTask) throws {
        let c = try Connection(task)
        defer { try? c.close() }
        let n = try c.integer("SELECT count(*) FROM post")
        guard n == Int64(task.records) else { throw BenchFailure("\(n) rows, expected \(task.records)") }
        let s = try c.prepare("SELECT uuid, date, color, content, views FROM post WHERE id = ?")
        defer { sqlite3_finalize(s) }
        for i in Set([1, task.records / 2 + 1, task.records]) {
            let r = task.dataSet.record(i)
            sqlite3_bind_int64(s, 1, Int64(i))
            guard sqlite3_step(s) == SQLITE_ROW else { throw BenchFailure("row \(i) missing") }
            var uuidMatches = false
            if let p = sqlite3_column_blob(s, 0), sqlite3_column_bytes(s, 0) == 16 {
                uuidMatches = withUnsafeBytes(of: r.uuid.uuid) { $0.elementsEqual(UnsafeRawBufferPointer(start: p, count: 16)) }
            }
            func text(_ column: Int32) -> String? { sqlite3_column_text(s, column).map { String(cString: $0) } }
            guard uuidMatches, sqlite3_column_double(s, 1) == r.date, text(2) == r.color, text(3) == r.content,
                  sqlite3_column_int64(s, 4) == Int64(r.views) else {
                throw BenchFailure("row \(i) does not hold record \(i)")
            }
            sqlite3_reset(s)
        }
    }

    static func verify(_ task: ChildTask, table: String) throws {
        let c = try Connection(task)
        defer { try? c.close() }
        guard try c.integer("PRAGMA user_version") == 2 else { throw BenchFailure("user_version not 2") }
        let n = try c.integer("SELECT max(rowid) FROM \(table)")
        guard n >= Int64(task.records) else { throw BenchFailure("\(table) has \(n) rows, expected \(task.records)") }
    }

    /// The SQLite library's version.
    public static var version: String { String(cString: sqlite3_libversion()) }
}
