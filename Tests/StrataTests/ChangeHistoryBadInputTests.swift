import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// What a consumer can hand the history that is wrong — a token of another store, a damaged token, a token
/// from a store that was since replaced by an older copy — and what damage to the history itself does: each
/// is a typed error that names the problem, and the store is left exactly as it was.
@Suite struct ChangeHistoryBadInputTests {
    static func makeStore(_ dir: TemporaryDirectory, _ name: String = "store", commits: Int = 3) throws -> [HistoryToken] {
        let store = try Store.open(at: dir.path(name), schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
        defer { store.close() }
        for i in 0..<commits { try store.write { _ = try $0.insert("Note", ["title": .string("n\(i)")]) } }
        return try HistoryFixtures.all(store).map(\.token)
    }

    @Test func aTokenOfAnotherStoreIsRefusedByNameAndNothingIsWritten() throws {
        let dir = try TemporaryDirectory("history-other")
        let mine = try Self.makeStore(dir, "mine")
        let theirs = try Self.makeStore(dir, "theirs")
        let before = StoreFileBytes.snapshot(dir.path("mine"))
        let store = try Store.open(at: dir.path("mine"), schema: try HistoryFixtures.v1(), configuration: { var c = StoreConfiguration(); c.readOnly = true; return c }())
        do {
            _ = try store.fetchHistory(after: theirs[0])
            Issue.record("a token of another store was accepted")
        } catch let error as StoreError {
            #expect(error.code == .historyTokenFromOtherStore)
            #expect(error.description.contains(theirs[0].storeIdentifier.uuidString))
            #expect(error.description.contains(mine[0].storeIdentifier.uuidString))
        }
        #expect(try store.fetchHistory(after: mine[0]).transactions.count == 2)
        store.close()
        #expect(StoreFileBytes.snapshot(dir.path("mine")) == before)
    }

    @Test(arguments: ["flip", "truncate", "prefix", "garbage", "empty", "extend"])
    func aDamagedTokenIsATypedErrorSayingWhatIsWrong(damage: String) throws {
        let dir = try TemporaryDirectory("history-damaged-token")
        let tokens = try Self.makeStore(dir)
        var text = tokens[1].description
        switch damage {
        case "flip":
            var chars = Array(text)
            let i = chars.count - 10
            chars[i] = chars[i] == "A" ? "B" : "A"
            text = String(chars)
        case "truncate": text.removeLast(6)
        case "prefix": text = "strata-history-9." + text.dropFirst(HistoryToken.prefix.count)
        case "garbage": text = HistoryToken.prefix + "!!!not base64!!!"
        case "empty": text = ""
        default: text += "AAAA"
        }
        #expect(HistoryToken(text) == nil)
        do {
            _ = try HistoryToken(parsing: text)
            Issue.record("a damaged token parsed: \(text)")
        } catch {
            #expect(error.code == .historyTokenInvalid)
            #expect(error.reason?.isEmpty == false)
        }
        // Through Codable (a token saved as JSON): the same typed error.
        let json = try JSONEncoder().encode(text)
        do {
            _ = try JSONDecoder().decode(HistoryToken.self, from: json)
            Issue.record("a damaged token decoded")
        } catch let error as StoreError {
            #expect(error.code == .historyTokenInvalid)
        }
    }

    @Test func aDamagedEntryIsNamedByItsPositionAndTheStoreStaysReadable() throws {
        let dir = try TemporaryDirectory("history-damaged-entry")
        let tokens = try Self.makeStore(dir)
        let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1())
        defer { store.close() }
        // Damage the second entry's bytes (its checksum no longer matches).
        try store.environment.write { txn in
            let dbi = try #require(try HistoryLog.entries(in: txn))
            let bytes = try #require(try HistoryLog.withKey(tokens[1].sequence) { try txn.get(dbi, key: $0) })
            var damaged = Array(bytes)
            damaged[damaged.count - 1] ^= 0x40
            try HistoryLog.withKey(tokens[1].sequence) { k in try damaged.withUnsafeBytes { _ = try txn.put(dbi, key: k, value: $0) } }
        }
        let before = StoreFileBytes.snapshot(dir.store)
        do {
            _ = try store.fetchHistory(after: tokens[0])
            Issue.record("a damaged entry was read")
        } catch let error as StoreError {
            #expect(error.code == .corruptedHistory)
            #expect(error.description.contains("transaction \(tokens[1].sequence)"))
            #expect(error.description.contains("checksum"))
        }
        // Before the damage, the history reads; the objects are unaffected; nothing was written.
        #expect(try store.fetchHistory(after: nil, limit: 1).transactions.count == 1)
        #expect(try store.read { try $0.count("Note") } == 3)
        #expect(StoreFileBytes.snapshot(dir.store) == before)
    }

