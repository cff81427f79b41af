import Foundation
import Strata
import StrataTestSupport
import Testing

/// Observations see commits made by another process: the `strata` tool importing into a store this
/// process observes.
@Suite(.serialized) struct ObservationAcrossProcessesTests {
    @Test func commitsByAnotherProcessReachQueryAndChangeObservations() async throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try dir.write("objects.jsonl", Fixtures.objects)
        try #require(try dir.strata("create", "s.store", "--schema", "v1.json").status == 0)
        try #require(try dir.strata("import", "s.store", "objects.jsonl").status == 0)

        let store = try Store.openRecorded(at: URL(fileURLWithPath: dir.path("s.store")))
        defer { store.close() }
        let counts = ObservedValues<Int>()
        let sets = ObservedValues<ChangeSet>()
        let countTask = counts.record(store.observe { try $0.count("Tag") })
        let setTask = sets.record(try store.changes(of: "Tag"))
        defer { countTask.cancel(); setTask.cancel() }
        #expect(await counts.waitUntil { $0 == [2] })

        try dir.write("more.jsonl", """
            {"entity":"Tag","id":22,"attributes":{"name":"observed"}}
            {"entity":"Tag","id":23,"attributes":{"name":"elsewhere"}}
            """ + "\n")
        let imported = try dir.strata("import", "s.store", "more.jsonl")
        try #require(imported.status == 0, "\(imported)")
        #expect(await counts.waitUntil { $0.last == 4 }, "counts: \(counts.all)")
        #expect(await sets.waitUntil { Set($0.flatMap(\.inserted)).count == 2 })
        #expect(Set(sets.all.flatMap(\.inserted).map(\.rawValue)) == [22, 23])
        #expect(sets.all.allSatisfy { $0.isComplete })

        // A commit by the other process that touches only Author wakes neither observation.
        let before = (counts.all.count, sets.all.count)
        try dir.write("author.jsonl", #"{"entity":"Author","id":50,"attributes":{"name":"Cy"}}"# + "\n")
        try #require(try dir.strata("import", "s.store", "author.jsonl").status == 0)
        try await Task.sleep(for: .milliseconds(300))
        #expect(counts.all.count == before.0 && sets.all.count == before.1)
    }
}

