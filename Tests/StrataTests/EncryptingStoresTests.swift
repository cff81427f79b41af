import Crypto
import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Encrypting an unencrypted store and decrypting an encrypted one, online: every value reads right before, during
/// (after some batches, with plain and sealed values side by side) and after the sweep; writes made meanwhile are
/// kept; index lookups, unique constraints, relationships and the change history stay right; the keys each phase
/// needs, refused with typed errors that write nothing; and no plaintext left in the data file once encrypted.
@Suite struct EncryptingStoresTests {
    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("SecretNoteRecord") {
                Attribute("confidentialText", .string).preservedOnDeletion()
                Attribute("code", .string).indexed()
                Attribute("serial", .string).unique()
                Attribute("n", .int64).indexed()
                Relationship("folder", to: "Folder", inverse: "notes")
            }
            Entity("Folder") {
                Attribute("title", .string)
                Relationship("notes", to: "SecretNoteRecord", inverse: "folder", toMany: true)
            }
        }
    }

    static func secret(_ i: Int) -> String { EncryptionTests.secret(i) }
    static func serial(_ i: Int) -> String { "Zqserial\(i)Xvplaintext" }
    static func code(_ i: Int) -> String { "Zqcode\(i % 97)Xvplaintext" }

    /// What the test wrote: the oracle every value is checked against.
    struct Oracle {
        var notes: [ObjectID: (text: String, serial: String, n: Int64, code: String)] = [:]
        var folders: [ObjectID] = []
        var folderOf: [ObjectID: ObjectID] = [:]
    }

    static func configuration(_ key: SymmetricKey?, history: Bool = true) -> StoreConfiguration {
        var configuration = EncryptionTests.configuration(key, history: history)
        configuration.backgroundMaintenance = false
        return configuration
    }

    static func open(_ url: URL, _ key: SymmetricKey?) throws -> Store {
        try Store.open(at: url, schema: try schema(), configuration: configuration(key))
    }

    /// Why opening the store at `url` with `key` fails, or nil when it opens.
    static func refusal(_ url: URL, _ key: SymmetricKey?) -> StoreError.Code? {
        do {
            try open(url, key).close()
            return nil
        } catch let error as StoreError {
            return error.code
        } catch {
            return nil
        }
    }

    /// A store of `count` notes in 10 folders, with an update and a deletion in its history.
    static func fill(_ url: URL, key: SymmetricKey?, count: Int) throws -> Oracle {
        var oracle = Oracle()
        let store = try open(url, key)
        defer { store.close() }
        try store.write { (ctx) throws in
            oracle.folders = try (0..<10).map { try ctx.insert("Folder", ["title": .string("Zqfolder\($0)Xvplaintext")]).id }
            for i in 0..<count {
                let id = try ctx.insert("SecretNoteRecord", ["confidentialText": .string(secret(i)), "code": .string(code(i)),
                                                       "serial": .string(serial(i)), "n": .int64(Int64(i))]).id
                oracle.notes[id] = (secret(i), serial(i), Int64(i), code(i))
                try ctx.link(id, of: "SecretNoteRecord", "folder", to: oracle.folders[i % 10])
                oracle.folderOf[id] = oracle.folders[i % 10]
            }
        }
        // An update and a deletion: the history holds the old values and a tombstone.
        let first = oracle.notes.keys.min()!
        try store.write { ctx in
            var note = try #require(try ctx.object(first, of: "SecretNoteRecord"))
            note["confidentialText"] = "Zqupdated0Xvplaintext"
            try ctx.update(note)
            let last = oracle.notes.keys.max()!
            try ctx.delete(last, of: "SecretNoteRecord")
            oracle.notes[last] = nil
            oracle.folderOf[last] = nil
        }
        oracle.notes[first]?.text = "Zqupdated0Xvplaintext"
        return oracle
    }

    /// Every note and link is the oracle's; lookups by index and unique constraints find what they should.
    static func expectOracle(_ store: Store, _ oracle: Oracle, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try store.read { (ctx) throws in
            #expect(try ctx.count("SecretNoteRecord") == oracle.notes.count, sourceLocation: sourceLocation)
            for (id, note) in oracle.notes {
                let object = try #require(try ctx.object(id, of: "SecretNoteRecord"), sourceLocation: sourceLocation)
                #expect(object["confidentialText"] == .string(note.text), sourceLocation: sourceLocation)
                #expect(object["serial"] == .string(note.serial), sourceLocation: sourceLocation)
                #expect(try ctx.related(id, of: "SecretNoteRecord", "folder") == [oracle.folderOf[id]!], sourceLocation: sourceLocation)
            }
            // Equality lookups on an index and on a unique attribute.
            for (id, note) in oracle.notes.prefix(50) {
                #expect(try ctx.objects("SecretNoteRecord").where("serial", equals: .string(note.serial)).ids() == [id], sourceLocation: sourceLocation)
                #expect(try ctx.objects("SecretNoteRecord").where("n", equals: .int64(note.n)).ids() == [id], sourceLocation: sourceLocation)
            }
            let code5 = oracle.notes.values.filter { $0.code == code(5) }.count
            #expect(try ctx.objects("SecretNoteRecord").where("code", equals: .string(code(5))).count() == code5, sourceLocation: sourceLocation)
            // A range on an indexed attribute (a scan in an encrypted store, the index in an unencrypted one).
            let small = oracle.notes.values.filter { $0.n >= 0 && $0.n < 39 }.count
            #expect(try ctx.objects("SecretNoteRecord").where("n", from: .int64(0), to: .int64(39)).count() == small, sourceLocation: sourceLocation)
        }
    }

    /// Every serial of the oracle is taken: inserting it again violates the unique constraint.
    static func expectSerialsTaken(_ store: Store, _ oracle: Oracle, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for note in oracle.notes.values.sorted(by: { $0.n < $1.n }).enumerated().filter({ $0.offset % 97 == 0 }).map(\.element) {
            do {
                try store.write { _ = try $0.insert("SecretNoteRecord", ["confidentialText": "x", "code": "y", "serial": .string(note.serial), "n": -1]) }
                Issue.record("serial \(note.serial) was not seen as taken", sourceLocation: sourceLocation)
            } catch let error as StoreError {
                #expect(error.code == .uniqueConstraintViolation, sourceLocation: sourceLocation)
            }
        }
    }

    static func format(_ store: Store) throws -> Int { try store.info().formatVersion }

    /// Runs `count` bounded batches of the sweep, as the background maintenance does.
    static func batches(_ store: Store, _ count: Int, limit: Int) throws -> Int {
        var done = 0
        for _ in 0..<count {
            let batch = try MaintenanceBatch.run(model: store.model, environment: store.environment, limit: limit, seconds: 60)
            done += batch.resealed
        }
        return done
    }

    /// An insert, an update of a note the sweep has not reached, and a link, made while the sweep runs.
    static func writeDuringTheSweep(_ store: Store, _ oracle: inout Oracle) throws {
        let untouched = oracle.notes.max { $0.value.n < $1.value.n }!.key
        let added = try store.write { (ctx) throws -> ObjectID in
            let id = try ctx.insert("SecretNoteRecord", ["confidentialText": "Zqduring0Xvplaintext", "code": .string(code(5)),
                                                   "serial": "Zqserialduring0Xvplaintext", "n": 100_000]).id
            try ctx.link(id, of: "SecretNoteRecord", "folder", to: oracle.folders[3])
            var note = try #require(try ctx.object(untouched, of: "SecretNoteRecord"))
            note["confidentialText"] = "Zqduring1Xvplaintext"
            note["serial"] = "Zqserialduring1Xvplaintext"
            try ctx.update(note)
            return id
        }
        oracle.notes[added] = ("Zqduring0Xvplaintext", "Zqserialduring0Xvplaintext", 100_000, code(5))
        oracle.folderOf[added] = oracle.folders[3]
        oracle.notes[untouched]?.text = "Zqduring1Xvplaintext"
        oracle.notes[untouched]?.serial = "Zqserialduring1Xvplaintext"
    }

    // MARK: Encrypting

    @Test func encryptingSealsEveryValueInResumableBatchesAndLeavesNoPlaintext() throws {
        let dir = try TemporaryDirectory("encrypt")
        let key = SymmetricKey(size: .bits256)
        var oracle = try Self.fill(dir.store, key: nil, count: 2_500)
        do {
            let store = try Self.open(dir.store, nil)
            try Self.expectOracle(store, oracle)
            #expect(try Self.format(store) == 2)
            store.close()
        }
        let earlier = try Self.open(dir.store, nil)
        try Store.encrypt(at: dir.store, with: key, configuration: StoreConfiguration())
        // A handle opened before is told to open the store again (with the key).
        #expect(throws: StoreError.self) { _ = try earlier.read { try $0.count("SecretNoteRecord") } }
        earlier.close()

        // From the beginning only the key opens it; nothing is written by a refusal.
        let before = StoreFileBytes.snapshot(dir.store)
        #expect(Self.refusal(dir.store, nil) == .encryptionKeyRequired)
        #expect(Self.refusal(dir.store, SymmetricKey(size: .bits256)) == .wrongEncryptionKey)
        #expect(Self.refusal(dir.store, SymmetricKey(size: .bits128)) == .invalidEncryptionKey)
        #expect(StoreFileBytes.snapshot(dir.store) == before)
        // Another change cannot begin while this one runs.
        #expect(Self.beginRefusal { try Store.encrypt(at: dir.store, with: key, configuration: StoreConfiguration()) } == .storeAlreadyEncrypted)
        #expect(Self.beginRefusal { try Store.encrypt(at: dir.store, with: key, configuration: Self.configuration(key)) } == .keyRotationInProgress)
        #expect(Self.beginRefusal { try Store.decrypt(at: dir.store, configuration: Self.configuration(key)) } == .keyRotationInProgress)
        #expect(Self.beginRefusal { try Store.rotateEncryptionKey(at: dir.store, to: SymmetricKey(size: .bits256), configuration: Self.configuration(key)) } == .keyRotationInProgress)
        #expect(StoreFileBytes.snapshot(dir.store) == before)

        do {
            let store = try Self.open(dir.store, key)
            let status = try store.maintenanceStatus()
            let remaining = try #require(status.valuesToEncrypt)
            #expect(remaining >= 2_500 && status.valuesUnderPreviousKey == nil && !status.isComplete)
            #expect(try Self.format(store) == 4)
            #expect(try store.info().isEncrypted)
            #expect(try Store.explainMigration(at: dir.store, schema: Self.schema(), configuration: Self.configuration(key)).keyRotationText?.contains("being encrypted") == true)
            // Some batches: plain and sealed records side by side, all read right.
            #expect(try Self.batches(store, 3, limit: 300) == 900)
            #expect(try #require(try store.maintenanceStatus().valuesToEncrypt) < remaining)
            try Self.expectOracle(store, oracle)
            try Self.expectSerialsTaken(store, oracle)
            try Self.writeDuringTheSweep(store, &oracle)
            try Self.expectOracle(store, oracle)
            store.close()
        }
        // A kill between batches: the next handle resumes where the last one committed, and ends.
        do {
            let store = try Self.open(dir.store, key)
            #expect(try store.maintenanceStatus().valuesToEncrypt != nil)
            let progress = try store.performMaintenance(batchSize: 256)
            #expect(progress.resealed > 1_000)
            // Every value is sealed; the pages are written again by the next environment (this one held plain pages).
            #expect(try store.maintenanceStatus().valuesToEncrypt != nil)
            #expect(try Self.format(store) == 4)
            try Self.expectOracle(store, oracle)
            store.close()
        }
        do {
            let store = try Self.open(dir.store, key)
            try store.performMaintenance(batchSize: 256)
            let status = try store.maintenanceStatus()
            #expect(status.valuesToEncrypt == nil && status.isComplete)
            #expect(try Self.format(store) == 3)
            try Self.expectOracle(store, oracle)
            try Self.expectSerialsTaken(store, oracle)
            #expect(try store.verify().problems.isEmpty)
            let history = try store.fetchHistory(after: nil).transactions
            #expect(history.count == 3)
            #expect(history[1].changes(of: "SecretNoteRecord")?.deleted.first?.tombstone["confidentialText"] == .string(Self.secret(2_499)))
            store.close()
        }
        #expect(Self.refusal(dir.store, nil) == .encryptionKeyRequired)
        #expect(Self.refusal(dir.store, SymmetricKey(size: .bits256)) == .wrongEncryptionKey)
        // Every record on disk is sealed, and the data file holds none of the strings the app wrote.
        try EncryptionTests.withRawStore(dir.store) { env, databases in
            for (name, _) in databases where name.hasPrefix("e") {
                let markers = try env.read { txn -> Set<UInt8> in
                    let dbi = try #require(try txn.openDatabase(name, flags: 0, create: false))
                    var markers = Set<UInt8>()
                    let cursor = try txn.cursor(dbi)
                    var entry = try cursor.first()
                    while let e = entry { markers.insert(e.value[0]); entry = try cursor.next() }
                    return markers
                }
                #expect(markers == [SealedValue.marker(epoch: 1)], "\(name) holds values that are not sealed")
            }
        }
        try Self.expectNoPlaintext(dir.store, count: 2_500)
    }

    /// None of the strings `fill` and `writeDuringTheSweep` wrote (4 per note) is in the store's data file.
    /// Every string looked for is at least 16 bytes long: an online encryption can leave pieces of at most 15
    /// bytes of what a page held before (LMDB's page copy; Encryption.md, "Limits"), so a shorter string could
    /// be found whole in a piece the encryption is allowed to leave.
    static func expectNoPlaintext(_ url: URL, count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let data = try StoreFileBytes.dataFile(of: url)
        var found: [String] = []
        var needles = (0..<count).flatMap { [secret($0), serial($0), "Zqfolder\($0 % 10)Xvplaintext", code($0)] }
        needles += ["Zqupdated0Xvplaintext", "Zqduring0Xvplaintext", "Zqduring1Xvplaintext", "SecretNoteRecord", "confidentialText"]
        let bytes = [UInt8](data)
        // One pass: every occurrence of the strings' common prefix, then each string checked there.
        let wanted = Set(needles)
        for offset in StoreFileBytes.offsets(of: Array("Zq".utf8), in: data) {
            for length in 16...40 where offset + length <= bytes.count {
                if let s = String(bytes: bytes[offset..<(offset + length)], encoding: .utf8), wanted.contains(s) { found.append(s) }
            }
        }
        for name in ["SecretNoteRecord", "confidentialText"] where !StoreFileBytes.offsets(of: Array(name.utf8), in: data).isEmpty { found.append(name) }
        #expect(found.isEmpty, "\(found.count) of \(needles.count) known strings are in the data file: \(found.prefix(5))", sourceLocation: sourceLocation)
    }

    static func beginRefusal(_ body: () throws -> Void) -> StoreError.Code? {
        do {
            try body()
            return nil
        } catch let error as StoreError {
            return error.code
        } catch {
            return nil
        }
    }

    // MARK: Decrypting

    @Test func decryptingGivesBackAStoreThatOpensWithoutAKey() throws {
        let dir = try TemporaryDirectory("decrypt")
        let key = SymmetricKey(size: .bits256)
        var oracle = try Self.fill(dir.store, key: key, count: 1_500)
        #expect(Self.beginRefusal { try Store.decrypt(at: dir.store, configuration: Self.configuration(SymmetricKey(size: .bits256))) } == .wrongEncryptionKey)
        #expect(Self.beginRefusal { try Store.decrypt(at: dir.store, configuration: Self.configuration(nil)) } == .encryptionKeyRequired)
        try Store.decrypt(at: dir.store, configuration: Self.configuration(key))

        let before = StoreFileBytes.snapshot(dir.store)
        #expect(Self.refusal(dir.store, nil) == .encryptionKeyRequired)
        #expect(Self.refusal(dir.store, SymmetricKey(size: .bits256)) == .wrongEncryptionKey)
        #expect(Self.beginRefusal { try Store.decrypt(at: dir.store, configuration: Self.configuration(key)) } == .keyRotationInProgress)
        #expect(Self.beginRefusal { try Store.encrypt(at: dir.store, with: key, configuration: Self.configuration(key)) } == .keyRotationInProgress)
        #expect(StoreFileBytes.snapshot(dir.store) == before)
        do {
            let store = try Self.open(dir.store, key)
            let remaining = try #require(try store.maintenanceStatus().valuesToDecrypt)
            #expect(remaining >= 1_500)
            #expect(try Self.format(store) == 4)
            #expect(try Self.batches(store, 2, limit: 400) == 800)
            try Self.expectOracle(store, oracle)
            try Self.expectSerialsTaken(store, oracle)
            try Self.writeDuringTheSweep(store, &oracle)
            store.close()
        }
        do {
            let store = try Self.open(dir.store, key)
            try store.performMaintenance(batchSize: 300)
            #expect(try store.maintenanceStatus().isComplete)
            #expect(try Self.format(store) == 2)
            #expect(try !store.info().isEncrypted)
            // The handle that ended it reads and writes on, plain.
            try Self.expectOracle(store, oracle)
            store.close()
        }
        // Only without a key now; every value right, indexes order-preserving again.
        #expect(Self.refusal(dir.store, key) == .storeNotEncrypted)
        let store = try Self.open(dir.store, nil)
        defer { store.close() }
        try Self.expectOracle(store, oracle)
        try Self.expectSerialsTaken(store, oracle)
        #expect(try store.verify().problems.isEmpty)
        #expect(try store.fetchHistory(after: nil).transactions.count == 3)
        let data = try StoreFileBytes.dataFile(of: dir.store)
        #expect(!StoreFileBytes.offsets(of: Array(Self.secret(700).utf8), in: data).isEmpty)
    }

    /// The background maintenance of a handle opened with the key seals every value; the page rewrite waits for the
    /// next handle (this one's environment wrote while values were plain), whose background maintenance ends the step.
    @Test func encryptingRunsInTheBackgroundOfHandlesOpenedWithTheKey() async throws {
        let dir = try TemporaryDirectory("encrypt-background")
        let key = SymmetricKey(size: .bits256)
        let oracle = try Self.fill(dir.store, key: nil, count: 800)
        try Store.encrypt(at: dir.store, with: key, configuration: StoreConfiguration())
        var configuration = Self.configuration(key)
        configuration.backgroundMaintenance = true
        func waitUntil(_ store: Store, _ done: (Store) throws -> Bool) async throws -> Bool {
            for _ in 0..<400 {
                if try done(store) { return true }
                try await Task.sleep(for: .milliseconds(25))
            }
            return false
        }
        do {
            let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: configuration)
            // Every value sealed (the handle's keyring reads no plain value any more): the page rewrite is left.
            #expect(try await waitUntil(store) { $0.environment.keyring?.hasPlainValues == false })
            try await Task.sleep(for: .milliseconds(100))
            #expect(try store.maintenanceStatus().valuesToEncrypt != nil)
            try Self.expectOracle(store, oracle)
            #expect(try Self.format(store) == 4)
            store.close()
        }
        let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: configuration)
        #expect(try await waitUntil(store) { try $0.maintenanceStatus().isComplete })
        #expect(try Self.format(store) == 3)
        try Self.expectOracle(store, oracle)
        store.close()
        try Self.expectNoPlaintext(dir.store, count: 800)
    }

    /// A kill between the fill and the drop of the free-page scrub leaves its filler database and the phase recorded:
    /// the next handle drops the filler, scrubs again and ends the encryption.
    @Test func anInterruptedFreePageScrubIsResumed() throws {
        let dir = try TemporaryDirectory("encrypt-scrub")
        let key = SymmetricKey(size: .bits256)
        let oracle = try Self.fill(dir.store, key: nil, count: 300)
        try Store.encrypt(at: dir.store, with: key, configuration: StoreConfiguration())
        do {
            let store = try Self.open(dir.store, key)
            try store.performMaintenance()
            store.close()
        }
        do {
            let store = try Self.open(dir.store, key)
            func phase() throws -> KeyRotationRecord.Phase? {
                try store.environment.read { try KeyRotationRecord.read(store.model.meta, in: $0)?.phase }
            }
            var batches = 0
            while try phase() == .pages, batches < 1_000 {
                _ = try MaintenanceBatch.run(model: store.model, environment: store.environment, limit: 100, seconds: 60)
                batches += 1
            }
            #expect(try phase() == .freePages)
            // The scrub's fill committed, then the process was killed.
            try store.environment.write { txn in
                let dbi = try #require(try txn.openDatabase(FreePageScrub.databaseName, flags: 0, create: true))
                for i in 0..<100 {
                    try withUnsafeBytes(of: UInt64(i).bigEndian) { k in
                        try [UInt8](repeating: 0, count: 1_000).withUnsafeBytes { v in _ = try txn.put(dbi, key: k, value: v) }
                    }
                }
            }
            #expect(try Self.format(store) == 4)
            store.close()
        }
        let store = try Self.open(dir.store, key)
        defer { store.close() }
        try store.performMaintenance()
        #expect(try store.maintenanceStatus().isComplete)
        #expect(try Self.format(store) == 3)
        #expect(try store.environment.read { try $0.openDatabase(FreePageScrub.databaseName, flags: 0, create: false) } == nil)
        try Self.expectOracle(store, oracle)
    }

    /// A plain history entry whose checksum begins with a seal's marker (0xE1, the first key epoch's) is a plain value
    /// all the same: the sweep seals it, and it reads right before and after.
    @Test func aPlainHistoryEntryThatBeginsLikeASealIsSealedToo() throws {
        let dir = try TemporaryDirectory("encrypt-lookalike")
        let key = SymmetricKey(size: .bits256)
        var lookalike: (key: [UInt8], plain: [UInt8])? = nil
        var commits = 0
        do {
            let store = try Self.open(dir.store, nil)
            defer { store.close() }
            while lookalike == nil && commits < 20_000 {
                for _ in 0..<100 {
                    try store.write { _ = try $0.insert("Folder", ["title": .string("Zqfolder\(commits)Xvplaintext")]) }
                    commits += 1
                }
                lookalike = try store.environment.read { txn in
                    let dbi = try #require(try txn.openDatabase(HistoryLog.entriesDatabase, flags: 0, create: false))
                    let cursor = try txn.cursor(dbi)
                    var entry = try cursor.first()
                    while let e = entry {
                        if e.value.first == SealedValue.marker(epoch: 1), e.value.count >= SealedValue.overhead { return (Array(e.key), Array(e.value)) }
                        entry = try cursor.next()
                    }
                    return nil
                }
            }
        }
        let found = try #require(lookalike, "no history entry of \(commits) begins with 0xE1")
        try Store.encrypt(at: dir.store, with: key, configuration: StoreConfiguration())
        for _ in 0..<2 {
            let store = try Self.open(dir.store, key)
            #expect(try store.fetchHistory(after: nil, limit: commits).transactions.count == commits)
            try store.performMaintenance(batchSize: 500)
            store.close()
        }
        try EncryptionTests.withRawStore(dir.store) { env, _ in
            let stored = try env.read { txn in
                let dbi = try #require(try txn.openDatabase(HistoryLog.entriesDatabase, flags: 0, create: false))
                return try found.key.withUnsafeBytes { k in Array(try #require(try txn.get(dbi, key: k))) }
            }
            #expect(stored.count == found.plain.count + SealedValue.overhead, "the entry that began like a seal was left plain")
        }
        let store = try Self.open(dir.store, key)
        defer { store.close() }
        #expect(try store.maintenanceStatus().isComplete)
        #expect(try store.fetchHistory(after: nil, limit: commits).transactions.count == commits)
    }

    // MARK: Refusals

    @Test func aStepIsRefusedWhenTheStoreIsNotInTheStateItNeeds() throws {
        let dir = try TemporaryDirectory("encrypt-refusals")
        let key = SymmetricKey(size: .bits256)
        _ = try Self.fill(dir.store, key: nil, count: 20)
        let before = StoreFileBytes.snapshot(dir.store)
        #expect(Self.beginRefusal { try Store.decrypt(at: dir.store, configuration: Self.configuration(key)) } == .storeNotEncrypted)
        #expect(Self.beginRefusal { try Store.encrypt(at: dir.store, with: SymmetricKey(size: .bits128), configuration: StoreConfiguration()) } == .invalidEncryptionKey)
        // During a migration (its lock held).
        let lock = try #require(try MigrationLock.acquire(storePath: dir.store.standardizedFileURL.path))
        #expect(Self.beginRefusal { try Store.encrypt(at: dir.store, with: key, configuration: StoreConfiguration()) } == .migrationInProgress)
        lock.release()
        #expect(StoreFileBytes.snapshot(dir.store).filter { $0.key != "migration.lock" } == before.filter { $0.key != "migration.lock" })
        // A whole encrypt, then the encrypted store refuses to be encrypted again.
        try Store.encrypt(at: dir.store, with: key, configuration: StoreConfiguration())
        do {
            let store = try Self.open(dir.store, key)
            try store.performMaintenance()
            // Its values are sealed; its pages are to be written again by the next handle.
            #expect(try store.maintenanceStatus().valuesToEncrypt != nil)
            store.close()
        }
        #expect(Self.beginRefusal { try Store.encrypt(at: dir.store, with: key, configuration: Self.configuration(key)) } == .storeAlreadyEncrypted)
        #expect(Self.beginRefusal { try Store.rotateEncryptionKey(at: dir.store, to: SymmetricKey(size: .bits256), configuration: Self.configuration(key)) } == .keyRotationInProgress)
        // Decrypting replaces the pending page rewrite.
        try Store.decrypt(at: dir.store, configuration: Self.configuration(key))
        do {
            let store = try Self.open(dir.store, key)
            try store.performMaintenance()
            store.close()
        }
        #expect(Self.refusal(dir.store, nil) == nil)
    }
}
