import Crypto
import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// Encrypted stores (<doc:Encryption>): opened only with their key, every value sealed so that the data file
/// holds none of the app's strings, index lookups through keyed hashes, and seals that do not open (changed,
/// truncated, moved between objects, entities or stores) reported as damage — never read as a wrong value.
@Suite struct EncryptionTests {
    static func schema(version: String = "v1", extra: Bool = false) throws -> Schema {
        try Schema(version) {
            Entity("SecretNoteRecord") {
                Attribute("confidentialText", .string).preservedOnDeletion()
                Attribute("code", .string).indexed()
                Attribute("serial", .string).unique()
                Attribute("n", .int64).indexed()
                if extra { Attribute("remark", .string).optional() }
            }
            Entity("Other") { Attribute("x", .int64) }
        }
    }

    static func configuration(_ key: SymmetricKey?, history: Bool = false) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.encryption = key.map { StoreEncryption(key: $0) }
        if history { configuration.history = .enabled(.unlimited) }
        return configuration
    }

    /// Text that no store writes by itself: `Zq` + a number + `Xv`.
    static func secret(_ i: Int) -> String { "Zqsecret\(i)Xvplain" }

    static func fill(_ store: Store, count: Int) throws -> [ObjectID] {
        try store.write { (ctx) throws in
            try (0..<count).map { i in
                try ctx.insert("SecretNoteRecord", ["confidentialText": .string(secret(i)), "code": .string("Zqcode\(i % 97)Xv"),
                                              "serial": .string("Zqserial\(i)Xv"), "n": .int64(Int64(i))]).id
            }
        }
    }

    // MARK: Opening

    @Test func anEncryptedStoreReadsBackThroughItsKeyAndHasFormat3() throws {
        let dir = try TemporaryDirectory("enc-roundtrip")
        let key = SymmetricKey(size: .bits256)
        var ids: [ObjectID] = []
        do {
            let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
            defer { store.close() }
            ids = try Self.fill(store, count: 50)
            // Values larger than the arena's chunks, and empty ones.
            ids += try store.write { ctx in
                [try ctx.insert("SecretNoteRecord", ["confidentialText": .string(String(repeating: "Zq0123456789", count: 10_000)),
                                               "code": "", "serial": "big", "n": 50]).id,
                 try ctx.insert("SecretNoteRecord", ["confidentialText": "", "code": "", "serial": "empty", "n": 51]).id]
            }
        }
        let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
        defer { store.close() }
        try store.read { (ctx) throws in
            #expect(try ctx.object(ids[50], of: "SecretNoteRecord")?["confidentialText"] == .string(String(repeating: "Zq0123456789", count: 10_000)))
            #expect(try ctx.object(ids[51], of: "SecretNoteRecord")?["confidentialText"] == .string(""))
        }
        #expect(try store.info().formatVersion == 3)
        #expect(try store.info().isEncrypted)
        try store.read { (ctx) throws in
            for (i, id) in ids.prefix(50).enumerated() {
                let note = try #require(try ctx.object(id, of: "SecretNoteRecord"))
                #expect(note["confidentialText"] == .string(Self.secret(i)))
            }
        }
        #expect(try store.verify().problems.isEmpty)
    }

    @Test func wrongKeyNoKeyAndAKeyOnAnUnencryptedStoreAreTypedAndWriteNothing() throws {
        let dir = try TemporaryDirectory("enc-refusals")
        let key = SymmetricKey(size: .bits256)
        do {
            let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
            _ = try Self.fill(store, count: 10)
            store.close()
        }
        let before = StoreFileBytes.snapshot(dir.store)
        func refusal(_ configuration: StoreConfiguration, at url: URL) -> StoreError.Code? {
            do {
                let store = try Store.open(at: url, schema: try Self.schema(), configuration: configuration)
                store.close()
                return nil
            } catch let error as StoreError {
                return error.code
            } catch {
                return nil
            }
        }
        #expect(refusal(Self.configuration(SymmetricKey(size: .bits256)), at: dir.store) == .wrongEncryptionKey)
        #expect(refusal(Self.configuration(nil), at: dir.store) == .encryptionKeyRequired)
        #expect(refusal(Self.configuration(SymmetricKey(size: .bits128)), at: dir.store) == .invalidEncryptionKey)
        var recorded = Self.configuration(nil)
        recorded.createIfMissing = false
        #expect(throws: StoreError.self) { try Store.openRecorded(at: dir.store, configuration: recorded) }
        #expect(StoreFileBytes.snapshot(dir.store) == before)
        // While a handle with the key is open (the environment unlocked in this process), others are still refused.
        let open = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
        #expect(refusal(Self.configuration(nil), at: dir.store) == .encryptionKeyRequired)
        #expect(refusal(Self.configuration(SymmetricKey(size: .bits256)), at: dir.store) == .wrongEncryptionKey)
        open.close()

        let plainDir = try TemporaryDirectory("enc-plain")
        do {
            let store = try Store.open(at: plainDir.store, schema: try Self.schema())
            _ = try Self.fill(store, count: 10)
            #expect(try store.info().formatVersion == 1)
            #expect(try !store.info().isEncrypted)
            store.close()
        }
        let plainBefore = StoreFileBytes.snapshot(plainDir.store)
        #expect(refusal(Self.configuration(key), at: plainDir.store) == .storeNotEncrypted)
        #expect(StoreFileBytes.snapshot(plainDir.store) == plainBefore)
    }

    // MARK: What the file holds

    @Test func theDataFileHoldsNoneOf10000KnownStrings() throws {
        let dir = try TemporaryDirectory("enc-scan")
        let key = SymmetricKey(size: .bits256)
        do {
            let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key, history: true))
            defer { store.close() }
            _ = try store.write { (ctx) throws in
                try (0..<10_000).map { i in
                    try ctx.insert("SecretNoteRecord", ["confidentialText": .string(Self.secret(i)), "code": .string("Zqcode\(i % 97)Xv"),
                                                  "serial": .string("Zqserial\(i)Xv"), "n": .int64(Int64(i))]).id
                }
            }
            // Deletions put tombstones (the deleted values) into the history; updates change records and indexes.
            try store.write { (ctx) throws in
                for note in try ctx.objects("SecretNoteRecord").where("n", from: .int64(0), to: .int64(100)).fetch() {
                    guard case .int64(let n) = note["n"] else { continue }
                    var changed = note
                    changed["confidentialText"] = .string("Zqupdated\(n)Xv")
                    try ctx.update(changed)
                }
                for id in try ctx.objects("SecretNoteRecord").where("n", from: .int64(9_900), to: nil).ids() {
                    try ctx.delete(id, of: "SecretNoteRecord")
                }
            }
            // The history holds the deleted values (tombstones): sealed like everything else.
            let history = try store.fetchHistory(after: nil).transactions
            #expect(history.count == 2)
            #expect(history.last?.changes(of: "SecretNoteRecord")?.deleted.contains { $0.tombstone["confidentialText"] == .string(Self.secret(9_950)) } == true)
        }
        let data = try StoreFileBytes.dataFile(of: dir.store)
        // Every string the app wrote starts with `Zq` and ends with `Xv`: none of them is in the file, nor the
        // model's entity and attribute names.
        for needle in ["Zqsecret", "Zqcode", "Zqserial", "Zqupdated", "Xvplain", "SecretNoteRecord", "confidentialText"] {
            #expect(StoreFileBytes.offsets(of: Array(needle.utf8), in: data).count == 0, "\(needle) is in the data file")
        }
        // The same search finds them in an unencrypted store (the check itself works).
        let plainDir = try TemporaryDirectory("enc-scan-plain")
        do {
            let store = try Store.open(at: plainDir.store, schema: try Self.schema())
            defer { store.close() }
            _ = try Self.fill(store, count: 100)
        }
        let plain = try StoreFileBytes.dataFile(of: plainDir.store)
        for needle in ["Zqsecret", "Zqcode", "Zqserial", "SecretNoteRecord", "confidentialText"] {
            #expect(StoreFileBytes.offsets(of: Array(needle.utf8), in: plain).count > 0)
        }
        // And the encrypted store still reads every value.
        let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
        defer { store.close() }
        try store.read { (ctx) throws in
            #expect(try ctx.count("SecretNoteRecord") == 9_900)
            // One read transaction opens every record (a scan), each value right.
            var seen = 0
            try ctx.objects("SecretNoteRecord").forEach { note in
                guard case .int64(let n) = note["n"] else { return }
                let expected = n < 100 ? "Zqupdated\(n)Xv" : Self.secret(Int(n))
                if note["confidentialText"] == .string(expected) { seen += 1 }
            }
            #expect(seen == 9_900)
            #expect(try ctx.objects("SecretNoteRecord").where("serial", equals: .string("Zqserial5000Xv")).first()?["confidentialText"] == .string(Self.secret(5000)))
            #expect(try ctx.objects("SecretNoteRecord").where("n", equals: .int64(50)).first()?["confidentialText"] == .string("Zqupdated50Xv"))
        }
    }

    // MARK: Indexes

    @Test func indexesAnswerEqualityRangesAndUniqueConstraintsThroughKeyedHashes() throws {
        let key = SymmetricKey(size: .bits256)
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(key))
        defer { store.close() }
        _ = try Self.fill(store, count: 500)
        try store.read { (ctx) throws in
            #expect(try ctx.objects("SecretNoteRecord").where("code", equals: .string("Zqcode3Xv")).count() == 6)
            #expect(try ctx.objects("SecretNoteRecord").where("n", equals: .int64(42)).first()?["serial"] == .string("Zqserial42Xv"))
            #expect(try ctx.objects("SecretNoteRecord").where("n", equals: .int64(100_000)).count() == 0)
            // Ranges are answered by a scan (hashed keys order nothing), with the same results.
            let range = try ctx.objects("SecretNoteRecord").where("n", from: .int64(10), to: .int64(20)).fetch()
            #expect(range.compactMap { if case .int64(let v) = $0["n"] { v } else { nil } }.sorted() == Array(Int64(10)..<20))
            let sorted = try ctx.objects("SecretNoteRecord").sorted(by: "n", ascending: false).limit(3).fetch()
            #expect(sorted.map { $0["n"] } == [.int64(499), .int64(498), .int64(497)])
        }
        do {
            try store.write { _ = try $0.insert("SecretNoteRecord", ["confidentialText": "x", "code": "y", "serial": "Zqserial7Xv", "n": 1]) }
            Issue.record("a duplicate unique value was accepted")
        } catch let error as StoreError {
            #expect(error.code == .uniqueConstraintViolation)
        }
        // An updated value moves in the index: the old value finds nothing, the new one the object.
        try store.write { (ctx) throws in
            var note = try #require(try ctx.objects("SecretNoteRecord").where("n", equals: .int64(7)).first())
            note["code"] = "Zqmoved"
            try ctx.update(note)
        }
        try store.read { (ctx) throws in
            #expect(try ctx.objects("SecretNoteRecord").where("code", equals: "Zqmoved").count() == 1)
            #expect(try ctx.objects("SecretNoteRecord").where("code", equals: .string("Zqcode7Xv")).count() == 5)
        }
        #expect(try store.verify().problems.isEmpty)
    }

    // MARK: Seals that do not open

    /// The store's files through an environment without its key: values as they are on disk.
    static func withRawStore<T>(_ url: URL, _ body: (Environment, [String: Int]) throws -> T) throws -> T {
        let (environment, _) = try Environment.acquire(path: url.storePath,
                                                       configuration: StoreConfiguration().environmentConfiguration(databases: 128))
        defer { environment.release() }
        #expect(environment.cipher == nil)
        // The named databases (LMDB's main database, handle 1) and their entry counts.
        let databases = try environment.read { txn -> [String: Int] in
            var names: [String] = []
            let main = try txn.cursor(1)
            var entry = try main.first()
            while let e = entry {
                names.append(String(decoding: e.key, as: UTF8.self))
                entry = try main.next()
            }
            var out: [String: Int] = [:]
            for name in names where name.hasPrefix("e") {
                if let dbi = try txn.openDatabase(name, flags: 0, create: false) { out[name] = try txn.entryCount(dbi) }
            }
            return out
        }
        return try body(environment, databases)
    }

    static func rawValue(_ environment: Environment, _ database: String, _ id: ObjectID) throws -> [UInt8] {
        try environment.read { txn in
            let dbi = try #require(try txn.openDatabase(database, flags: 0, create: false))
            return try ObjectKey.with(id.rawValue) { k in Array(try #require(try txn.get(dbi, key: k))) }
        }
    }

    static func putRaw(_ environment: Environment, _ database: String, _ id: ObjectID, _ value: [UInt8]) throws {
        try environment.write { txn in
            let dbi = try #require(try txn.openDatabase(database, flags: 0, create: false))
            try ObjectKey.with(id.rawValue) { k in try value.withUnsafeBytes { v in _ = try txn.put(dbi, key: k, value: v) } }
        }
    }

    static func readError(_ url: URL, key: SymmetricKey, _ id: ObjectID, of entity: String = "SecretNoteRecord") throws -> StoreError? {
        let store = try Store.open(at: url, schema: try schema(), configuration: configuration(key))
        defer { store.close() }
        do {
            let object = try store.read { try $0.object(id, of: entity) }
            Issue.record("read \(String(describing: object)) instead of an error")
            return nil
        } catch let error as StoreError {
            return error
        }
    }

    @Test func changedTruncatedSwappedAndMovedSealsAreTypedDamageNeverAWrongValue() throws {
        let dir = try TemporaryDirectory("enc-tamper")
        let key = SymmetricKey(size: .bits256)
        var ids: [ObjectID] = []
        var others: [ObjectID] = []
        do {
            let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
            defer { store.close() }
            ids = try Self.fill(store, count: 50)
            others = try store.write { ctx in try (0..<7).map { try ctx.insert("Other", ["x": .int64(Int64($0))]).id } }
        }
        let notes = try Self.withRawStore(dir.store) { _, databases in try #require(databases.first { $0.value == 50 }?.key) }
        let otherDB = try Self.withRawStore(dir.store) { _, databases in try #require(databases.first { $0.value == 7 }?.key) }

        // One byte of the ciphertext changed.
        try Self.withRawStore(dir.store) { env, _ in
            var sealed = try Self.rawValue(env, notes, ids[3])
            #expect(sealed.first == 0xE1)
            sealed[sealed.count / 2] ^= 0x01
            try Self.putRaw(env, notes, ids[3], sealed)
        }
        let changed = try #require(try Self.readError(dir.store, key: key, ids[3]))
        #expect(changed.code == .corruptedRecord)
        #expect(changed.entity == "SecretNoteRecord")
        #expect(changed.objectID == ids[3])
        #expect(changed.reason?.contains("does not open") == true)

        // Truncated (tag cut), and cut to nothing but a few bytes.
        try Self.withRawStore(dir.store) { env, _ in
            let sealed = try Self.rawValue(env, notes, ids[4])
            try Self.putRaw(env, notes, ids[4], Array(sealed.dropLast(5)))
            try Self.putRaw(env, notes, ids[5], [0xE1, 0, 1])
        }
        #expect(try Self.readError(dir.store, key: key, ids[4])?.code == .corruptedRecord)
        #expect(try Self.readError(dir.store, key: key, ids[5])?.code == .corruptedRecord)

        // Object 10's record put under object 11's key: not object 10's values under another ID.
        try Self.withRawStore(dir.store) { env, _ in
            try Self.putRaw(env, notes, ids[11], try Self.rawValue(env, notes, ids[10]))
        }
        let swapped = try #require(try Self.readError(dir.store, key: key, ids[11]))
        #expect(swapped.code == .corruptedRecord)
        #expect(swapped.objectID == ids[11])
        // The seal itself refuses it (its associated data holds the object ID), before the record's own checksum.
        #expect(swapped.reason?.contains("does not open") == true)

        // A record of another entity put under an ID of this one.
        try Self.withRawStore(dir.store) { env, _ in
            try Self.putRaw(env, notes, others[0], try Self.rawValue(env, otherDB, others[0]))
        }
        #expect(try Self.readError(dir.store, key: key, others[0])?.code == .corruptedRecord)

        // Every other record still reads, and verify lists exactly the damaged ones.
        let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
        defer { store.close() }
        try store.read { (ctx) throws in
            for (i, id) in ids.enumerated() where ![3, 4, 5, 11].contains(i) {
                #expect(try ctx.object(id, of: "SecretNoteRecord")?["confidentialText"] == .string(Self.secret(i)))
            }
        }
        let damaged = Set(try store.verify().problems.filter { $0.kind == .corruptedRecord }.compactMap(\.objectID))
        #expect(damaged == Set([ids[3], ids[4], ids[5], ids[11], others[0]].map(\.rawValue)))
    }

    @Test func aRecordMovedBetweenTwoStoresWithTheSameKeyDoesNotOpen() throws {
        let first = try TemporaryDirectory("enc-move-a")
        let second = try TemporaryDirectory("enc-move-b")
        let key = SymmetricKey(size: .bits256)
        var ids: [ObjectID] = []
        for dir in [first, second] {
            let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
            ids = try store.write { (ctx) throws in
                try (0..<5).map { i in
                    try ctx.insert("SecretNoteRecord", ["confidentialText": .string(dir === first ? "first \(i)" : "second \(i)"),
                                                  "code": "c", "serial": .string("s\(i)"), "n": .int64(Int64(i))]).id
                }
            }
            store.close()
        }
        // Same entity, same tag, same object ID, same key: only the stores' salts differ.
        let sealed = try Self.withRawStore(first.store) { env, databases in
            try Self.rawValue(env, try #require(databases.first { $0.value == 5 }?.key), ids[2])
        }
        try Self.withRawStore(second.store) { env, databases in
            try Self.putRaw(env, try #require(databases.first { $0.value == 5 }?.key), ids[2], sealed)
        }
        let error = try #require(try Self.readError(second.store, key: key, ids[2]))
        #expect(error.code == .corruptedRecord)
        let store = try Store.open(at: second.store, schema: try Self.schema(), configuration: Self.configuration(key))
        defer { store.close() }
        #expect(try store.read { try $0.object(ids[1], of: "SecretNoteRecord")?["confidentialText"] } == .string("second 1"))
    }

    @Test func damagedSealedMetadataIsACorruptedStoreError() throws {
        let dir = try TemporaryDirectory("enc-meta")
        let key = SymmetricKey(size: .bits256)
        do {
            let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
            store.close()
        }
        try Self.withRawStore(dir.store) { env, _ in
            try env.write { txn in
                let dbi = try #require(try txn.openDatabase("meta", flags: 0, create: false))
                try Array("catalog".utf8).withUnsafeBytes { k in
                    var sealed = Array(try #require(try txn.get(dbi, key: k)))
                    sealed[20] ^= 0x40
                    try sealed.withUnsafeBytes { v in _ = try txn.put(dbi, key: k, value: v) }
                }
            }
        }
        do {
            let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
            store.close()
            Issue.record("a store with a damaged catalog opened")
        } catch let error as StoreError {
            #expect(error.code == .corrupted)
            #expect(error.description.contains("does not open"))
        }
    }

    // MARK: Everything else on an encrypted store

    @Test func observationAndHistoryWorkOnAnEncryptedStore() async throws {
        let key = SymmetricKey(size: .bits256)
        let store = try Store.temporary(schema: try Self.schema(), configuration: Self.configuration(key, history: true))
        defer { store.close() }
        let counts = ObservedValues<Int>()
        let task = counts.record(store.observe { try $0.count("SecretNoteRecord") })
        #expect(await counts.waitUntil { $0 == [0] })
        let start = try store.currentHistoryToken()
        _ = try Self.fill(store, count: 20)
        #expect(await counts.waitUntil { $0.last == 20 })
        task.cancel()
        let page = try store.fetchHistory(after: start)
        #expect(page.transactions.count == 1)
        #expect(page.transactions.first?.changes(of: "SecretNoteRecord")?.inserted.count == 20)
    }

    @Test func backupAndMigrationKeepAnEncryptedStoreEncrypted() throws {
        let dir = try TemporaryDirectory("enc-features")
        let key = SymmetricKey(size: .bits256)
        let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key, history: true))
        _ = try Self.fill(store, count: 20)

        let backup = dir.path("backup")
        try store.backup(to: backup)
        store.close()
        let copy = try StoreFileBytes.dataFile(of: backup)
        #expect(StoreFileBytes.offsets(of: Array("Zqsecret".utf8), in: copy).count == 0)
        do {
            _ = try Store.open(at: backup, schema: try Self.schema())
            Issue.record("the backup opened without a key")
        } catch let error as StoreError {
            #expect(error.code == .encryptionKeyRequired)
        }
        let restored = try Store.open(at: backup, schema: try Self.schema(), configuration: Self.configuration(key))
        #expect(try restored.read { try $0.objects("SecretNoteRecord").where("serial", equals: "Zqserial3Xv").first()?["n"] } == .int64(3))
        restored.close()

        // A migration (an added attribute, and every record rewritten) keeps the store encrypted and readable.
        var migrating = Self.configuration(key, history: true)
        migrating.migration.rewritesEveryRecord()
        try Store.migrate(at: dir.store, schema: try Self.schema(version: "v2", extra: true), plan: nil, configuration: migrating)
        let migrated = try Store.open(at: dir.store, schema: try Self.schema(version: "v2", extra: true), configuration: migrating)
        try migrated.read { (ctx) throws in
            #expect(try ctx.count("SecretNoteRecord") == 20)
            #expect(try ctx.objects("SecretNoteRecord").where("code", equals: .string("Zqcode5Xv")).first()?["confidentialText"] == .string(Self.secret(5)))
        }
        try migrated.write { (ctx) throws in
            var note = try #require(try ctx.objects("SecretNoteRecord").where("n", equals: .int64(1)).first())
            note["remark"] = "Zqremark"
            try ctx.update(note)
        }
        #expect(try migrated.verify().problems.isEmpty)
        migrated.close()
        let after = try StoreFileBytes.dataFile(of: dir.store)
        for needle in ["Zqsecret", "Zqcode", "Zqserial", "Zqremark", "SecretNoteRecord", "confidentialText"] {
            #expect(StoreFileBytes.offsets(of: Array(needle.utf8), in: after).count == 0, "\(needle) is in the migrated store")
        }
    }

    @Test func theBackgroundSweepRewritesOldLayoutsOfAnEncryptedStoreInPlace() throws {
        let dir = try TemporaryDirectory("enc-sweep")
        let key = SymmetricKey(size: .bits256)
        var ids: [ObjectID] = []
        do {
            let store = try Store.open(at: dir.store, schema: try Self.schema(), configuration: Self.configuration(key))
            ids = try Self.fill(store, count: 300)
            store.close()
        }
        // An added optional attribute changes metadata only: every record stays in the old layout until the sweep.
        var configuration = Self.configuration(key)
        configuration.backgroundMaintenance = false
        try Store.migrate(at: dir.store, schema: try Self.schema(version: "v2", extra: true), plan: nil, configuration: configuration)
        let store = try Store.open(at: dir.store, schema: try Self.schema(version: "v2", extra: true), configuration: configuration)
        defer { store.close() }
        #expect(try store.maintenanceStatus().oldLayoutRecords == 300)
        // Old-layout records read through the projection while they wait.
        #expect(try store.read { try $0.object(ids[7], of: "SecretNoteRecord")?["confidentialText"] } == .string(Self.secret(7)))
        _ = try store.performMaintenance(batchSize: 64)
        #expect(try store.maintenanceStatus().isComplete)
        try store.read { (ctx) throws in
            for (i, id) in ids.enumerated() {
                let note = try #require(try ctx.object(id, of: "SecretNoteRecord"))
                #expect(note["confidentialText"] == .string(Self.secret(i)))
                #expect(note["remark"] == .null)
            }
        }
        #expect(try store.verify().problems.isEmpty)
        let data = try StoreFileBytes.dataFile(of: dir.store)
        #expect(StoreFileBytes.offsets(of: Array("Zqsecret".utf8), in: data).count == 0)
    }
}

/// What an encrypted store seals is a function of the database's name (``SealScope``), looked up by handle: LMDB
/// gives the number of a deleted database's handle to the next database opened, which must seal as itself.
@Suite struct SealScopeHandleReuseTests {
    @Test func aHandleNumberReusedByAnotherDatabaseSealsAsThatDatabase() throws {
        var configuration = StoreConfiguration()
        configuration.encryption = StoreEncryption(key: SymmetricKey(data: Data(repeating: 7, count: 32)))
        let store = try Store.temporary(schema: try EncryptionTests.schema(), configuration: configuration)
        defer { store.close() }
        let environment = store.environment
        let key = Array("k".utf8), value = Array("a value kept in the clear".utf8)
        func put(_ dbi: DatabaseHandle, in txn: Transaction) throws {
            _ = try key.withUnsafeBytes { k in try value.withUnsafeBytes { v in try txn.put(dbi, key: k, value: v) } }
        }
        // A records database (sealed), written to, then deleted.
        let first = try environment.write { txn -> DatabaseHandle in
            let dbi = try #require(try txn.openDatabase("e99-1", flags: 0, create: true))
            try put(dbi, in: txn)
            return dbi
        }
        try environment.write { txn in try txn.deleteDatabase("e99-1", first) }
        // A database whose values stay in the clear, given the same handle number.
        let second = try environment.write { txn -> DatabaseHandle in
            let dbi = try #require(try txn.openDatabase("x-clear", flags: 0, create: true))
            try put(dbi, in: txn)
            return dbi
        }
        #expect(second == first, "the premise: LMDB reused the handle number")
        try environment.read { txn in
            let stored = try #require(try key.withUnsafeBytes { try txn.get(second, key: $0) })
            #expect(Array(stored) == value)
        }
        // The bytes as stored (no keyring): in the clear.
        environment.uninstallKeyring()
        try environment.read { txn in
            let stored = try #require(try key.withUnsafeBytes { try txn.get(second, key: $0) })
            #expect(Array(stored) == value, "the value was sealed as the deleted records database's")
        }
    }
}
