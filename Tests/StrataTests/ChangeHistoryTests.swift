import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Models and helpers shared by the change-history suites.
enum HistoryFixtures {
    /// `Note(title, body, serverID preserved on deletion)` ↔ `Folder(name preserved)`; deleting a folder
    /// cascades to its notes.
    static func v1() throws -> Schema {
        try Schema("v1") {
            Entity("Note") {
                Attribute("title", .string)
                Attribute("body", .string).defaultValue("")
                Attribute("serverID", .string).optional().preservedOnDeletion()
                Relationship("folder", to: "Folder", inverse: "notes")
            }
            Entity("Folder") {
                Attribute("name", .string).preservedOnDeletion()
                Relationship("notes", to: "Note", inverse: "folder", toMany: true, deleteRule: .cascade)
            }
        }
    }

    /// v1 with `title` renamed `headline` and `pinned` added (default false): an inferred step.
    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Note") {
                Attribute("headline", .string).renamed(from: "title")
                Attribute("body", .string).defaultValue("")
                Attribute("serverID", .string).optional().preservedOnDeletion()
                Attribute("pinned", .bool).defaultValue(false)
                Relationship("folder", to: "Folder", inverse: "notes")
            }
            Entity("Folder") {
                Attribute("name", .string).preservedOnDeletion()
                Relationship("notes", to: "Note", inverse: "folder", toMany: true, deleteRule: .cascade)
            }
        }
    }

    static var enabled: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.history = .enabled(.unlimited)
        return configuration
    }

    /// Every transaction after `token`, through as many pages as it takes.
    static func all(_ store: Store, after token: HistoryToken? = nil, limit: Int = 1_000) throws -> [HistoryTransaction] {
        var out: [HistoryTransaction] = []
        var token = token
        while true {
            let page = try store.fetchHistory(after: token, limit: limit)
            out += page.transactions
            token = page.next
            if page.isAtEnd { return out }
        }
    }
}

