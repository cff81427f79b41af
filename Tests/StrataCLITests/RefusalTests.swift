import Foundation
import Testing
@testable import Strata
import StrataTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Stores that must be refused with a clear message and never written.
@Suite(.serialized) struct RefusalTests {
    /// Every command that takes a store, with arguments that would otherwise work.
    static func invocations(_ store: String) -> [[String]] {
        [
            ["info", store], ["info", store, "--json"], ["schema", store], ["export", store], ["verify", store],
            ["import", store, "objects.jsonl"], ["plan", store, "--to", "v1.json"], ["migrate", store, "--to", "v2.json"],
            ["backup", store, "copy-of-\(UUID().uuidString).store"],
        ]
    }

    func prepare() throws -> TempDir {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try dir.write("v2.json", Fixtures.v2)
        try dir.write("objects.jsonl", Fixtures.objects)
        return dir
    }

    /// Runs every command on `store`, expecting status 1, one line on stderr containing `expected`, and
    /// no change to the files of the store.
    func expectRefused(_ dir: TempDir, _ store: String, _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let before = snapshot(dir.path(store))
        for args in Self.invocations(store) {
            let r = try CLI.run(args, in: dir)
            #expect(r.status == 1, "\(args): \(r)", sourceLocation: sourceLocation)
            let lines = r.stderr.split(separator: "\n")
            #expect(lines.count == 1 && lines[0].hasPrefix("strata: ") && r.stderr.contains(expected), "\(args): \(r)", sourceLocation: sourceLocation)
            #expect(snapshot(dir.path(store)) == before, "\(args) changed the store's files", sourceLocation: sourceLocation)
        }
        #expect(!((try? FileManager.default.contentsOfDirectory(atPath: dir.url.path)) ?? []).contains { $0.hasPrefix("copy-of-") })
    }

    /// The names and contents of a path's files (lock.mdb excluded: reader slots live there).
    func snapshot(_ path: String) -> [String: Data] {
        var out: [String: Data] = [:]
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [:] }
        if !isDirectory.boolValue { return [path: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()] }
        for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] where name != "lock.mdb" {
            out[name] = (try? Data(contentsOf: URL(fileURLWithPath: path + "/" + name))) ?? Data()
        }
        return out
    }

    func fixtureStore(_ dir: TempDir, _ name: String) throws {
        #expect(try dir.strata("create", name, "--schema", "v1.json").status == 0)
        #expect(try dir.strata("import", name, "objects.jsonl").status == 0)
    }

    @Test func missingStore() throws {
        let dir = try prepare()
        try expectRefused(dir, "nowhere.store", "No store exists at")
        // An empty directory is not a store either, and stays empty.
        try FileManager.default.createDirectory(atPath: dir.path("empty.store"), withIntermediateDirectories: false)
        try expectRefused(dir, "empty.store", "No store exists at")
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("empty.store")).isEmpty)
    }

    @Test func notAStore() throws {
        let dir = try prepare()
        try dir.write("file.txt", "hello")
        try expectRefused(dir, "file.txt", "is not a Strata store")
        try FileManager.default.createDirectory(atPath: dir.path("photos"), withIntermediateDirectories: false)
        try dir.write("photos/cat.jpg", "not really")
        try expectRefused(dir, "photos", "is not a Strata store")
    }

    @Test func damagedStore() throws {
        let dir = try prepare()
        try fixtureStore(dir, "truncated.store")
        let path = dir.path("truncated.store/data.mdb")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))
        try expectRefused(dir, "truncated.store", "is damaged")

        try fixtureStore(dir, "emptied.store")
        try Data().write(to: URL(fileURLWithPath: dir.path("emptied.store/data.mdb")))
        try expectRefused(dir, "emptied.store", "is damaged: data.mdb is empty")
    }

    @Test func storeOfANewerModel() throws {
        let dir = try prepare()
        try fixtureStore(dir, "s.store")
        #expect(try dir.strata("migrate", "s.store", "--to", "v2.json").status == 0)
        let before = snapshot(dir.path("s.store"))
        for args in [["plan", "s.store", "--to", "v1.json"], ["migrate", "s.store", "--to", "v1.json"]] {
            let r = try CLI.run(args, in: dir)
            #expect(r.status == 1, "\(args): \(r)")
            #expect(r.stderr.contains("The store is at model v2, newer than this app's newest model v1; nothing was written"), "\(args): \(r)")
            #expect(snapshot(dir.path("s.store")) == before)
        }
    }

    @Test func storeOfANewerFormat() throws {
        let dir = try prepare()
        try fixtureStore(dir, "future.store")
        // Rewrite the format record as a later Strata would.
        let store = try Store.openRecorded(at: URL(fileURLWithPath: dir.path("future.store")))
        try store.environment.write { txn in
            let dbi = try #require(try txn.openDatabase(MetaTable.databaseName, flags: 0, create: false))
            var format = FormatRecord.current()
            format.formatVersion = FormatRecord.currentVersion + 1
            try MetaTable(dbi: dbi, path: store.url.path).put(.format, format.encoded(), in: txn)
        }
        store.close()
        try expectRefused(dir, "future.store", "this version of Strata reads 1 to \(FormatRecord.currentVersion)")
    }
}
