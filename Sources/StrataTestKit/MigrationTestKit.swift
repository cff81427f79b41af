import Foundation
import Strata

/// What an app needs to test its own migrations: build a store at any past version from its frozen schema,
/// fill it, migrate it, and open the store as it was before and as it is after, side by side.
///
/// ```swift
/// let kit = try MigrationTestKit()
/// defer { kit.removeAll() }
/// let url = try kit.makeStore(version: PostsApp.v1) { context in
///     try context.insert("Post", ["postID": .uuid(UUID()), "color": "#FF0000", "content": "Hello", "date": .date(.now)])
/// }
/// let run = try kit.migrate(url, plan: PostsApp.plan)
/// try run.forEachPair(of: "Post") { before, after in
///     #expect(after?["hexColor"] == before["color"])
/// }
/// ```
///
/// Works with Swift Testing and XCTest alike: it throws, it does not assert.
public final class MigrationTestKit {
    /// The temporary directory holding every store the kit made.
    public let directory: URL
    private var opened: [Store] = []

    /// Creates a kit with a fresh temporary directory.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-testkit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Creates a store written by `version` (a frozen schema of a version the app shipped), fills it in one
    /// write transaction, and closes it.
    /// - Returns: the store's location.
    public func makeStore(named name: String = "store", version: Schema, fill: (WriteContext) throws -> Void) throws -> URL {
        let url = directory.appendingPathComponent(name)
        let store = try Store.open(at: url, schema: version)
        defer { store.close() }
        try store.write(fill)
        return url
    }

    /// The store before and after a migration.
    public struct SideBySide {
        /// A copy of the store taken before it migrated, opened with its recorded model.
        public let before: Store
        /// The migrated store, opened with the plan's current schema.
        public let after: Store
        /// Every progress report of the migration.
        public let progress: [MigrationProgress]

        /// Calls `body` with each object of `entity` before the migration and the object with the same
        /// identifier in `migratedEntity` (by default the same name) after it, or nil when there is none.
        public func forEachPair(of entity: String, in migratedEntity: String? = nil,
                                _ body: (DynamicObject, DynamicObject?) throws -> Void) throws {
            try before.read { old in
                try after.read { new in
                    try old.objects(entity).forEach { object in
                        try body(object, try new.object(object.id, of: migratedEntity ?? entity))
                    }
                }
            }
        }
    }

    /// Copies the store at `url`, migrates the original along `plan` (as the app would at open), and opens
    /// both. The stores close when the kit is removed. The migrated store is opened without background
    /// maintenance, so that it stays exactly as the migration left it (call `performMaintenance()` to run it).
    public func migrate(_ url: URL, plan: MigrationPlan, options: MigrationOptions = MigrationOptions()) throws -> SideBySide {
        let copy = directory.appendingPathComponent(url.lastPathComponent + "-before-\(UUID().uuidString.prefix(8))")
        do {
            let original = try Store.openRecorded(at: url)
            defer { original.close() }
            try original.backup(to: copy)
        }
        let collected = ProgressLog()
        var options = options
        let user = options.progress
        options.progress = { p in collected.append(p); user?(p) }
        var configuration = StoreConfiguration(migration: options)
        configuration.backgroundMaintenance = false
        let after = try Store.open(at: url, schema: plan.currentSchema, plan: plan, configuration: configuration)
        let before = try Store.openRecorded(at: copy)
        opened += [after, before]
        return SideBySide(before: before, after: after, progress: collected.all)
    }

    /// Closes the stores the kit opened and deletes its directory.
    public func removeAll() {
        for store in opened { store.close() }
        opened = []
        try? FileManager.default.removeItem(at: directory)
    }
}

private final class ProgressLog: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [MigrationProgress] = []
    func append(_ p: MigrationProgress) { lock.lock(); items.append(p); lock.unlock() }
    var all: [MigrationProgress] { lock.lock(); defer { lock.unlock() }; return items }
}
