import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Observations hold nothing once they end: the watcher thread exists only while something is observed.
@Suite(.serialized) struct ObservationResourceTests {
    /// The threads of this process named `strata.observe` (Linux: `/proc/self/task/*/comm`).
    static func watcherThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .whitespacesAndNewlines) == "strata.observe"
        }.count
    }

    static func waitUntil(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1_000 where !condition() { try? await Task.sleep(for: .milliseconds(5)) }
        return condition()
    }

    @Test func cancellingTheLastObservationStopsTheWatcherAndUnregisters() async throws {
        let store = try Store.temporary(schema: try Schema("v1") { Entity("Note") { Attribute("text", .string) } })
        defer { store.close() }
        let before = Self.watcherThreads()
        let values = ObservedValues<Int>()
        let first = values.record(store.observe { try $0.count("Note") })
        let second = values.record(try store.changes(of: "Note").map(\.inserted.count))
        #expect(await values.waitUntil { $0 == [0] })
        #expect(await Self.waitUntil { Self.watcherThreads() == before + 1 }, "one watcher for the store, however many observations")
        #expect(store.environment.observations.isObserved)
        first.cancel()
        #expect(await values.waitForEnd() != nil)
        #expect(await Self.waitUntil { Self.watcherThreads() == before + 1 }, "the other observation still runs")
        second.cancel()
        #expect(await Self.waitUntil { !store.environment.observations.isObserved })
        #expect(await Self.waitUntil { Self.watcherThreads() == before }, "the watcher stops with the last observation")
    }
}
