import Foundation
import Strata

extension MigrationTestKit {
    /// Records a fixture: a small store written by one shipped model version, to commit to the app's repository
    /// so that every later build proves it still opens stores of that version (see
    /// ``checkFixtures(in:plan:allowingMissing:check:)``).
    ///
    /// The store is written in one write transaction by `fill`, then saved as a compacted copy (free pages left
    /// out, no change log) into `directory/<versionIdentifier>`, replacing a fixture already there. Make `fill`
    /// deterministic (for example from a ``SeededGenerator`` with a fixed seed) so that the test that checks the
    /// fixture can compute what it must hold from the same generator.
    ///
    /// ```swift
    /// try MigrationTestKit.recordFixture(for: PostsV2.self, at: fixtures) { context in
    ///     for post in Posts.contents(seed: 7) { try context.insert(PostsV2.Post(post)) }
    /// }
    /// ```
    /// - Returns: the fixture's location.
    @discardableResult
    public static func recordFixture(for version: any SchemaVersion.Type, at directory: URL,
                                     fill: (WriteContext) throws -> Void) throws -> URL {
        try recordFixture(for: try Schema(version), at: directory, fill: fill)
    }

    /// Records a fixture holding `objects` (model values of `version`, inserted in order); for models whose
    /// objects need links use ``recordFixture(for:at:fill:)-(any SchemaVersion.Type,_,_)``.
    @discardableResult
    public static func recordFixture(for version: any SchemaVersion.Type, objects: [any EntityModel], at directory: URL) throws -> URL {
        try recordFixture(for: version, at: directory) { context in
            for object in objects { try context.insert(object) }
        }
    }

    /// Records a fixture written by the frozen schema `version` (the dynamic form of
    /// ``recordFixture(for:at:fill:)-(any SchemaVersion.Type,_,_)``).
    @discardableResult
    public static func recordFixture(for version: Schema, at directory: URL, fill: (WriteContext) throws -> Void) throws -> URL {
        try recordFixture(for: version, at: directory, populate: { try $0.write(fill) })
    }

    /// Records a fixture holding the objects of a JSON Lines file (what `strata export` writes and
    /// ``Store/importObjects(from:entity:batchSize:progress:shouldStop:)-(URL,_,_,_,_)`` reads): the form for
    /// tools and for apps whose fixtures' objects are data files. `strata fixture record` calls it.
    @discardableResult
    public static func recordFixture(for version: Schema, at directory: URL, importing objects: URL) throws -> URL {
        try recordFixture(for: version, at: directory, populate: { _ = try $0.importObjects(from: objects) })
    }

    private static func recordFixture(for version: Schema, at directory: URL, populate: (Store) throws -> Void) throws -> URL {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let destination = directory.appendingPathComponent(version.versionIdentifier)
        let scratch = directory.appendingPathComponent(".recording-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        configuration.initialMapSize = 16 << 20
        let store = try Store.open(at: scratch.appendingPathComponent("store"), schema: version, configuration: configuration)
        defer { store.close() }
        try populate(store)
        let copy = scratch.appendingPathComponent("compacted")
        try store.backup(to: copy, compact: true)
        // The lock file is LMDB's per-session state, made again at every open: not part of the fixture.
        try? FileManager.default.removeItem(at: copy.appendingPathComponent("lock.mdb"))
        if FileManager.default.fileExists(atPath: destination.path) { try FileManager.default.removeItem(at: destination) }
        try FileManager.default.moveItem(at: copy, to: destination)
        return destination
    }
}
