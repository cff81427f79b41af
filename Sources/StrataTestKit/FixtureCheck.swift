import Foundation
import Strata

/// One recorded fixture migrated to the app's current model one way, handed to the check of
/// ``MigrationTestKit/checkFixtures(in:plan:allowingMissing:check:)``.
public struct FixtureCheck {
    /// How the fixture reached the current model.
    public enum Way: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Opened once with the current model and plan: every step of its route in one open (the app updated
        /// straight from the fixture's version, skipping the versions between).
        case inOneGo = "in one go"
        /// Opened with each version of its route in turn (the user installed every update), then the current one.
        case stepByStep = "step by step"
        /// Migrated in one go, then the store's background maintenance (the sweep) ran to completion.
        case afterSweep = "after the sweep"
        /// Migrated in one go with every record rewritten (no metadata-only step).
        case rewritten = "rewritten"

        public var description: String { rawValue }
    }

    /// The version that wrote the fixture.
    public let version: String
    /// The versions the store went through, the fixture's first and the current one last.
    public let route: [String]
    /// How the store reached the current model.
    public let way: Way
    /// The migrated store (a copy of the fixture), open with the current model.
    public let store: Store
}

/// A fixture set that does not cover the plan, or a fixture that does not open.
public struct FixtureError: Error, CustomStringConvertible {
    /// The plan's versions that have no fixture.
    public var missingVersions: [String] = []
    /// Fixtures whose directory name is not a version of the plan.
    public var unknownVersions: [String] = []
    /// Fixtures whose store records another version than their directory name.
    public var mislabelled: [(directory: String, recorded: String)] = []

    public var description: String {
        var parts: [String] = []
        if !missingVersions.isEmpty {
            parts.append("no fixture for \(missingVersions.joined(separator: ", ")) (record one with MigrationTestKit.recordFixture)")
        }
        if !unknownVersions.isEmpty { parts.append("fixtures of versions the plan does not have: \(unknownVersions.joined(separator: ", "))") }
        for m in mislabelled { parts.append("fixture \(m.directory) holds a store written by \(m.recorded)") }
        return parts.joined(separator: "; ")
    }
}

/// What ``MigrationTestKit/checkFixtures(in:plan:allowingMissing:check:)`` did.
public struct FixtureReport: Sendable {
    /// The fixtures' versions, in plan order.
    public var versions: [String] = []
    /// How many times the check ran (fixtures × ways).
    public var checks = 0
}
