@_spi(Testing) import Strata
import Crypto
import Foundation
import StrataTortureKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The two fixed keys of the rotation trials (issue 26): `old`, the key a store is created with, and `new`, the key
/// it is rotated to. Derived from constants (never random), so that every process of a trial has them.
enum RotationKeys {
    static var old: SymmetricKey { SymmetricKey(data: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) }) }
    static var new: SymmetricKey { SymmetricKey(data: (0..<32).map { UInt8(truncatingIfNeeded: 0xA5 &+ $0 &* 13) }) }

    /// `--key old|new|both`: the store's encryption (`both` is the new key with the old one as previous).
    static func encryption(_ spec: String) -> StoreEncryption? {
        switch spec {
        case "old": StoreEncryption(key: old)
        case "new": StoreEncryption(key: new)
        case "both": StoreEncryption(key: new, previousKeys: [old])
        default: nil
        }
    }
}

/// The key change a trial makes (`--change`): a rotation from the old key to the new one (the default), encrypting
/// an unencrypted store under the new key, or decrypting a store encrypted with the old key.
enum KeyChange: String {
    case rotate, encrypt, decrypt

    /// The key spec a child opens the store with while the change runs (see ``RotationKeys/encryption(_:)``).
    var during: String { self == .rotate ? "both" : self == .encrypt ? "new" : "old" }
    /// The key spec that alone opens the store once the change is done ("none": no key).
    var after: String { self == .rotate ? "new" : self == .encrypt ? "new" : "none" }
    /// The key spec refused once the change is done, and the refusal's code.
    var refused: (key: String, code: StoreError.Code) {
        switch self {
        case .rotate: ("old", .wrongEncryptionKey)
        case .encrypt: ("none", .encryptionKeyRequired)
        case .decrypt: ("old", .storeNotEncrypted)
        }
    }

    /// Begins the change on the store at `url`.
    func begin(_ url: URL, _ configuration: (String) -> StoreConfiguration) throws {
        switch self {
        case .rotate: try Store.rotateEncryptionKey(at: url, to: RotationKeys.new, configuration: configuration("old"))
        case .encrypt: try Store.encrypt(at: url, with: RotationKeys.new, configuration: configuration("none"))
        case .decrypt: try Store.decrypt(at: url, configuration: configuration("old"))
        }
    }

    /// The values the change has left, or nil when it is done.
    func remaining(_ status: MaintenanceStatus) -> Int? {
        status.valuesUnderPreviousKey ?? status.valuesToEncrypt ?? status.valuesToDecrypt
    }
}

