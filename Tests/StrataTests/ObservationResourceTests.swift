import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Observations hold nothing once they end: the watcher thread exists only while something is observed.
@Suite(.serialized) struct ObservationResourceTests {
    /// Whether thread `id` of this process is alive and named `strata.observe` (Linux: `/proc/self/task/<id>/comm`).
    static func isWatcherThread(_ id: Int64) -> Bool {
        let comm = (try? String(contentsOfFile: "/proc/self/task/\(id)/comm", encoding: .utf8)) ?? ""
        return comm.trimmingCharacters(in: .whitespacesAndNewlines) == "strata.observe"
    }

    static func waitUntil(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1_000 where !condition() { try? await Task.sleep(for: .milliseconds(5)) }
        return condition()
    }

    /// The store's own watcher thread is followed by its kernel ID, so watchers of other suites' stores
    /// running at the same time do not count.
    @Test func cancellingTheLastObservationStopsTheWatcherAndUnregisters() async throws {
        let store = try Store.temporary(schema: try Schema("v1") { Entity("Note") { Attribute("text", .string) } })
        defer { store.close() }
        let hub = store.environment.observations
        #expect(hub.watcherThreadID == nil, "no watcher before anything is observed")
        let values = ObservedValues<Int>()
        let first = values.record(store.observe { try $0.count("Note") })
        let second = values.record(try store.changes(of: "Note").map(\.inserted.count))
        #expect(await values.waitUntil { $0 == [0] })
        #expect(await Self.waitUntil { (hub.watcherThreadID ?? 0) != 0 })
        let thread = try #require(hub.watcherThreadID)
        #expect(await Self.waitUntil { Self.isWatcherThread(thread) }, "the watcher runs on a thread named strata.observe")
        #expect(hub.isObserved)
        first.cancel()
        #expect(await values.waitForEnd() != nil)
        try await store.write { _ = try $0.insert("Note", ["text": "one"]) }
        #expect(hub.isObserved, "the other observation still runs")
        #expect(hub.watcherThreadID == thread, "one watcher for the store, however many observations")
        #expect(Self.isWatcherThread(thread))
        second.cancel()
        #expect(await Self.waitUntil { !hub.isObserved })
        #expect(hub.watcherThreadID == nil)
        #expect(await Self.waitUntil { !Self.isWatcherThread(thread) }, "the watcher's thread ends with the last observation")
    }

    /// An observation that starts while another thread commits sees the last of those commits: its watcher
    /// starts from what a reader sees, not from a commit that is written but not yet published to readers.
    /// Each round starts a fresh watcher (the previous observation ended) in the middle of a burst of commits.
    @Test func anObservationThatStartsDuringCommitsDoesNotMissTheLast() async throws {
        let store = try Store.temporary(schema: try Schema("v1") { Entity("Note") { Attribute("text", .string) } })
        defer { store.close() }
        for round in 0..<40 {
            let writer = Thread {
                for n in 0..<25 { try? store.write { _ = try $0.insert("Note", ["text": "\(round)-\(n)"]) } }
            }
            let values = ObservedValues<Int>()
            writer.start()
            let task = values.record(store.observe { try $0.count("Note") })
            while !writer.isFinished { try await Task.sleep(for: .milliseconds(1)) }
            let total = (round + 1) * 25
            #expect(try await store.read { try $0.count("Note") } == total)
            #expect(await values.waitUntil { $0.last == total }, "round \(round): last value \(String(describing: values.all.last)) of \(total)")
            task.cancel()
            _ = await values.waitForEnd()
            #expect(await Self.waitUntil { !store.environment.observations.isObserved })
        }
    }
}
