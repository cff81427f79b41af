import Foundation
import StrataModels
import StrataTestSupport
import Testing

/// Observations with macro models: a key-path query observed as values of the model type, and change sets
/// filtered by key paths (a typed update that changes only other properties wakes nobody).
@Suite struct TypedObservationTests {
    @Test func typedQueryAndKeyPathChangeObservations() async throws {
        let dir = try TemporaryDirectory("typed-observe")
        let store = try Store.open(at: dir.store, schema: try Schema(Shop.self))
        defer { store.close() }
        let cheap = ObservedValues<[String]>()
        let names = cheap.record(store.observe { try $0.objects(Shop.Product.self).filter(\.price < 10).fetch().map(\.name).sorted() })
        let priceChanges = ObservedValues<ChangeSet>()
        let changes = priceChanges.record(try store.changes(of: Shop.Product.self, properties: [\.price]))
        defer { names.cancel(); changes.cancel() }
        #expect(await cheap.waitUntil { $0 == [[]] })

        var pen = Shop.Product(price: 5, name: "pen", category: "tools", rating: nil, note: "a")
        pen.objectID = try await store.write { [pen] in try $0.insert(pen) }
        #expect(await cheap.waitUntil { $0.last == ["pen"] })
        #expect(await priceChanges.waitUntil { $0.count == 1 })
        #expect(priceChanges.all.first?.inserted == [pen.objectID].compactMap { $0 })

        pen.note = "only the note changes"
        try await store.write { [pen] in try $0.update(pen) }
        try await Task.sleep(for: .milliseconds(300))
        #expect(priceChanges.all.count == 1, "a typed update of another property reached a price observation")

        pen.price = 50
        try await store.write { [pen] in try $0.update(pen) }
        #expect(await priceChanges.waitUntil { $0.count == 2 })
        #expect(priceChanges.all.last?.updated == [pen.objectID].compactMap { $0 })
        #expect(await cheap.waitUntil { $0.last == [] })
    }
}

