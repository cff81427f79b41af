import Foundation

/// The model versions an app has shipped, oldest to newest, and how to migrate a store between them.
///
/// By default a store at version *k* migrates to *k+1*, then *k+2*, … up to the newest version: one
/// step per pair, as progressive Core Data migrators do. Each step is inferred (a lightweight migration)
/// unless a ``MigrationStage`` covers it. Routes can be overridden:
///
/// ```swift
/// let plan = try MigrationPlan(
///     schemas: [Posts.v1, Posts.v2, Posts.v2b, Posts.v3, Posts.v4],
///     stages: [Posts.splitContent],           // v2 → v3 is custom
///     skipping: ["v2b"])                       // v2b shipped broken: v2 goes straight to v3,
///                                              // stores already at v2b migrate out of it to v3
/// ```
///
/// Schemas in a plan are frozen snapshots of what shipped (GRDB's rule: migrations describe the past);
/// never derive them from today's types. A plan is validated when made: every problem comes back at once
/// in a ``MigrationPlanError``.
///
/// ## Topics
/// ### Routing
/// - ``nextVersion(after:)``
/// - ``route(from:)``
/// - ``Route``
public struct MigrationPlan: Sendable {
    /// The versions, oldest first. The last is the current model.
    public let schemas: [Schema]
    /// Custom stages, each covering one step of the routing.
    public let stages: [MigrationStage]
    /// Routing overrides: a version's next version.
    public let routes: [Route]
    /// Versions that routes go around (stores already on one migrate out of it).
    public let skipped: Set<String>

    private let positions: [String: Int]

    /// A routing override: stores at `source` migrate next to `destination` (a later version).
    public struct Route: Sendable, Hashable {
        public let source: String
        public let destination: String
        public init(from source: String, to destination: String) {
            self.source = source
            self.destination = destination
        }
    }

    /// Creates and validates a plan.
    /// - Throws: ``MigrationPlanError`` listing every problem.
    public init(schemas: [Schema], stages: [MigrationStage] = [], routes: [Route] = [], skipping: Set<String> = []) throws(MigrationPlanError) {
        self.schemas = schemas
        self.stages = stages
        self.routes = routes
        self.skipped = skipping
        var positions: [String: Int] = [:]
        for (i, s) in schemas.enumerated() where positions[s.versionIdentifier] == nil { positions[s.versionIdentifier] = i }
        self.positions = positions
        let problems = validationProblems()
        guard problems.isEmpty else { throw MigrationPlanError(problems: problems) }
    }

    /// The newest schema: the app's current model.
    public var currentSchema: Schema { schemas[schemas.count - 1] }

    /// The schema with identifier `version`.
    public func schema(_ version: String) -> Schema? { positions[version].map { schemas[$0] } }

    /// The schema whose version hashes are `hashes`, if any.
    func schema(withHashes hashes: [String: VersionHash]) -> Schema? {
        schemas.first { $0.entityVersionHashes == hashes }
    }

    /// The version a store at `version` migrates to next, or nil for the current version.
    public func nextVersion(after version: String) -> String? {
        if let route = routes.first(where: { $0.source == version }) { return route.destination }
        guard let i = positions[version], i + 1 < schemas.count else { return nil }
        var j = i + 1
        while j < schemas.count - 1 && skipped.contains(schemas[j].versionIdentifier) { j += 1 }
        return schemas[j].versionIdentifier
    }

    /// The versions a store at `version` goes through, `version` first and the current version last.
    public func route(from version: String) -> [String] {
        var out = [version]
        var seen: Set<String> = [version]
        var v = version
        while let next = nextVersion(after: v), seen.insert(next).inserted {
            out.append(next)
            v = next
        }
        return out
    }

    /// The custom stage for the step `source` → `destination`.
    func stage(from source: String, to destination: String) -> MigrationStage? {
        stages.first { $0.source == source && $0.destination == destination }
    }

    /// The schemas strictly between two versions in plan order (used to follow renames across versions).
    func schemas(between source: String, and destination: String) -> [Schema] {
        guard let a = positions[source], let b = positions[destination], a + 1 < b else { return [] }
        return Array(schemas[(a + 1)..<b])
    }

