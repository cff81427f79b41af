import Foundation
import Strata
import StrataTestSupport
import Testing

/// Behaviours the first test pass flagged as surprising, now decided: `equals: nil` finds nulls; enums
/// backed by a String or an Int are stored in string and integer attributes; changes that keep the stored
/// layout (an index) apply at open even when migrations at open are off.
@Suite struct FlaggedBehaviourTests {
    static let schema: Schema = try! Schema("v1") {
        Entity("Task") {
            Attribute("title", .string).indexed()
            Attribute("note", .string).optional().indexed()
            Attribute("state", .string)
            Attribute("priority", .int16)
        }
    }

    enum State: String, Codable, Sendable { case open, done }
    enum Priority: Int, Codable, Sendable { case low = 1, high = 3 }

    struct TaskItem: Persistable, Equatable {
        static let entityName = "Task"
        var id: ObjectID?
        var title: String
        var note: String?
        var state: State
        var priority: Priority
    }

    @Test func equalsNilFindsNullValues() throws {
        let store = try Store.temporary(schema: Self.schema)
        defer { store.close() }
        try store.write { context in
            try context.insert("Task", ["title": "a", "state": "open", "priority": 1])
            try context.insert("Task", ["title": "b", "note": "n", "state": "open", "priority": 1])
            try context.insert("Task", ["title": "c", "state": "done", "priority": 3])
        }
        try store.read { context in
            let titles = try context.objects("Task").where("note", equals: nil).fetch().map(\.["title"])
            #expect(titles == ["a", "c"])
            #expect(try context.objects("Task").where("note", equals: "n").count() == 1)
        }
    }

    @Test func rawValueEnumsRoundTripThroughTheTypedAPI() throws {
        let store = try Store.temporary(schema: Self.schema)
        defer { store.close() }
        let item = TaskItem(title: "ship", note: nil, state: .done, priority: .high)
        let id = try store.write { try $0.insert(item) }
        try store.read { context in
            var expected = item
            expected.id = id
            #expect(try context.fetch(TaskItem.self, id: id) == expected)
            let raw = try #require(try context.object(id, of: "Task"))
            #expect(raw["state"] == "done")
            #expect(raw["priority"] == .int16(3))
        }
        try store.write { context in
            var bad = try #require(try context.object(id, of: "Task"))
            bad["state"] = "lost"
            try context.update(bad)
        }
        #expect(throws: StoreError.self) { try store.read { try $0.fetch(TaskItem.self, id: id) } }
    }

    @Test func layoutKeepingChangesApplyAtOpenWithMigrationsAtOpenOff() throws {
        let dir = try TemporaryDirectory()
        let v1 = try Schema("v1") { Entity("Item") { Attribute("code", .string) } }
        let v1Indexed = try Schema("v1") { Entity("Item") { Attribute("code", .string).unique() } }
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try store.write { for i in 0..<50 { try $0.insert("Item", ["code": .string("c\(i)")]) } }
        }
        var options = MigrationOptions()
        options.migratesAtOpen = false
        let store = try Store.open(at: dir.store, schema: v1Indexed, plan: try MigrationPlan(schemas: [v1Indexed]),
                                   configuration: StoreConfiguration(migration: options))
        defer { store.close() }
        try store.read { context throws in #expect(try context.objects("Item").where("code", equals: "c7").count() == 1) }
        #expect(throws: StoreError.self) { try store.write { try $0.insert("Item", ["code": "c7"]) } }
    }
}
