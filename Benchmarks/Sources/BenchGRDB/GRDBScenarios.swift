import BenchCore
import Foundation
import GRDB

/// GRDB, the Swift peer: the same records through GRDB 7 as an app writes it — a `Codable` record
/// (``Post``), a `DatabaseQueue` in WAL mode with `synchronous=NORMAL`, a `DatabaseMigrator` for the schema.
///
/// Every timing runs from before the `DatabaseQueue` is opened to after `close()`: closing the last
/// connection checkpoints the WAL, so work left in it is paid for.
public enum GRDBScenarios {
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
        case (.measure, .lightweightMetadata), (.measure, .lightweightRewrite), (.measure, .customSplit):
            return try GRDBMigrations.measure(task)
        case (.measure, .forcedRewrite), (.measure, .sweep), (.measure, .scanOldLayout), (.measure, .writesDuringSweep),
             (.measure, .codableReshape):
            throw BenchFailure("\(task.scenario.rawValue) has no equivalent here")
        }
    }

    // MARK: Insert

    /// Creates the database through the migrator and inserts the data set, `batchSize` records per
    /// `write` (one transaction each), `post.insert(db)` per record; returns the seconds from before the
    /// queue is opened to after it is closed, less the data set's generation.
    @discardableResult
    static func load(_ task: ChildTask) throws -> Double {
        let data = task.dataSet
        let progress = Progress("grdb insert", total: task.records)
        try FileManager.default.createDirectory(atPath: task.path, withIntermediateDirectories: true)
        var clock = Stopwatch()
        clock.start()
        let queue = try GRDBDatabase.open(task)
        try GRDBDatabase.migrator().migrate(queue)
        clock.stop()
        for range in data.batches(of: task.batchSize) {
            let posts = range.map { Post(id: $0, data.record($0)) }
            clock.start()
            try queue.write { db in
                for post in posts { try post.insert(db) }
            }
            clock.stop()
            progress.update(range.upperBound)
        }
        clock.start()
        try queue.close()
        clock.stop()
        return clock.seconds
    }

    // MARK: Open

    /// Open as an app launches: `DatabaseQueue` (WAL set up), `migrator.migrate` (nothing to apply: it reads
    /// the applied migrations and compares them with the registered ones), `close()`.
    static func measureOpen(_ task: ChildTask) throws -> ChildReport {
        let migrator = GRDBDatabase.migrator()
        var first = 0.0
        let report = try measured(path: task.path) {
            let start = Clock.now()
            for cycle in 0..<task.openCycles {
                let t0 = Clock.now()
                let queue = try GRDBDatabase.open(task)
                try migrator.migrate(queue)
                try queue.close()
                if cycle == 0 { first = Clock.now() - t0 }
            }
            return ((Clock.now() - start) / Double(task.openCycles), 1, "opens",
                    ["first_open_seconds": first, "cycles": Double(task.openCycles)], [])
        }
        let queue = try GRDBDatabase.open(task)
        defer { try? queue.close() }
        let completed = try queue.read { db in try migrator.completedMigrations(db) }
        guard completed == [GRDBDatabase.v1] else { throw BenchFailure("grdb: migrations \(completed), expected [v1]") }
        return report
    }

    // MARK: Reads

    @inline(__always)
    static func fold(_ p: Post, into fold: inout Fold) {
        fold.add(UInt64(bitPattern: p.id))
        fold.add(uuid: p.uuid.uuid)
        fold.add(p.date.timeIntervalSinceReferenceDate)
        fold.add(text: p.color)
        fold.add(text: p.content)
        fold.add(p.views)
    }

    /// Every post through a record cursor (`Post.fetchCursor(db)`) in one `read`.
    static func measureScan(_ task: ChildTask) throws -> ChildReport {
        var f = Fold()
        var n = 0
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let queue = try GRDBDatabase.open(task)
            try queue.read { db in
                let posts = try Post.fetchCursor(db)
                while let p = try posts.next() {
                    fold(p, into: &f)
                    n += 1
                }
            }
            try queue.close()
            return (Clock.now() - start, n, "records", [:], [])
        }
        guard n == task.records else { throw BenchFailure("grdb scan read \(n) posts, expected \(task.records)") }
        report.extra["fold"] = Double(f.value % (1 << 50))
        return report
    }

    /// `aggregate`: GRDB's query interface, `Post.fetchCount(db)` and `Post.select(sum/min/max(Column("views")))`,
    /// filtered with `Post.filter(Column("views") >= threshold)`, each in a `read` of its own.
    static func measureAggregate(_ task: ChildTask) throws -> ChildReport {
        let queue = try GRDBDatabase.open(task)
        defer { try? queue.close() }
        let views = Column("views")
        return try AggregateQuery.measure(task) { name in
            let request = name.hasSuffix("_filtered") ? Post.filter(views >= AggregateQuery.threshold) : Post.all()
            return try queue.read { db -> Int64? in
                switch name.split(separator: "_")[0] {
                case "count": return Int64(try request.fetchCount(db))
                case "sum": return try request.select(GRDB.sum(views), as: Int64?.self).fetchOne(db)?.flatMap { $0 } ?? 0
                case "min": return try request.select(GRDB.min(views), as: Int64?.self).fetchOne(db) ?? nil
                default: return try request.select(GRDB.max(views), as: Int64?.self).fetchOne(db) ?? nil
                }
            }
        }
    }

    /// The same random IDs as the other systems, `Post.fetchOne(db, key:)` each, in one `read`.
    static func measureGet(_ task: ChildTask) throws -> ChildReport {
        var f = Fold()
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let queue = try GRDBDatabase.open(task)
            try queue.read { db in
                try task.dataSet.randomIDs(task.gets) { id in
                    guard let p = try Post.fetchOne(db, key: Int64(id)) else { throw BenchFailure("grdb: no post \(id)") }
                    fold(p, into: &f)
                }
            }
            try queue.close()
            return (Clock.now() - start, task.gets, "fetches", [:], [])
        }
        report.extra["fold"] = Double(f.value % (1 << 50))
        return report
    }

    // MARK: Checks (after the timing)

    /// The count and three sampled posts hold the data set.
    static func verifyPosts(_ task: ChildTask) throws {
        let queue = try GRDBDatabase.open(task)
        defer { try? queue.close() }
        try queue.read { db in
            let n = try Post.fetchCount(db)
            guard n == task.records else { throw BenchFailure("grdb: \(n) posts, expected \(task.records)") }
            for i in Set([1, task.records / 2 + 1, task.records]) {
                guard let p = try Post.fetchOne(db, key: Int64(i)), p == Post(id: i, task.dataSet.record(i)) else {
                    throw BenchFailure("grdb: post \(i) does not hold record \(i)")
                }
            }
        }
    }
}