    @Test func anEntryMovedUnderAnotherKeyIsRefused() throws {
        let dir = try TemporaryDirectory("history-moved-entry")
        let tokens = try Self.makeStore(dir)
        let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1())
        defer { store.close() }
        try store.environment.write { txn in
            let dbi = try #require(try HistoryLog.entries(in: txn))
            let first = try #require(try HistoryLog.withKey(tokens[0].sequence) { try txn.get(dbi, key: $0) }.map(Array.init))
            try HistoryLog.withKey(tokens[1].sequence) { k in try first.withUnsafeBytes { _ = try txn.put(dbi, key: k, value: $0) } }
        }
        #expect { try store.fetchHistory(after: tokens[0]) } throws: { ($0 as? StoreError)?.code == .corruptedHistory }
    }

    @Test func aStoreReplacedByAnOlderCopyRefusesTokensOfTheLostTransactions() throws {
        let dir = try TemporaryDirectory("history-restored")
        do {
            let store = try Store.open(at: dir.store, schema: try HistoryFixtures.v1(), configuration: HistoryFixtures.enabled)
            defer { store.close() }
            for i in 0..<3 { try store.write { _ = try $0.insert("Note", ["title": .string("n\(i)")]) } }
            try store.backup(to: dir.path("backup"))
            for i in 3..<5 { try store.write { _ = try $0.insert("Note", ["title": .string("n\(i)")]) } }
        }
        let original = try Store.open(at: dir.store, schema: try HistoryFixtures.v1())
        let tokens = try HistoryFixtures.all(original).map(\.token)
        original.close()
        // The backup (compacted: LMDB's transaction IDs restart in it) keeps the history up to when it was made.
        let restored = try Store.open(at: dir.path("backup"), schema: try HistoryFixtures.v1())
        defer { restored.close() }
        #expect(try restored.fetchHistory(after: tokens[0]).transactions.map(\.token) == Array(tokens[1...2]))
        do {
            _ = try restored.fetchHistory(after: tokens[3])
            Issue.record("a token past the copy was accepted")
        } catch let error as StoreError {
            #expect(error.code == .historyDiverged)
        }
        // The restored store goes on: its new transaction 4 is not the lost one.
        try restored.write { _ = try $0.insert("Note", ["title": "other"]) }
        #expect { try restored.fetchHistory(after: tokens[3]) } throws: { ($0 as? StoreError)?.code == .historyDiverged }
        #expect(try restored.fetchHistory(after: tokens[2]).transactions.count == 1)
    }

    @Test func randomDamageToAnEntryNeverTrapsAndIsAlwaysRefusedOrDecoded() throws {
        var random = SeededGenerator(seed: 25)
        var changes = EntityChanges(inserted: [1, 2, 3, 10], updated: [(id: 4, properties: PropertyMask(property: 1)), (id: 7, properties: PropertyMask(property: 0))],
                                    deleted: [9, 8])
        changes.tombstones = [[.string("nine")], [.null]]
        let entry = HistoryEntry(kind: .commit, time: 1_700_000_000_000, author: "app", modelID: 42, entities: [3: changes, 7: EntityChanges(inserted: [100])])
        let valid = HistoryCodec.encode(entry, sequence: 12)
        let decoded = try valid.withUnsafeBytes { try HistoryCodec.decode($0, sequence: 12) }
        #expect(decoded.author == "app" && decoded.time == 1_700_000_000_000 && decoded.modelID == 42)
        #expect(decoded.entities[3]?.inserted == [1, 2, 3, 10])
        #expect(decoded.entities[3]?.updated.map(\.id) == [4, 7])
        #expect(decoded.entities[3]?.deleted == [8, 9] && decoded.entities[3]?.tombstones == [[.null], [.string("nine")]])
        #expect(decoded.entities[7]?.inserted == [100])
        #expect(throws: DecodeFailure.self) { try valid.withUnsafeBytes { try HistoryCodec.decode($0, sequence: 13) } }
        var accepted = 0
        for _ in 0..<5_000 {
            var bytes = valid
            for _ in 0..<(1 + random.int(3)) { bytes[random.int(bytes.count)] = UInt8(random.int(256)) }
            if random.int(4) == 0 { bytes.removeLast(random.int(bytes.count)) }
            if bytes != valid, (try? bytes.withUnsafeBytes({ try HistoryCodec.decode($0, sequence: 12) })) != nil { accepted += 1 }
        }
        #expect(accepted == 0, "damaged entries whose checksum still matched")
    }
}
