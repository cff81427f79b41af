import Foundation
import Strata
import StrataTestSupport
import Testing

/// A migration plan is validated when it is made: unknown versions, cycles, duplicates, stages off the route,
/// versions with identical hashes — each found, and all of them reported at once.
@Suite struct MigrationPlanValidationTests {
    static func version(_ id: String, _ extra: String? = nil, modifier: String? = nil) throws -> Schema {
        var attributes = [Attribute("name", .string)]
        if let extra { attributes.append(Attribute(extra, .string).optional()) }
        return try Schema(id, entities: [Entity("Item", attributes: attributes, versionHashModifier: modifier)])
    }

    static func chain() throws -> [Schema] {
        [try version("v1"), try version("v2", "b"), try version("v3", "c"), try version("v4", "d")]
    }

    static func problems(_ make: () throws -> MigrationPlan) -> [MigrationPlanProblem] {
        do {
            _ = try make()
            return []
        } catch let error as MigrationPlanError {
            return error.problems
        } catch {
            Issue.record("unexpected \(error)")
            return []
        }
    }

    @Test func aValidPlan() throws {
        let plan = try MigrationPlan(schemas: try Self.chain(), stages: [.lightweight(from: "v2", to: "v3")],
                                     routes: [.init(from: "v1", to: "v3")])
        #expect(plan.route(from: "v1") == ["v1", "v3", "v4"])
        #expect(plan.route(from: "v2") == ["v2", "v3", "v4"])
        #expect(plan.currentSchema.versionIdentifier == "v4")
        #expect(plan.schema("v2")?.versionIdentifier == "v2")
        #expect(plan.schema("v9") == nil)
    }

    @Test func eachProblem() throws {
        let c = try Self.chain()
        #expect(Self.problems { try MigrationPlan(schemas: []) } == [.empty])
        #expect(Self.problems { try MigrationPlan(schemas: c + [try Self.version("v2", "zz")]) } == [.duplicateVersion("v2")])
        #expect(Self.problems { try MigrationPlan(schemas: c + [try Self.version("v5", "d")]) } == [.identicalVersionHashes("v4", "v5")])
        // A version hash modifier tells otherwise identical versions apart.
        #expect(Self.problems { try MigrationPlan(schemas: c + [try Self.version("v5", "d", modifier: "index added")]) } == [])
        #expect(Self.problems { try MigrationPlan(schemas: c, routes: [.init(from: "v0", to: "v3")]) }
                == [.unknownVersion("v0", usedIn: "a route's source")])
        #expect(Self.problems { try MigrationPlan(schemas: c, routes: [.init(from: "v1", to: "v9")]) }
                == [.unknownVersion("v9", usedIn: "a route's destination")])
        #expect(Self.problems { try MigrationPlan(schemas: c, routes: [.init(from: "v1", to: "v3"), .init(from: "v1", to: "v4")]) }
                == [.duplicateRoute("v1")])
        #expect(Self.problems { try MigrationPlan(schemas: c, skipping: ["v7"]) } == [.unknownVersion("v7", usedIn: "the skipped versions")])
        #expect(Self.problems { try MigrationPlan(schemas: c, skipping: ["v4"]) } == [.skipsCurrentVersion("v4")])
        #expect(Self.problems { try MigrationPlan(schemas: c, stages: [.lightweight(from: "v0", to: "v1")]) }
                == [.unknownVersion("v0", usedIn: "a stage's source")])
        #expect(Self.problems { try MigrationPlan(schemas: c, stages: [.lightweight(from: "v3", to: "v8")]) }
                == [.unknownVersion("v8", usedIn: "a stage's destination")])
        #expect(Self.problems { try MigrationPlan(schemas: c, stages: [.lightweight(from: "v1", to: "v2"), .lightweight(from: "v1", to: "v2")]) }
                == [.duplicateStage(from: "v1", to: "v2")])
        #expect(Self.problems { try MigrationPlan(schemas: c, stages: [.lightweight(from: "v1", to: "v3")]) }
                == [.stageNotOnRoute(from: "v1", to: "v3", routeGoesTo: "v2")])
        // A stage on a step that routing skips is off the route too.
        #expect(Self.problems { try MigrationPlan(schemas: c, stages: [.lightweight(from: "v1", to: "v2")], skipping: ["v2"]) }
                == [.stageNotOnRoute(from: "v1", to: "v2", routeGoesTo: "v3")])
        #expect(Self.problems { try MigrationPlan(schemas: c, stages: [.lightweight(from: "v4", to: "v1")]) }
                == [.stageNotOnRoute(from: "v4", to: "v1", routeGoesTo: nil)])
        let cycle = Self.problems { try MigrationPlan(schemas: c, routes: [.init(from: "v3", to: "v2")]) }
        #expect(cycle == [.cycle(["v2", "v3", "v2"])])
        for p in cycle + [.empty, .identicalVersionHashes("a", "b")] { #expect(!p.description.isEmpty) }
    }

    @Test func allProblemsAtOnce() throws {
        let c = try Self.chain()
        let problems = Self.problems {
            try MigrationPlan(
                schemas: c + [try Self.version("v5", "d")],
                stages: [.lightweight(from: "v1", to: "v3"), .lightweight(from: "v0", to: "v1"), .lightweight(from: "v1", to: "v3")],
                routes: [.init(from: "v3", to: "v2"), .init(from: "v9", to: "v1"), .init(from: "v3", to: "v4")],
                skipping: ["v8", "v5"])
        }
        let expected: Set<MigrationPlanProblem> = [
            .identicalVersionHashes("v4", "v5"),
            .unknownVersion("v9", usedIn: "a route's source"),
            .duplicateRoute("v3"),
            .unknownVersion("v8", usedIn: "the skipped versions"),
            .skipsCurrentVersion("v5"),
            .unknownVersion("v0", usedIn: "a stage's source"),
            .stageNotOnRoute(from: "v1", to: "v3", routeGoesTo: "v2"),
            .duplicateStage(from: "v1", to: "v3"),
            .cycle(["v2", "v3", "v2"]),
        ]
        #expect(Set(problems) == expected)
        #expect(problems.count == expected.count + 1)  // the stage off the route is reported for both copies
        // Duplicate identifiers are reported with the other problems (routing by identifier is then undefined,
        // so cycles are not looked for).
        let withDuplicates = Self.problems {
            try MigrationPlan(schemas: c + [try Self.version("v2", "zz")], stages: [.lightweight(from: "v0", to: "v1")], skipping: ["v7"])
        }
        #expect(Set(withDuplicates) == [.duplicateVersion("v2"), .unknownVersion("v0", usedIn: "a stage's source"),
                                        .unknownVersion("v7", usedIn: "the skipped versions")])
        let schemas = c + [try Self.version("v5", "d")]
        do {
            _ = try MigrationPlan(schemas: schemas, routes: [.init(from: "v3", to: "v2")])
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("2 problems"))
        }
    }
}