    private func validationProblems() -> [MigrationPlanProblem] {
        var problems: [MigrationPlanProblem] = []
        if schemas.isEmpty { return [.empty] }
        var seen: Set<String> = []
        for s in schemas where !seen.insert(s.versionIdentifier).inserted {
            problems.append(.duplicateVersion(s.versionIdentifier))
        }
        for i in schemas.indices {
            for j in schemas.indices where j > i && schemas[i].entityVersionHashes == schemas[j].entityVersionHashes {
                problems.append(.identicalVersionHashes(schemas[i].versionIdentifier, schemas[j].versionIdentifier))
            }
        }
        for route in routes {
            if positions[route.source] == nil { problems.append(.unknownVersion(route.source, usedIn: "a route's source")) }
            if positions[route.destination] == nil { problems.append(.unknownVersion(route.destination, usedIn: "a route's destination")) }
        }
        var routeSources: Set<String> = []
        for route in routes where !routeSources.insert(route.source).inserted {
            problems.append(.duplicateRoute(route.source))
        }
        for version in skipped.sorted() {
            if positions[version] == nil { problems.append(.unknownVersion(version, usedIn: "the skipped versions")) }
            if version == currentSchema.versionIdentifier { problems.append(.skipsCurrentVersion(version)) }
        }
        var stagePairs: Set<String> = []
        for stage in stages {
            if positions[stage.source] == nil { problems.append(.unknownVersion(stage.source, usedIn: "a stage's source")) }
            if positions[stage.destination] == nil { problems.append(.unknownVersion(stage.destination, usedIn: "a stage's destination")) }
            if !stagePairs.insert(stage.source + "\u{0}" + stage.destination).inserted {
                problems.append(.duplicateStage(from: stage.source, to: stage.destination))
            }
            if positions[stage.source] != nil, positions[stage.destination] != nil,
               nextVersion(after: stage.source) != stage.destination {
                problems.append(.stageNotOnRoute(from: stage.source, to: stage.destination,
                                                 routeGoesTo: nextVersion(after: stage.source)))
            }
        }
        // Every version must reach the current one without a cycle. Checked whatever else is wrong (so that
        // every problem is reported at once), except with duplicate identifiers, which make routing by
        // identifier meaningless (and would show as cycles); each cycle is reported once, as first met.
        var cycles: Set<Set<String>> = []
        let hasDuplicates = problems.contains { if case .duplicateVersion = $0 { true } else { false } }
        for s in schemas where !hasDuplicates {
            var path = [s.versionIdentifier]
            var visited: Set<String> = [s.versionIdentifier]
            var v = s.versionIdentifier
            while let next = nextVersion(after: v) {
                path.append(next)
                if !visited.insert(next).inserted {
                    let cycle = Array(path[(path.firstIndex(of: next) ?? 0)...])
                    if cycles.insert(Set(cycle)).inserted { problems.append(.cycle(cycle)) }
                    break
                }
                v = next
            }
        }
        return problems
    }
}

/// Everything wrong with a migration plan.
public struct MigrationPlanError: Error, Sendable, Hashable, CustomStringConvertible {
    public let problems: [MigrationPlanProblem]
    public var description: String {
        "The migration plan is invalid (\(problems.count) problem\(problems.count == 1 ? "" : "s")): "
            + problems.map(\.description).joined(separator: "; ")
    }
}

/// One problem in a migration plan.
public enum MigrationPlanProblem: Sendable, Hashable, CustomStringConvertible {
    case empty
    case duplicateVersion(String)
    /// Two versions store objects identically, so a store cannot tell which it is at. Give the later one a
    /// version hash modifier if only indexes or defaults changed.
    case identicalVersionHashes(String, String)
    case unknownVersion(String, usedIn: String)
    case duplicateRoute(String)
    case duplicateStage(from: String, to: String)
    case stageNotOnRoute(from: String, to: String, routeGoesTo: String?)
    case skipsCurrentVersion(String)
    case cycle([String])

    public var description: String {
        switch self {
        case .empty: "the plan lists no schema"
        case .duplicateVersion(let v): "version \(v) is listed twice"
        case .identicalVersionHashes(let a, let b):
            "versions \(a) and \(b) have identical version hashes, so a store cannot tell them apart; give \(b) a version hash modifier"
        case .unknownVersion(let v, let usedIn): "\(usedIn) names version \(v), which the plan does not list"
        case .duplicateRoute(let v): "two routes leave version \(v)"
        case .duplicateStage(let a, let b): "two stages cover the step \(a) → \(b)"
        case .stageNotOnRoute(let a, let b, let next):
            "a stage covers \(a) → \(b), but stores at \(a) migrate to \(next ?? "nothing (it is current)")"
        case .skipsCurrentVersion(let v): "the current version \(v) cannot be skipped"
        case .cycle(let versions): "the routes form a cycle: \(versions.joined(separator: " → "))"
        }
    }
}
