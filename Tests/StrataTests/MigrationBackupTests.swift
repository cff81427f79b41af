import Foundation
import Strata
import StrataTestSupport
import Testing

/// The backup option: before a migration changes anything, a compacted copy of the store at its old version
/// is written to the given directory; the copy opens with the old model and holds the old data.
@Suite struct MigrationBackupTests {
    @Test func backupHoldsTheStoreAsItWasBeforeMigrating() throws {
        let dir = try TemporaryDirectory("backup")
        let oracle = Oracle(schema: try JournalChain.v1())
        do {
            let store = try Store.open(at: dir.store, schema: try JournalChain.v1())
            defer { store.close() }
            try JournalChain.fill(store, version: "v1", entries: 300, seed: 12, oracle: oracle)
            // Churn, so that the live file has free pages a compacted copy leaves out.
            try store.write { ctx in for i in 0..<2000 { try ctx.insert("Label", ["text": .string("churn \(i) " + String(repeating: "x", count: 200))]) } }
            try store.write { ctx in for l in try ctx.objects("Label").fetch() where l["text"].stringValue!.hasPrefix("churn") { try ctx.delete(l) } }
        }
        var options = MigrationOptions()
        options.backupDirectory = dir.path("backup")
        let store = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan(),
                                   configuration: StoreConfiguration(migration: options))
        store.close()

        let backup = try Store.open(at: dir.path("backup"), schema: try JournalChain.v1())
        defer { backup.close() }
        #expect(try oracle.mismatches(in: backup) == [])
        #expect(try backup.info().history == ["v1"])
        #expect(try backup.verify().problems == [])
        let backupSize = try StoreFileBytes.dataFile(of: dir.path("backup")).count
        let liveSize = try StoreFileBytes.dataFile(of: dir.store).count
        #expect(backupSize < liveSize, "the backup is compacted")
    }

    @Test func existingBackupDirectoryStopsTheMigrationBeforeItStarts() throws {
        let dir = try TemporaryDirectory("backup-exists")
        let oracle = Oracle(schema: try JournalChain.v1())
        do {
            let store = try Store.open(at: dir.store, schema: try JournalChain.v1())
            defer { store.close() }
            try JournalChain.fill(store, version: "v1", entries: 50, seed: 1, oracle: oracle)
        }
        try FileManager.default.createDirectory(at: dir.path("taken"), withIntermediateDirectories: false)
        var options = MigrationOptions()
        options.backupDirectory = dir.path("taken")
        let before = try StoreFileBytes.dataFile(of: dir.store)
        #expect(throws: StoreError.self) {
            try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan(),
                           configuration: StoreConfiguration(migration: options))
        }
        #expect(try StoreFileBytes.dataFile(of: dir.store) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path("taken").path).isEmpty)
    }

    @Test func noBackupWithoutAMigration() throws {
        let dir = try TemporaryDirectory("backup-none")
        _ = try Store.open(at: dir.store, schema: try JournalChain.v5()).close()
        var options = MigrationOptions()
        options.backupDirectory = dir.path("backup")
        let store = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan(),
                                   configuration: StoreConfiguration(migration: options))
        store.close()
        #expect(!FileManager.default.fileExists(atPath: dir.path("backup").path))
    }

    @Test func onlineBackupOfAnOpenStore() throws {
        let dir = try TemporaryDirectory("backup-online")
        let schema = try TestSchemas.library()
        let oracle = Oracle(schema: schema)
        let store = try Store.open(at: dir.store, schema: schema)
        defer { store.close() }
        var generator = LibraryGenerator(seed: 3)
        try generator.fill(store, oracle: oracle, authors: 80, tags: 10)
        try store.backup(to: dir.path("copy"))
        #expect(throws: StoreError.self) { try store.backup(to: dir.path("copy")) }
        let copy = try Store.open(at: dir.path("copy"), schema: schema)
        defer { copy.close() }
        #expect(try oracle.mismatches(in: copy) == [])
    }
}
