import Foundation
import Strata
import StrataTestSupport
import Testing

/// `strata history`: the change history of a store another process wrote, as JSON lines a script can follow
/// with `--after`, and the library's refusals for bad tokens as one-line errors.
@Suite struct HistoryCommandTests {
    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("Note") {
                Attribute("title", .string)
                Attribute("serverID", .string).optional().preservedOnDeletion()
            }
        }
    }

    /// A store with history: three notes inserted, one retitled, one deleted (three transactions).
    func makeStore(_ dir: TempDir, _ name: String = "notes.store") throws -> [HistoryToken] {
        var configuration = StoreConfiguration()
        configuration.history = .enabled(.default)
        let store = try Store.open(at: URL(fileURLWithPath: dir.path(name)), schema: try Self.schema(), configuration: configuration)
        defer { store.close() }
        let ids = try store.write(author: "app") { ctx in try (0..<3).map { try ctx.insert("Note", ["title": .string("n\($0)"), "serverID": .string("s\($0)")]).id } }
        try store.write(author: "sync") { ctx in
            var note = try #require(try ctx.object(ids[0], of: "Note"))
            note["title"] = "renamed"
            try ctx.update(note)
        }
        try store.write { try $0.delete(ids[1], of: "Note") }
        return try store.fetchHistory(after: nil).transactions.map(\.token)
    }

    @Test func theHistoryAsJSONLinesAndFollowingWithAfter() throws {
        let dir = try TempDir()
        let tokens = try makeStore(dir)
        let all = try dir.strata("history", "notes.store", "--json")
        try #require(all.status == 0, "\(all)")
        let lines = try all.stdoutLines.map { try #require(try json($0) as? [String: Any]) }
        try #require(lines.count == 4, "\(all)")
        #expect(lines[0...2].map { $0["token"] as? String } == tokens.map(\.description))
        #expect(lines[0...2].map { $0["author"] as? String } == ["app", "sync", nil])
        #expect(lines[0]["model"] as? String == "v1")
        let inserted = (lines[0]["changes"] as? [String: Any])?["Note"] as? [String: Any]
        #expect((inserted?["inserted"] as? [Int])?.count == 3)
        let updated = ((lines[1]["changes"] as? [String: Any])?["Note"] as? [String: Any])?["updated"] as? [[String: Any]]
        #expect(updated?.first?["properties"] as? [String] == ["title"])
        let deleted = ((lines[2]["changes"] as? [String: Any])?["Note"] as? [String: Any])?["deleted"] as? [[String: Any]]
        #expect((deleted?.first?["tombstone"] as? [String: Any])?["serverID"] as? String == "s1")
        #expect(lines[3]["next"] as? String == tokens[2].description && lines[3]["atEnd"] as? Bool == true)

        // Following: after the first token, one page of one transaction, then the rest.
        let page = try dir.strata("history", "notes.store", "--after", tokens[0].description, "--limit", "1", "--json")
        try #require(page.status == 0, "\(page)")
        let pageLines = try page.stdoutLines.map { try #require(try json($0) as? [String: Any]) }
        #expect(pageLines.count == 2 && pageLines[0]["token"] as? String == tokens[1].description)
        #expect(pageLines[1]["next"] as? String == tokens[1].description && pageLines[1]["atEnd"] as? Bool == false)
        let rest = try dir.strata("history", "notes.store", "--after", tokens[1].description, "--json")
        #expect(rest.stdoutLines.count == 2 && rest.stdout.contains(tokens[2].description), "\(rest)")

        let text = try dir.strata("history", "notes.store")
        #expect(text.status == 0 && text.stdoutLines.count == 4 && text.stdout.contains("Note +3"), "\(text)")
        let info = try dir.strata("history", "notes.store", "--info", "--json")
        let infoObject = try #require(try json(info.stdout) as? [String: Any])
        #expect(infoObject["transactions"] as? Int == 3 && infoObject["changes"] as? Int == 5, "\(info)")
    }

    @Test func badTokensAndStoresWithoutHistoryFailWithTheReason() throws {
        let dir = try TempDir()
        let mine = try makeStore(dir, "mine.store")
        let theirs = try makeStore(dir, "theirs.store")
        let before = StoreFileBytes.snapshot(URL(fileURLWithPath: dir.path("mine.store")))
        let other = try dir.strata("history", "mine.store", "--after", theirs[0].description)
        #expect(other.status == 1 && other.stdout.isEmpty && other.stderr.contains("made by store \(theirs[0].storeIdentifier.uuidString)"), "\(other)")
        var damaged = Array(mine[0].description)
        damaged[damaged.count - 3] = damaged[damaged.count - 3] == "A" ? "B" : "A"
        let bad = try dir.strata("history", "mine.store", "--after", String(damaged))
        #expect(bad.status == 1 && bad.stderr.contains("damaged or not a token"), "\(bad)")
        #expect(StoreFileBytes.snapshot(URL(fileURLWithPath: dir.path("mine.store"))) == before)

        let plain = try Store.open(at: URL(fileURLWithPath: dir.path("plain.store")), schema: try Self.schema())
        plain.close()
        let off = try dir.strata("history", "plain.store")
        #expect(off.status == 1 && off.stderr.contains("keeps no change history"), "\(off)")
    }
}
