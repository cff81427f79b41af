import BenchCore
import Foundation
import GRDB

/// A post as a GRDB app declares it: a `Codable` record whose properties are the columns of `post`.
///
/// Dates are stored as seconds since 2001-01-01 (`REAL`), GRDB's `timeIntervalSinceReferenceDate`
/// strategy, so the table holds the same values as the SQLite peer's (GRDB's default would store text such
/// as `2015-01-01 00:00:00.000`); the UUID is GRDB's default, a 16-byte blob, as in the SQLite peer.
public struct Post: Codable, Sendable, Equatable, FetchableRecord, PersistableRecord {
    public var id: Int64
    public var uuid: UUID
    public var date: Date
    public var color: String
    public var content: String
    public var views: Int32

    public static func databaseDateEncodingStrategy(for column: String) -> DatabaseDateEncodingStrategy {
        .timeIntervalSinceReferenceDate
    }

    public static func databaseDateDecodingStrategy(for column: String) -> DatabaseDateDecodingStrategy {
        .timeIntervalSinceReferenceDate
    }

    /// Record `id` of the data set.
    public init(id: Int, _ r: PostRecord) {
        self.id = Int64(id)
        uuid = r.uuid
        date = r.dateValue
        color = r.color
        content = r.content
        views = r.views
    }
}

/// The section the custom split makes from a post (the checks read it back through this record).
public struct Section: Codable, Sendable, FetchableRecord, PersistableRecord {
    public var id: Int64
    public var postId: Int64
    public var title: String
    public var body: String
    public var index: Int64
}

/// The database as the GRDB scenarios open it, and the migrations of its schema.
public enum GRDBDatabase {
    /// The database file inside a task's directory.
    public static func file(_ task: ChildTask) -> String { task.path + "/post.sqlite" }

    /// A `DatabaseQueue` in WAL mode: GRDB's `journalMode = .wal` also sets `synchronous=NORMAL`, as the
    /// SQLite peer does.
    public static func open(_ task: ChildTask) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.journalMode = .wal
        return try DatabaseQueue(path: file(task), configuration: configuration)
    }

    /// The identifiers of the migrations, in order.
    public static let v1 = "v1"

    /// The migration each migration scenario applies after `v1`.
    public static func target(of scenario: Scenario) -> String? {
        switch scenario {
        case .lightweightMetadata: "v2-metadata"
        case .lightweightRewrite: "v2-rewrite"
        case .customSplit: "v2-split"
        default: nil
        }
    }

    /// A migrator holding `v1` (the `post` table) and, for a migration scenario, that scenario's migration.
    /// Migrations are written with table and column names as strings and SQL, as GRDB's guide recommends
    /// (they describe the past and must not depend on the app's record types). `parts` receives the time of
    /// each step of a migration.
    public static func migrator(for scenario: Scenario? = nil, parts: Parts = Parts()) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(v1) { db in
            try db.create(table: "post") { t in
                t.primaryKey("id", .integer)
                t.column("uuid", .blob).notNull()
                t.column("date", .double).notNull()
                t.column("color", .text).notNull()
                t.column("content", .text).notNull()
                t.column("views", .integer).notNull()
            }
        }
        guard let scenario, let identifier = target(of: scenario) else { return migrator }
        switch scenario {
        case .lightweightMetadata:
            // What `alter(table:)` does in one block, as three blocks so that each statement is timed.
            migrator.registerMigration(identifier) { db in
                try parts.time("rename") { try db.alter(table: "post") { t in t.rename(column: "color", to: "hexColor") } }
                try parts.time("add") {
                    try db.alter(table: "post") { t in t.add(column: "softDelete", .boolean).notNull().defaults(to: false) }
                }
                try parts.time("drop") { try db.alter(table: "post") { t in t.drop(column: "views") } }
            }
        case .lightweightRewrite:
            // SQLite cannot change a column's type: GRDB's guide recreates the table ("How to Recreate a
            // Database Table"): create `new_post`, copy, drop, rename.
            migrator.registerMigration(identifier) { db in
                try parts.time("copy") {
                    try db.create(table: "new_post") { t in
                        t.primaryKey("id", .integer)
                        t.column("uuid", .blob).notNull()
                        t.column("date", .double).notNull()
                        t.column("color", .text).notNull()
                        t.column("content", .text).notNull()
                        t.column("views", Database.ColumnType(rawValue: "BIGINT")).notNull()
                    }
                    try db.execute(sql: """
                        INSERT INTO new_post (id, uuid, date, color, content, views)
                        SELECT id, uuid, date, color, content, views FROM post
                        """)
                }
                try parts.time("swap") {
                    try db.drop(table: "post")
                    try db.rename(table: "new_post", to: "post")
                }
            }
        case .customSplit:
            // A `section` table that belongs to `post` (GRDB's `belongsTo`: a foreign key and its index),
            // filled by one `INSERT … SELECT`, then `content` dropped from `post`.
            migrator.registerMigration(identifier) { db in
                try parts.time("sections") {
                    try db.create(table: "section") { t in
                        t.autoIncrementedPrimaryKey("id")
                        t.belongsTo("post", onDelete: .cascade).notNull()
                        t.column("title", .text).notNull()
                        t.column("body", .text).notNull()
                        t.column("index", .integer).notNull()
                    }
                    try db.execute(sql: """
                        INSERT INTO section (postId, title, body, "index")
                        SELECT id, substr(content, 1, 4) || '...', content, 0 FROM post
                        """)
                }
                try parts.time("drop") { try db.alter(table: "post") { t in t.drop(column: "content") } }
            }
        default:
            break
        }
        return migrator
    }
}

/// The seconds each named step of a migration took (the migrator runs its migrations on GRDB's queue,
/// hence the lock).
public final class Parts: @unchecked Sendable {
    private let lock = NSLock()
    private var seconds: [String: Double] = [:]

    public init() {}

    /// Runs `body` and adds its time to the step `name`.
    public func time(_ name: String, _ body: () throws -> Void) throws {
        let start = Clock.now()
        try body()
        let elapsed = Clock.now() - start
        lock.lock()
        seconds[name, default: 0] += elapsed
        lock.unlock()
    }

    /// The time of all steps.
    public var total: Double {
        lock.lock()
        defer { lock.unlock() }
        return seconds.values.reduce(0, +)
    }

    /// The steps, keyed `<name>_seconds` as the report's details expect.
    public var extra: [String: Double] {
        lock.lock()
        defer { lock.unlock() }
        return Dictionary(uniqueKeysWithValues: seconds.map { ("\($0.key)_seconds", $0.value) })
    }
}