/// The change history of ordinary commits: one transaction per commit that changed something, in commit order,
/// with its author, model version, objects and changed properties, and the tombstones of deletions.
@Suite struct ChangeHistoryTests {
    @Test func historyIsOffByDefaultAndOnlyAnExplicitSettingTurnsItOn() throws {
        let dir = try TemporaryDirectory("history-off")
        do {
            let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1())
            defer { store.close() }
            try store.write { _ = try $0.insert("Note", ["title": "a"]) }
            #expect(throws: StoreError.self) { try store.fetchHistory(after: nil) }
            do {
                _ = try store.currentHistoryToken()
                Issue.record("a store without history gave a token")
            } catch let error as StoreError {
                #expect(error.code == .historyDisabled)
                #expect(error.description.contains("StoreConfiguration.history"))
            }
            #expect(try store.info().formatVersion == 1)
        }
        // Turned on: from then on every commit is recorded, and the store is format 2.
        let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
        defer { store.close() }
        #expect(try store.info().formatVersion == 2)
        let start = try store.currentHistoryToken()
        #expect(try store.fetchHistory(after: start).transactions.isEmpty)
        try store.write { _ = try $0.insert("Note", ["title": "b"]) }
        #expect(try store.fetchHistory(after: start).transactions.count == 1)
        // A handle opened without asking follows the store: its writes are recorded too.
        let other = try Store.open(at: dir.store, schema: try HistoryFixtures.v1())
        defer { other.close() }
        try other.write { _ = try $0.insert("Note", ["title": "c"]) }
        #expect(try store.fetchHistory(after: start).transactions.count == 2)
    }

    @Test func eachCommitIsOneTransactionWithItsObjectsPropertiesAuthorAndModel() throws {
        var configuration = HistoryFixtures.enabled
        configuration.historyAuthor = "app"
        let store = try Store.temporary(schema: try HistoryFixtures.v1(), configuration: configuration)
        defer { store.close() }
        let start = try store.currentHistoryToken()
        let (folder, a, b) = try store.write { ctx in
            let folder = try ctx.insert("Folder", ["name": "inbox"])
            let a = try ctx.insert("Note", ["title": "a", "serverID": "s-a"])
            let b = try ctx.insert("Note", ["title": "b"])
            try ctx.link(a, "folder", to: folder)
            return (folder.id, a.id, b.id)
        }
        try store.write(author: "widget") { ctx in
            var note = try #require(try ctx.object(a, of: "Note"))
            note["body"] = "edited"
            try ctx.update(note)
            try ctx.delete(b, of: "Note")
        }
        // Changed nothing: no transaction.
        try store.write { ctx in
            let temporary = try ctx.insert("Note", ["title": "gone"])
            try ctx.delete(temporary)
        }
        let transactions = try store.fetchHistory(after: start).transactions
        try #require(transactions.count == 2)
        let first = transactions[0], second = transactions[1]
        #expect(first.author == "app" && second.author == "widget")
        #expect(first.modelVersion == "v1" && first.migration == nil)
        #expect(first.token < second.token)
        // Inserted then linked in the same transaction: inserted only.
        #expect(first.changes(of: "Note")?.inserted == [a, b])
        #expect(first.changes(of: "Note")?.updated.isEmpty == true)
        #expect(first.changes(of: "Folder")?.inserted == [folder])
        #expect(first.changeCount == 3)
        let notes = try #require(second.changes(of: "Note"))
        #expect(notes.updated == [HistoryUpdate(id: a, properties: ["body"])])
        #expect(notes.deleted.map(\.id) == [b])
        #expect(notes.deleted.first?.tombstone == ["serverID": .null])
        #expect(second.changes(of: "Folder") == nil)
        #expect(abs(second.date.timeIntervalSinceNow) < 3600)
    }

    @Test func linksAreUpdatesOfBothSidesAndCascadesKeepTheirTombstones() throws {
        let store = try Store.temporary(schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
        defer { store.close() }
        let (folder, notes) = try store.write { ctx in
            let folder = try ctx.insert("Folder", ["name": "work"])
            let notes = try (0..<3).map { try ctx.insert("Note", ["title": .string("n\($0)"), "serverID": .string("srv\($0)")]) }
            return (folder.id, notes.map(\.id))
        }
        let afterInsert = try store.currentHistoryToken()
        try store.write { ctx in for n in notes { try ctx.link(n, of: "Note", "folder", to: folder) } }
        let linked = try #require(try store.fetchHistory(after: afterInsert).transactions.first)
        #expect(linked.changes(of: "Note")?.updated == notes.map { HistoryUpdate(id: $0, properties: ["folder"]) })
        #expect(linked.changes(of: "Folder")?.updated == [HistoryUpdate(id: folder, properties: ["notes"])])
        let afterLink = linked.token
        try store.write { try $0.delete(folder, of: "Folder") }
        let deleted = try #require(try store.fetchHistory(after: afterLink).transactions.first)
        #expect(deleted.changes(of: "Folder")?.deleted == [HistoryDeletion(id: folder, tombstone: ["name": "work"])])
        #expect(deleted.changes(of: "Note")?.deleted == notes.enumerated().map {
            HistoryDeletion(id: $0.element, tombstone: ["serverID": .string("srv\($0.offset)")])
        })
        #expect(deleted.changes(of: "Note")?.updated.isEmpty == true, "a deleted object is not also updated")
    }

    @Test func aLargeTransactionIsListedObjectByObject() throws {
        let store = try Store.temporary(schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
        defer { store.close() }
        let start = try store.currentHistoryToken()
        let ids = try store.write { ctx in try (0..<25_000).map { try ctx.insert("Note", orderedValues: [.string("n\($0)"), "", .null]) } }
        let ones = try store.write { ctx in
            try stride(from: 0, to: 25_000, by: 2).map { i -> ObjectID in
                var note = try #require(try ctx.object(ids[i], of: "Note"))
                note["body"] = "x"
                try ctx.update(note)
                return ids[i]
            }
        }
        let transactions = try store.fetchHistory(after: start).transactions
        #expect(transactions.count == 2)
        #expect(transactions.first?.changes(of: "Note")?.inserted == ids)
        #expect(transactions.last?.changes(of: "Note")?.updated.map(\.id) == ones)
        #expect(transactions.last?.changes(of: "Note")?.isComplete == true)
        // Observers in other processes get "the entity changed" for such a commit: the change log stays small.
        let last = store.environment.lastTransactionID
        try store.environment.read { txn in
            let logged = try ChangeLog.entries(after: last - 1, through: last, in: txn).entries
            #expect(logged.first?.entities.values.first?.isComplete == false)
        }
    }

    @Test func pagesEndAtTheLimitAndTheNextTokenResumesExactly() throws {
        let store = try Store.temporary(schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
        defer { store.close() }
        let start = try store.currentHistoryToken()
        var ids: [ObjectID] = []
        for i in 0..<25 { ids.append(try store.write { try $0.insert("Note", ["title": .string("n\(i)")]).id }) }
        var token = start
        var seen: [ObjectID] = []
        var pages = 0
        while true {
            let page = try store.fetchHistory(after: token, limit: 10)
            pages += 1
            #expect(page.transactions.count <= 10)
            seen += page.transactions.flatMap { $0.changes(of: "Note")?.inserted ?? [] }
            if let last = page.transactions.last { #expect(page.next == last.token) }
            token = page.next
            if page.isAtEnd { break }
        }
        #expect(seen == ids)
        #expect(pages == 3)
        #expect(token == (try store.currentHistoryToken()))
        #expect(try store.fetchHistory(after: token).transactions.isEmpty)
        // From the first transaction ever: nil.
        #expect(try HistoryFixtures.all(store, after: nil).count == 25)
    }

    @Test func tokensSurviveTextJSONAndReopeningAndOrderLikeTheirTransactions() throws {
        let dir = try TemporaryDirectory("history-tokens")
        var tokens: [HistoryToken] = []
        var saved = Data()
        do {
            let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
            defer { store.close() }
            for i in 0..<3 { try store.write { _ = try $0.insert("Note", ["title": .string("n\(i)")]) } }
            tokens = try HistoryFixtures.all(store).map(\.token)
            saved = try JSONEncoder().encode(tokens[0])
        }
        #expect(tokens == tokens.sorted())
        #expect(Set(tokens).count == 3)
        let decoded = try JSONDecoder().decode(HistoryToken.self, from: saved)
        #expect(decoded == tokens[0])
        #expect(HistoryToken(tokens[1].description) == tokens[1])
        #expect(String(decoding: saved, as: UTF8.self) == "\"\(tokens[0].description)\"")
        let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1())
        defer { store.close() }
        let after = try store.fetchHistory(after: decoded)
        #expect(after.transactions.map(\.token) == Array(tokens.dropFirst()))
        #expect(decoded.storeIdentifier == (try store.historyInfo().storeIdentifier))
    }

    @Test func aReadsTokenIsExactlyThePositionOfTheObjectsItRead() throws {
        let store = try Store.temporary(schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
        defer { store.close() }
        try store.write { _ = try $0.insert("Note", ["title": "before"]) }
        let (count, token) = try store.read { (try $0.count("Note"), try $0.historyToken()) }
        let later = try store.write { try $0.insert("Note", ["title": "after"]).id }
        #expect(count == 1)
        let rest = try store.fetchHistory(after: token).transactions
        #expect(rest.count == 1 && rest.first?.changes(of: "Note")?.inserted == [later])
    }

    @Test func theHistoryInfoCountsTransactionsChangesAndBytes() throws {
        let store = try Store.temporary(schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
        defer { store.close() }
        try store.write { ctx in for i in 0..<100 { _ = try ctx.insert("Note", ["title": .string("n\(i)")]) } }
        try store.write { _ = try $0.insert("Folder", ["name": "f"]) }
        let info = try store.historyInfo()
        #expect(info.isEnabled)
        #expect(info.transactions == 2 && info.changes == 101)
        #expect(info.bytes > 0 && info.bytesPerChange > 0)
        #expect(info.newest == (try store.currentHistoryToken()))
        #expect(info.configuration == .unlimited)
    }
}