/// Key changes under kills: the child begins rotating an encrypted store's key, encrypting an unencrypted store or
/// decrypting an encrypted one (`--change`; or finds it begun), runs the sweep in bounded batches — while, with
/// `--writes`, another thread inserts and updates items — then checks every object against the oracle with the keys
/// the change needs, again with the key (or none) that alone opens the store after it, and that the one it retired
/// is refused.
enum Rotation {
    /// `rotate <store> --count N --batch B --seed S [--change rotate|encrypt|decrypt] [--writes W --write-batch M]
    /// [--resume] [--ack]`
    ///
    /// Prints `COMMIT n` after every commit, `BEGUN <values under the old key>` once the rotation's first transaction
    /// committed (`--resume`: `RESUMING <code>` when the store was already rotating or rotated; a resuming child
    /// writes nothing), `SWEPT <re-sealed so far>` after every sweep batch committed, `WROTE j` after the app's write
    /// transaction `j` committed (items `N + j·M ..< N + (j+1)·M` inserted, items `j·M ..< (j+1)·M` given the note
    /// `rotated j`), then `SWEEP <re-sealed>`, `WRITES J` (the write transactions found committed, always a prefix),
    /// `STATUS <values under the previous key, or done>`, `OLDKEY <the old key alone: its refusal, or opened>`, and
    /// `RESULT` (both keys, then the new key alone).
    static func run(_ o: Options) throws -> Int32 {
        guard let change = KeyChange(rawValue: o.string("change", "rotate")) else { throw TortureError("--change rotate|encrypt|decrypt") }
        let oracle = SeededContents(seed: o.seed)
        let writes = o.int("writes", 0), writeBatch = o.int("write-batch", 20)
        guard writes * writeBatch <= o.count else { throw TortureError("--writes × --write-batch must not exceed --count") }
        let schema = try TortureModels.v1()
        func configuration(_ key: String) -> StoreConfiguration {
            var c = TortureModels.configuration(plan: "v1")
            c.encryption = RotationKeys.encryption(key)
            return c
        }
        emit("START")
        // `COMMIT n` after every commit of this process: the parent counts them to kill after each one. With `--ack`
        // (power loss), `ACK n t=<LMDB transaction>` too, the state a crash image must be at (an encrypted store's
        // metadata is sealed: its last transaction, read from the meta pages, is the state a keyless probe sees).
        let url = o.url, ack = o.flags.contains("ack")
        if ack { emit("ACK 0 t=\(lastTransactionID(url).map(String.init) ?? "-")") }
        FaultInjection.tracePoints { name in
            if name == "txn.afterCommit" {
                let n = acknowledgements.withLock { n -> Int in n += 1; return n }
                emit("COMMIT \(n)")
                if ack { emit("ACK \(n) t=\(lastTransactionID(url).map(String.init) ?? "-")") }
            }
        }
        do {
            try change.begin(o.url, configuration)
        } catch let error as StoreError where o.flags.contains("resume")
            && [.encryptionKeyRequired, .keyRotationInProgress, .wrongEncryptionKey, .storeAlreadyEncrypted, .storeNotEncrypted].contains(error.code) {
            emit("RESUMING \(error.code)")
        } catch {
            return report(error)
        }
        // A decryption that ended before a kill: the store opens only without a key.
        func open() throws -> Store {
            do {
                return try Store.open(at: o.url, schema: schema, configuration: configuration(change.during))
            } catch let error as StoreError where change == .decrypt && error.code == .storeNotEncrypted {
                return try Store.open(at: o.url, schema: schema, configuration: configuration("none"))
            }
        }
        let store: Store
        do {
            store = try open()
        } catch {
            return report(error)
        }
        if !o.flags.contains("resume") {
            emit("BEGUN \(change.remaining(try store.maintenanceStatus()) ?? -1)")
        }
        // The app's writes, on their own thread while the sweep runs (a resuming child only checks them).
        let finished = DispatchSemaphore(value: 0)
        let writer = Thread {
            defer { finished.signal() }
            do {
                for j in 0..<(o.flags.contains("resume") ? 0 : writes) {
                    try store.write { context in
                        var tags: [Int: DynamicObject] = [:]
                        for i in (o.count + j * writeBatch)..<(o.count + (j + 1) * writeBatch) {
                            let item = try context.insert("Item", oracle.v1Values(i))
                            if let k = oracle.tagIndex(i) {
                                if tags[k] == nil { tags[k] = try context.objects("Tag").where("name", equals: .string(SeededContents.tagName(k))).first() }
                                if let tag = tags[k] { try context.link(item, "tags", to: tag) }
                            }
                        }
                        for i in (j * writeBatch)..<((j + 1) * writeBatch) {
                            guard var item = try context.objects("Item").where("serial", equals: .int64(Int64(i))).first() else {
                                throw TortureError("item \(i) is missing")
                            }
                            item["note"] = .string("rotated \(j)")
                            try context.update(item)
                        }
                    }
                    emit("WROTE \(j)")
                }
            } catch {
                _ = report(error)
                exit(3)
            }
        }
        writer.start()
        let swept: Int
        do {
            swept = try store.performMaintenance(batchSize: o.batch) { progress in emit("SWEPT \(progress.resealed)") }.resealed
        } catch {
            return report(error)
        }
        finished.wait()
        var handle = store
        // After encrypting, the pages are written again by a handle whose environment never held plain pages.
        if change == .encrypt, (try? handle.maintenanceStatus().valuesToEncrypt) != nil {
            handle.close()
            do {
                handle = try open()
                _ = try handle.performMaintenance(batchSize: o.batch) { progress in emit("REWROTE \(progress.resealed)") }
            } catch {
                return report(error)
            }
        }
        emit("SWEEP \(swept)")
        FaultInjection.tracePoints(nil)

        // Which write transactions committed: the items past the first N tell (they must be a prefix).
        var committed = 0
        try handle.read { context in
            var serials: Set<Int> = []
            try context.objects("Item").forEach { serials.insert(Int($0["serial"].int64Value ?? -1)) }
            while committed < writes, serials.contains(o.count + committed * writeBatch) { committed += 1 }
        }
        emit("WRITES \(committed)")
        let expected = 0..<(o.count + committed * writeBatch)
        func check(_ store: Store) throws -> CheckResult {
            var result = try oracle.check(store, expected: expected, ignoring: ["note"])
            try store.read { context in
                try context.objects("Item").forEach { item in
                    guard let serial = item["serial"].int64Value.map(Int.init), expected.contains(serial) else { return }
                    let want: Value = serial < committed * writeBatch ? .string("rotated \(serial / writeBatch)")
                        : oracle.note(serial).map(Value.string) ?? .null
                    if item["note"] != want {
                        result.wrongValues += 1
                        if result.problems.count < 20 { result.problems.append("item \(serial).note = \(item["note"]), expected \(want)") }
                    }
                }
            }
            return result
        }
        var result = try check(handle)
        let status = change.remaining(try handle.maintenanceStatus())
        emit("STATUS \(status.map(String.init) ?? "done")")
        handle.close()
        if let status { result.problems.append("the \(change) is not done after the sweep: \(status) values left") }

        // The key the change leaves (or none) alone opens the store and reads every object.
        do {
            let alone = try Store.open(at: o.url, schema: schema, configuration: configuration(change.after))
            let again = try check(alone)
            alone.close()
            if !again.isClean { result.problems.append("with the key \(change.after) alone: \(again)") }
        } catch {
            let (_, kind) = ErrorReport.classify(error)
            result.problems.append("the key \(change.after) alone: \(kind)")
        }
        // The key it retired (or none) is refused.
        var oldKey = "opened"
        do {
            let old = try Store.open(at: o.url, schema: schema, configuration: configuration(change.refused.key))
            old.close()
        } catch let error as StoreError {
            oldKey = "\(error.code)"
        }
        emit("OLDKEY \(oldKey)")
        // Every record on disk in the form the change left: sealed (a rotation, encrypting) or plain (decrypting).
        let forms = try ReliabilityProbe.recordForms(at: o.url)
        emit("RECORDS sealed=\(forms.sealed) plain=\(forms.plain)")
        if (change == .decrypt ? forms.sealed : forms.plain) != 0 {
            result.problems.append("\(change == .decrypt ? forms.sealed : forms.plain) records left \(change == .decrypt ? "sealed" : "plain") after the \(change)")
        }
        // After encrypting: how many pieces of items' titles (`item-<i>-…`) are left anywhere in the data file, free
        // space included, and the longest, in bytes of the title it begins (the parent bounds it after an
        // uninterrupted encryption, and counts the resumed ones').
        if change == .encrypt {
            let data = try Data(contentsOf: o.url.appendingPathComponent("data.mdb"))
            let pieces = data.ranges(of: Data("item-".utf8))
            let titles = (0..<(o.count + writes * writeBatch)).map { Array(oracle.title($0).utf8) }
            var longest = 0
            for piece in pieces {
                let rest = data[piece.lowerBound...]
                for title in titles {
                    longest = max(longest, zip(rest, title).prefix { $0 == $1 }.count)
                }
            }
            emit("PLAINTEXT \(pieces.count)")
            emit("PLAINLONGEST \(longest)")
        }
        emit("RESULT \(json(result))")
        return result.isClean && oldKey == "\(change.refused.code)" ? 0 : 4
    }

