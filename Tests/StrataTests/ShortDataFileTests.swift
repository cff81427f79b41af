import Foundation
import Strata
import StrataTestSupport
import Testing

/// A healthy store whose `data.mdb` is shorter than LMDB's last page number says (issue 28): LMDB leaves pages
/// it allocated and freed in one write transaction unwritten at the end of the file. Such a store opens, reads,
/// writes and verifies clean; a store cut short of pages in use is still refused (the reliability suite's
/// truncation trials).
@Suite struct ShortDataFileTests {
    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("Note") {
                Attribute("text", .string)
                Attribute("rank", .int64).indexed()
            }
        }
    }

    static func text(_ i: Int) -> String { "note \(i) " + String(repeating: "abcdefghij", count: 8) }

    /// Writes, through the public API only, the sequence that leaves LMDB's file short: pages freed (and
    /// reusable), then one transaction that allocates pages past the file's end and empties them again —
    /// objects inserted and deleted in reverse order, as a cleanup that undoes an import would.
    /// Returns the IDs and texts of the objects that stay.
    static func makeShortStore(at url: URL) throws -> [ObjectID: String] {
        let store = try Store.open(at: url, schema: schema())
        defer { store.close() }
        let first = try store.write { ctx in try (0..<2_000).map { try ctx.insert("Note", ["text": .string(text($0)), "rank": .int64(Int64($0))]) } }
        try store.write { ctx in for object in first { try ctx.delete(object) } }
        var kept: [ObjectID: String] = [:]
        for i in 0..<2 {
            let object = try store.write { ctx in try ctx.insert("Note", ["text": .string(text(-1 - i)), "rank": .int64(-1)]) }
            kept[object.id] = text(-1 - i)
        }
        try store.write { ctx in
            let objects = try (0..<3_000).map { try ctx.insert("Note", ["text": .string(text($0)), "rank": .int64(Int64($0))]) }
            for object in objects.reversed() { try ctx.delete(object) }
        }
        return kept
    }

    @Test("a data file shorter than LMDB's last page, by pages it freed, opens, reads, writes and verifies clean")
    func shortFileOfFreePagesIsHealthy() throws {
        let dir = try TemporaryDirectory("short")
        var kept = try Self.makeShortStore(at: dir.store)
        let store = try Store.open(at: dir.store, schema: Self.schema())
        defer { store.close() }
        let info = try store.info()
        // The premise: the file really is shorter than LMDB's pages (else this test proves nothing).
        #expect(info.fileSize < info.pagesUsed * info.pageSize,
                "the scenario did not leave data.mdb short: \(info.fileSize) bytes for \(info.pagesUsed) pages of \(info.pageSize)")
        let read = try store.read { ctx in try ctx.objects("Note").fetch().map { ($0.id, $0["text"].stringValue ?? "") } }
        #expect(Dictionary(uniqueKeysWithValues: read) == kept)
        let added = try store.write { ctx in try (0..<500).map { try ctx.insert("Note", ["text": .string(Self.text($0)), "rank": .int64(Int64($0))]) } }
        for (i, object) in added.enumerated() { kept[object.id] = Self.text(i) }
        let report = try store.verify()
        #expect(report.isClean, "\(report.problems)")
        #expect(report.notes.contains { $0.contains("before LMDB's last page number") }, "\(report.notes)")
        let after = try store.read { ctx in try ctx.objects("Note").fetch().map { ($0.id, $0["text"].stringValue ?? "") } }
        #expect(Dictionary(uniqueKeysWithValues: after) == kept)
    }

    @Test("a data file cut within the pages its last commit added is refused as truncated, though the older meta page's fit")
    func fileCutWithinTheLastCommitIsRefused() throws {
        let dir = try TemporaryDirectory("cut-last-commit")
        let pageSize: Int
        do {
            let store = try Store.open(at: dir.store, schema: Self.schema())
            defer { store.close() }
            try store.write { ctx in _ = try ctx.insert("Note", ["text": .string(Self.text(0)), "rank": .int64(0)]) }
            // One commit that adds many pages at the end of the file: the newest meta page counts them, the older
            // one (the commit before) does not.
            try store.write { ctx in for i in 1...3_000 { _ = try ctx.insert("Note", ["text": .string(Self.text(i)), "rank": .int64(Int64(i))]) } }
            pageSize = try store.info().pageSize
        }
        let data = dir.store.appendingPathComponent("data.mdb").path
        let size = try #require(try FileManager.default.attributesOfItem(atPath: data)[.size] as? Int)
        let handle = try #require(FileHandle(forWritingAtPath: data))
        try handle.truncate(atOffset: UInt64(size - 4 * pageSize))
        try handle.close()
        #expect { try Store.open(at: dir.store, schema: Self.schema()) } throws: { ($0 as? StoreError)?.code == .corrupted }
    }

    @Test("the committed fixture (a short data file written by LMDB 0.9.24) opens and verifies clean")
    func committedShortFixtureOpens() throws {
        let fixture = try #require(Bundle.module.url(forResource: "short-data-file", withExtension: nil, subdirectory: "Fixtures"))
        let dir = try TemporaryDirectory("short-fixture")
        try FileManager.default.createDirectory(at: dir.store, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: fixture.appendingPathComponent("data.mdb"), to: dir.dataFile)
        let attributes = try FileManager.default.attributesOfItem(atPath: dir.dataFile.path)
        let size = try #require(attributes[.size] as? Int)
        let store = try Store.open(at: dir.store, schema: Self.schema())
        defer { store.close() }
        let info = try store.info()
        #expect(size < info.pagesUsed * info.pageSize, "the fixture is not short: \(size) bytes for \(info.pagesUsed) pages")
        #expect(try store.read { try $0.count("Note") } == 2)
        try store.write { ctx in _ = try ctx.insert("Note", ["text": .string("after"), "rank": .int64(7)]) }
        #expect(try store.verify().isClean)
    }
}
