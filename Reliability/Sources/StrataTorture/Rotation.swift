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

/// Key rotation under kills: the child begins rotating an encrypted store's key (or finds it begun), runs the
/// re-sealing sweep in bounded batches — while, with `--writes`, another thread inserts and updates items — then
/// checks every object against the oracle with both keys, again with the new key alone, and that the old key alone
/// is refused.
enum Rotation {
    /// `rotate <store> --count N --batch B --seed S [--writes W --write-batch M] [--resume]`
    ///
    /// Prints `COMMIT n` after every commit, `BEGUN <values under the old key>` after the rotation's first transaction committed (`--resume`:
    /// `RESUMING <code>` when the store was already rotating or rotated; a resuming child writes nothing), `SWEPT <re-sealed so far>` after every
    /// sweep batch committed, `WROTE j` after the app's write transaction `j` committed (items `N + j·M ..< N + (j+1)·M`
    /// inserted, items `j·M ..< (j+1)·M` given the note `rotated j`), then `SWEEP <re-sealed>`, `WRITES J` (the write
    /// transactions found committed, always a prefix), `STATUS <values under the previous key or done>`,
    /// `OLDKEY <the old key alone: refused code or opened>`, and `RESULT` (both keys and the new key alone).
    static func run(_ o: Options) throws -> Int32 {
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
        // `COMMIT n` after every commit of this process: the parent counts them to kill after each one.
        FaultInjection.tracePoints { name in
            if name == "txn.afterCommit" { emit("COMMIT \(acknowledgements.withLock { n -> Int in n += 1; return n })") }
        }
        do {
            try Store.rotateEncryptionKey(at: o.url, to: RotationKeys.new, configuration: configuration("old"))
        } catch let error as StoreError where o.flags.contains("resume")
            && [.encryptionKeyRequired, .keyRotationInProgress, .wrongEncryptionKey].contains(error.code) {
            emit("RESUMING \(error.code)")
        } catch {
            return report(error)
        }
        let store: Store
        do {
            store = try Store.open(at: o.url, schema: schema, configuration: configuration("both"))
        } catch {
            return report(error)
        }
        if !o.flags.contains("resume") {
            emit("BEGUN \(try store.maintenanceStatus().valuesUnderPreviousKey ?? -1)")
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
        emit("SWEEP \(swept)")
        FaultInjection.tracePoints(nil)

        // Which write transactions committed: the items past the first N tell (they must be a prefix).
        var committed = 0
        try store.read { context in
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
        var result = try check(store)
        let status = try store.maintenanceStatus().valuesUnderPreviousKey
        emit("STATUS \(status.map(String.init) ?? "done")")
        store.close()
        if status != nil { result.problems.append("the rotation is not done after the sweep: \(status!) values left") }

        // The new key alone opens the store and reads every object.
        do {
            let alone = try Store.open(at: o.url, schema: schema, configuration: configuration("new"))
            let again = try check(alone)
            alone.close()
            if !again.isClean { result.problems.append("with the new key alone: \(again)") }
        } catch {
            let (_, kind) = ErrorReport.classify(error)
            result.problems.append("the new key alone: \(kind)")
        }
        // The old key alone is refused.
        var oldKey = "opened"
        do {
            let old = try Store.open(at: o.url, schema: schema, configuration: configuration("old"))
            old.close()
        } catch let error as StoreError {
            oldKey = "\(error.code)"
        }
        emit("OLDKEY \(oldKey)")
        emit("RESULT \(json(result))")
        return result.isClean && oldKey == "wrongEncryptionKey" ? 0 : 4
    }
}