    /// The last committed LMDB transaction of the store at `url`, read from its two meta pages (the higher of their
    /// transaction IDs, as LMDB picks): nothing of the store is decrypted, opened or locked.
    static func lastTransactionID(_ url: URL) -> UInt64? {
        guard let handle = FileHandle(forReadingAtPath: url.appendingPathComponent("data.mdb").path) else { return nil }
        defer { try? handle.close() }
        guard let head = try? handle.read(upToCount: 8192), head.count == 8192 else { return nil }
        // A meta page: the page header (16 bytes), then MDB_meta — magic, version, address, map size, two MDB_db
        // (48 bytes each), the last page — and the transaction ID at byte 128 of it.
        func txnid(_ page: Int) -> UInt64? {
            let magic = head[page * 4096 + 16..<page * 4096 + 20].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
            guard magic == 0xBEEF_C0DE else { return nil }
            return head[page * 4096 + 144..<page * 4096 + 152].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        }
        return [txnid(0), txnid(1)].compactMap { $0 }.max()
    }

    /// `check-rotation-images <shim out dir> --log <the rotating child's output> --store-rel <store below the shim's
    /// directory> --work <dir> --count N --batch B --seed S [--change C] [--start k]`: for each crash image of a key rotation,
    /// prints `BEGIN k`, then `IMG k s v OK match=last|next` when the image is at the last acknowledged commit or the
    /// next one and a resumed rotation on it (`rotate --resume`: begun if it was not, the sweep to its end, every
    /// object checked with both keys and with the new key alone, the old key refused) succeeds, else `IMG k s v FAIL …`.
    static func checkImages(_ o: Options) throws -> Int32 {
        let log = try String(contentsOfFile: o.string("log", ""), encoding: .utf8)
        let all = PowerLoss.images(inLog: log)
        let storeRel = o.string("store-rel", "store")
        let work = o.string("work", NSTemporaryDirectory() + "/strata-rotation-images")
        emit("IMAGES \(all.count)")
        for k in o.int("start", 0)..<all.count {
            let image = all[k]
            emit("BEGIN \(k)")
            let root = work + "/image"
            let label = "IMG \(k) \(image.syncPoint) \(image.variant)"
            do {
                try PowerLoss.rebuild(out: o.path, image: image, root: root)
                let store = URL(fileURLWithPath: root + "/" + storeRel)
                guard let found = lastTransactionID(store) else {
                    emit("\(label) FAIL no valid meta page")
                    continue
                }
                let sig = "t=\(found)"
                let match: String
                if sig == image.last { match = "last" } else if sig == image.next { match = "next" } else {
                    emit("\(label) FAIL state \(sig) is neither the last acknowledged (\(image.last)) nor the next (\(image.next ?? "-"))")
                    continue
                }
                let resumed = try Options(["rotate", store.path, "--count", "\(o.count)", "--batch", "\(o.batch)",
                                           "--seed", "\(o.seed)", "--change", o.string("change", "rotate"), "--resume"])
                let status = try run(resumed)
                FaultInjection.tracePoints(nil)
                emit(status == 0 ? "\(label) OK match=\(match)" : "\(label) FAIL the resumed rotation ended with \(status)")
            } catch {
                let (typed, kind) = ErrorReport.classify(error)
                emit("\(label) FAIL \(typed ? "typed" : "untyped") \(kind): \(String(describing: error).prefix(200).replacingOccurrences(of: "\n", with: " "))")
            }
        }
        emit("DONE")
        return 0
    }
}
