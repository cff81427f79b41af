import Foundation
import Strata

extension MigrationTestKit {
    /// Opens every fixture recorded in `directory` (by ``recordFixture(for:at:fill:)-(any SchemaVersion.Type,_,_)``)
    /// with the plan's current model, every way an app can meet it, and calls `check` with each migrated store.
    ///
    /// Each fixture is copied to a temporary directory first: the committed files are never written. Each is
    /// migrated:
    /// - in one go (one open with `plan`: the route from its version to the current one, skipping nothing the
    ///   route does not skip, in a single open),
    /// - step by step (opened with every version of its route in turn, each with the plan as it stood then),
    /// - in one go and then swept (the store's maintenance run to completion),
    /// - in one go with every record rewritten (at most one layout per entity: no metadata-only step).
    ///
    /// `check` compares the store with what the fixture's generator wrote (compute it from the generator, not
    /// from the fixture), and throws or records a test failure. A fixture at the current version is opened
    /// and checked as is.
    ///
    /// ```swift
    /// @Test func everyShippedVersionOpens() throws {
    ///     let fixtures = try #require(Bundle.module.url(forResource: "Fixtures", withExtension: nil))
    ///     try MigrationTestKit.checkFixtures(in: fixtures.appendingPathComponent("posts"), plan: Posts.plan) { fixture in
    ///         try expectHead(fixture.store, from: fixture.version)
    ///     }
    /// }
    /// ```
    /// - Parameter allowingMissing: versions of the plan that need no fixture (say, the current one before it
    ///   ships); every other version of the plan must have one.
    /// - Throws: ``FixtureError`` when a version has no fixture or a fixture is not what its name says, before
    ///   any check runs; what opening, migrating or `check` throws.
    @discardableResult
    public static func checkFixtures(in directory: URL, plan: MigrationPlan, allowingMissing: Set<String> = [],
                                     check: (FixtureCheck) throws -> Void) throws -> FixtureReport {
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }
        let planVersions = plan.schemas.map(\.versionIdentifier)
        var problem = FixtureError()
        problem.missingVersions = planVersions.filter { !names.contains($0) && !allowingMissing.contains($0) }
        problem.unknownVersions = names.filter { !planVersions.contains($0) && !$0.hasSuffix(".md") }.sorted()
        let fixtures = planVersions.filter { names.contains($0) }
        for name in fixtures {
            let recorded = try withCopy(of: directory.appendingPathComponent(name)) { url in
                let store = try Store.openRecorded(at: url)
                defer { store.close() }
                return store.schema.versionIdentifier
            }
            if recorded != name { problem.mislabelled.append((name, recorded)) }
        }
        if !problem.missingVersions.isEmpty || !problem.unknownVersions.isEmpty || !problem.mislabelled.isEmpty { throw problem }

        var report = FixtureReport(versions: fixtures)
        for version in fixtures {
            let route = plan.route(from: version)
            for way in FixtureCheck.Way.allCases {
                try withCopy(of: directory.appendingPathComponent(version)) { url in
                    let store = try open(url, plan: plan, route: route, way: way)
                    defer { store.close() }
                    try check(FixtureCheck(version: version, route: route, way: way, store: store))
                    report.checks += 1
                }
            }
        }
        return report
    }

    private static func open(_ url: URL, plan: MigrationPlan, route: [String], way: FixtureCheck.Way) throws -> Store {
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        configuration.initialMapSize = 16 << 20
        switch way {
        case .inOneGo:
            return try Store.open(at: url, schema: plan.currentSchema, plan: plan, configuration: configuration)
        case .afterSweep:
            let store = try Store.open(at: url, schema: plan.currentSchema, plan: plan, configuration: configuration)
            do { _ = try store.performMaintenance() } catch { store.close(); throw error }
            return store
        case .rewritten:
            configuration.migration.rewritesEveryRecord()
            return try Store.open(at: url, schema: plan.currentSchema, plan: plan, configuration: configuration)
        case .stepByStep:
            for version in route.dropFirst().dropLast() {
                let step = try plan.asShipped(at: version)
                try Store.open(at: url, schema: step.currentSchema, plan: step, configuration: configuration).close()
            }
            return try Store.open(at: url, schema: plan.currentSchema, plan: plan, configuration: configuration)
        }
    }

    /// Runs `body` on a copy of the store directory `source` in a fresh temporary directory, removed afterwards.
    private static func withCopy<R>(of source: URL, _ body: (URL) throws -> R) throws -> R {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strata-fixture-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let copy = scratch.appendingPathComponent(source.lastPathComponent)
        try FileManager.default.copyItem(at: source, to: copy)
        return try body(copy)
    }
}

extension MigrationPlan {
    /// The plan as it stood when `version` was the current one: the versions up to it, with the stages, routes
    /// and skips among them.
    func asShipped(at version: String) throws -> MigrationPlan {
        guard let end = schemas.firstIndex(where: { $0.versionIdentifier == version }) else {
            throw FixtureError(unknownVersions: [version])
        }
        let kept = Array(schemas[...end])
        let names = Set(kept.map(\.versionIdentifier))
        return try MigrationPlan(schemas: kept,
                                 stages: stages.filter { names.contains($0.source) && names.contains($0.destination) },
                                 routes: routes.filter { names.contains($0.source) && names.contains($0.destination) },
                                 skipping: skipped.filter { names.contains($0) && $0 != version })
    }
}
