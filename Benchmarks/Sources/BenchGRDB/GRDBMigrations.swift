import BenchCore
import Foundation
import GRDB

/// The migration scenarios through `DatabaseMigrator`: the app opens its queue and calls `migrate`, which
/// runs the pending migration in one transaction (GRDB's default: foreign keys off, then a full
/// `PRAGMA foreign_key_check` before the commit), then closes.
enum GRDBMigrations {
    static func measure(_ task: ChildTask) throws -> ChildReport {
        let parts = Parts()
        let migrator = GRDBDatabase.migrator(for: task.scenario, parts: parts)
        var open = 0.0
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let queue = try GRDBDatabase.open(task)
            open = Clock.now() - start
            try migrator.migrate(queue)
            try queue.close()
            return (Clock.now() - start, task.records, "records", [:], [])
        }
        report.extra = parts.extra
        report.extra["open_seconds"] = open
        // What the migrator does around the migration's own statements: its bookkeeping, the foreign-key
        // check, the commit, and the close (which checkpoints the WAL).
        report.extra["checks_commit_close_seconds"] = report.seconds - open - parts.total
        try verify(task, migrator: migrator)
        return report
    }

    // MARK: Checks (after the timing)

    /// Every migration applied, the post count, and the first and last posts migrated (read as rows: the
    /// app's ``Post`` record describes `v1`).
    static func verify(_ task: ChildTask, migrator: DatabaseMigrator) throws {
        let queue = try GRDBDatabase.open(task)
        defer { try? queue.close() }
        try queue.read { db in
            guard try migrator.hasCompletedMigrations(db) else { throw BenchFailure("grdb: migration not applied") }
            let n = try Int.fetchOne(db, sql: "SELECT count(*) FROM post") ?? -1
            guard n == task.records else { throw BenchFailure("grdb: \(n) posts after the migration, expected \(task.records)") }
            let columns = try db.columns(in: "post").map(\.name)
            for i in Set([1, task.records]) {
                let r = task.dataSet.record(i)
                guard let row = try Row.fetchOne(db, sql: "SELECT * FROM post WHERE id = ?", arguments: [i]),
                      row["uuid"] as UUID? == r.uuid else {
                    throw BenchFailure("grdb: post \(i) missing")
                }
                switch task.scenario {
                case .lightweightMetadata:
                    guard columns == ["id", "uuid", "date", "hexColor", "content", "softDelete"],
                          row["hexColor"] as String? == r.color, row["softDelete"] as Bool? == false,
                          row["content"] as String? == r.content else {
                        throw BenchFailure("grdb: post \(i) was not migrated (columns \(columns))")
                    }
                case .lightweightRewrite:
                    let type = try db.columns(in: "post").first { $0.name == "views" }?.type
                    guard type == "BIGINT", row["views"] as Int64? == Int64(r.views), row["content"] as String? == r.content else {
                        throw BenchFailure("grdb: post \(i) was not widened")
                    }
                default:
                    let sections = try Section.filter(Column("postId") == i).fetchAll(db)
                    guard !columns.contains("content"), sections.count == 1, sections[0].body == r.content,
                          sections[0].title == DataSet.sectionTitle(r.content) else {
                        throw BenchFailure("grdb: post \(i) was not split")
                    }
                }
            }
            if task.scenario == .customSplit {
                let s = try Section.fetchCount(db)
                guard s == task.records else { throw BenchFailure("grdb: \(s) sections, expected \(task.records)") }
            }
        }
    }
}
