@_spi(Testing) import Strata
import Foundation
import StrataTortureKit
#if canImport(Glibc)
import Glibc
#endif

enum Workloads {
    /// `create`: creates a v1 store (ACK 0 is "no store"; `CREATED <signature>` when `Store.open` returned),
    /// then fills `--count` items in batches of `--batch`, one write transaction (and one ACK) each.
    static func create(_ o: Options) throws -> Int32 {
        installAcknowledgements(o.url, trace: o.flags.contains("trace"))
        emit("ACK 0 none")
        let store = try Store.open(at: o.url, schema: try TortureModels.v1(), configuration: o.configuration())
        emit("CREATED \(signature(o.url))")
        let oracle = SeededContents(seed: o.seed)
        try fill(store, oracle: oracle, from: o.int("from", 0), to: o.count, batch: o.batch, blobSize: o.int("blob-size", 0))
        if o.flags.contains("no-check") {
            emit("RESULT {}")
            return 0
        }
        let result = try oracle.check(store, expected: 0..<o.count)
        emit("RESULT \(json(result))")
        return result.isClean ? 0 : 4
    }

    /// Inserts items `from..<to` (and the tags, with the first batch of a store) in batches.
    static func fill(_ store: Store, oracle: SeededContents, from: Int, to: Int, batch: Int, blobSize: Int = 0) throws {
        var start = from
        while start < to {
            let end = min(to, start + max(1, batch))
            try store.write { context in
                if try context.count("Tag") == 0 {
                    for k in 0..<TortureModels.tagCount { try context.insert("Tag", ["name": .string(SeededContents.tagName(k))]) }
                }
                var tags: [Int: DynamicObject] = [:]
                for i in start..<end {
                    var values = oracle.v1Values(i)
                    if blobSize > 0 { values["blob"] = .data(Data(repeating: UInt8(truncatingIfNeeded: i), count: blobSize)) }
                    let item = try context.insert("Item", values)
                    if let k = oracle.tagIndex(i) {
                        if tags[k] == nil { tags[k] = try context.objects("Tag").where("name", equals: .string(SeededContents.tagName(k))).first() }
                        if let tag = tags[k] { try context.link(item, "tags", to: tag) }
                    }
                }
            }
            start = end
        }
    }

    /// `migrate`: prints `ACK 0 <signature>` (the state found), opens the store with `--plan` (which migrates
    /// or resumes, with an ACK per commit), then checks every object against the oracle (`RESULT`).
    static func migrate(_ o: Options) throws -> Int32 {
        try installLMDBFaults(o.values["lmdb-fault"])
        emit("ACK 0 \(signature(o.url))")
        installAcknowledgements(o.url, trace: o.flags.contains("trace"))
        let plan = try TortureModels.plan(o.plan, throwAt: o.throwAt, trapAt: o.trapAt)
        let store: Store
        do {
            store = try Store.open(at: o.url, schema: plan.currentSchema, plan: plan, configuration: o.configuration())
        } catch {
            return report(error)
        }
        FaultInjection.tracePoints(nil)
        let oracle = SeededContents(seed: o.seed)
        let version = store.schema.versionIdentifier
        let result = try oracle.check(store, expected: 0..<o.count,
                                      expectedMarkers: o.markers ?? SeededContents.expectedMarkers(plan: o.plan, version: version),
                                      runVerify: !o.flags.contains("no-verify"))
        if let info = try? store.info() { emit("INFO map=\(info.mapSize) file=\(info.fileSize)") }
        emit("RESULT \(json(result))")
        store.close()
        return result.isClean ? 0 : 4
    }

    /// `probe`: the store's state without resuming anything.
    static func probe(_ o: Options) throws -> Int32 {
        do {
            let snapshot = try ReliabilityProbe.snapshot(at: o.url)
            emit("PROBE \(json(snapshot))")
            emit("SIG \(signature(of: snapshot))")
            return 0
        } catch {
            return report(error)
        }
    }

    /// `open`: opens the store with `--plan` (never creating one unless `--create`), reads every item and
    /// runs `verify()`; prints `OK <details>` or `ERR typed|untyped <kind> <message>`.
    static func open(_ o: Options) throws -> Int32 {
        var configuration = o.configuration()
        configuration.createIfMissing = o.flags.contains("create")
        do {
            let plan = try TortureModels.plan(o.plan)
            let store = try Store.open(at: o.url, schema: plan.currentSchema, plan: plan, configuration: configuration)
            defer { store.close() }
            let ignoring = Set(o.values["ignore"].map { $0.split(separator: ",").map(String.init) } ?? [])
            let outcome = try readEverything(store, oracle: SeededContents(seed: o.seed), expected: 0..<o.count, ignoring: ignoring)
            emit("OK \(outcome)")
            return 0
        } catch {
            return report(error)
        }
    }

    /// Reads every item of a store and runs `verify()`: "items=N unreadable=U wrong=W verify=P".
    static func readEverything(_ store: Store, oracle: SeededContents, expected: Range<Int>, ignoring: Set<String> = []) throws -> String {
        let result = try oracle.check(store, expected: expected, expectedMarkers: [:], ignoring: ignoring)
        return "items=\(result.items) unreadable=\(result.unreadable) wrong=\(result.wrongValues) lost=\(result.lost) verify=\(result.verifyProblems) clean=\(result.isClean ? 1 : 0)"
    }

    /// `hold-read`: opens the store at v1, begins a read transaction, prints `READY <items>`, and keeps the
    /// snapshot until standard input closes (or the process is killed); then reads again and prints `SAME
    /// <items>` if the snapshot still shows the same objects.
    static func holdRead(_ o: Options) throws -> Int32 {
        let store = try Store.open(at: o.url, schema: try TortureModels.v1(), configuration: o.configuration())
        try store.read { context in
            let before = try context.objects("Item").count()
            emit("READY \(before)")
            var buffer = [UInt8](repeating: 0, count: 256)
            while read(0, &buffer, buffer.count) > 0 {}
            let after = try context.objects("Item").count()
            emit(before == after ? "SAME \(after)" : "CHANGED \(before) \(after)")
        }
        return 0
    }

    /// `hold-reads`: for each line of standard input naming a store directory, ends the read it holds (and closes
    /// that store), opens the named store with the v1 model and holds a read transaction on it (`READY`); an
    /// empty line only ends the read (`RELEASED`). Ends at the end of its input.
    static func holdReads(_ o: Options) throws -> Int32 {
        var held: (store: Store, release: DispatchSemaphore, done: DispatchSemaphore)?
        func release() {
            guard let h = held else { return }
            h.release.signal()
            h.done.wait()
            h.store.close()
            held = nil
        }
        while let line = readLine() {
            release()
            guard !line.isEmpty else { emit("RELEASED"); continue }
            let store = try Store.open(at: URL(fileURLWithPath: line), schema: try TortureModels.v1(), configuration: o.configuration())
            let ready = DispatchSemaphore(value: 0), releaseRead = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
            let reader = Thread {
                let seen = (try? store.read { context -> Int in
                    let count = try context.objects("Item").count()
                    ready.signal()
                    releaseRead.wait()
                    return count
                }) ?? -1
                if seen < 0 { ready.signal() }
                done.signal()
            }
            reader.start()
            ready.wait()
            held = (store, releaseRead, done)
            emit("READY")
        }
        release()
        return 0
    }

    /// `write-load`: appends `--count` items from `--from` (with blobs of `--blob-size` bytes) in batches,
    /// ACK per batch; prints `RESULT map=<bytes>`.
    static func writeLoad(_ o: Options) throws -> Int32 {
        try installLMDBFaults(o.values["lmdb-fault"])
        installAcknowledgements(o.url, trace: false)
        do {
            let store = try Store.open(at: o.url, schema: try TortureModels.v1(), configuration: o.configuration())
            let from = o.int("from", 0)
            try fill(store, oracle: SeededContents(seed: o.seed), from: from, to: from + o.count, batch: o.batch, blobSize: o.int("blob-size", 0))
            let info = try store.info()
            emit("RESULT map=\(info.mapSize) file=\(info.fileSize)")
            return 0
        } catch {
            return report(error)
        }
    }

    /// `fork-check`: opens the store, forks; the child uses the store (must throw `usedAfterFork`), then opens
    /// it again (must work); the parent keeps using its handle. Prints `RESULT child=<status> parent=ok`.
    static func forkCheck(_ o: Options) throws -> Int32 {
        let store = try Store.open(at: o.url, schema: try TortureModels.v1(), configuration: o.configuration())
        let before = try store.read { try $0.count("Item") }
        let pid = fork()
        if pid == 0 {
            var status: Int32 = 0
            // 1. the inherited handle must refuse, for reads and writes and info.
            do { _ = try store.read { try $0.count("Item") }; status |= 1 } catch let error as StoreError where error.code == .usedAfterFork {} catch { status |= 2 }
            do { try store.write { _ = try $0.count("Item") }; status |= 4 } catch let error as StoreError where error.code == .usedAfterFork {} catch { status |= 8 }
            do { _ = try store.verify(); status |= 16 } catch let error as StoreError where error.code == .usedAfterFork {} catch { status |= 16 }
            // 2. opening again in the child gives a handle of the child's own (the registry's entry is the parent's).
            do {
                let again = try Store.open(at: o.url, schema: try TortureModels.v1(), configuration: o.configuration())
                if try again.read({ try $0.count("Item") }) != before { status |= 32 }
            } catch let error as StoreError where error.code == .usedAfterFork {
                status |= 64
            } catch {
                status |= 128
            }
            _exit(status == 0 ? 0 : Int32(min(status, 255)))
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let child = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 1000 + (status & 0x7f)
        // The parent's handle keeps working, reads and writes.
        let after = try store.read { try $0.count("Item") }
        try store.write { context in _ = try context.insert("Marker", ["kind": "after-fork"]) }
        let report = try store.verify()
        emit("RESULT child=\(child) parent=\(after == before && report.isClean ? "ok" : "bad")")
        return child == 0 && after == before && report.isClean ? 0 : 4
    }

    /// `open-many`: opens each store listed in the file at `path` (one line each: `<dir> [damaged-id,…]`),
    /// from line `--start`, printing `BEGIN i` before and one outcome line after each:
    /// `OPENED i <details> damaged=<listed> detected=<typed errors on listed> exact=<verify lists exactly them>`
    /// or `REFUSED i typed|untyped <kind>`. Used for damaged files: a signal kills only this process, and the
    /// parent restarts it after the line that killed it.
    static func openMany(_ o: Options) throws -> Int32 {
        let lines = try String(contentsOfFile: o.path, encoding: .utf8).split(separator: "\n").map(String.init)
        let oracle = SeededContents(seed: o.seed)
        let plan = try TortureModels.plan(o.plan)
        var configuration = o.configuration()
        configuration.createIfMissing = false
        for i in o.int("start", 0)..<lines.count {
            let parts = lines[i].split(separator: " ").map(String.init)
            guard let dir = parts.first else { continue }
            let damaged = Set(parts.dropFirst().first.map { $0.split(separator: ",").compactMap { UInt64($0) } } ?? [])
            emit("BEGIN \(i)")
            do {
                let store = try Store.open(at: URL(fileURLWithPath: dir), schema: plan.currentSchema, plan: plan, configuration: configuration)
                defer { store.close() }
                var detected = 0, silent = 0
                try store.read { context in
                    for id in damaged {
                        do {
                            if let object = try context.object(ObjectID(rawValue: id), of: "Item") {
                                // Read without error: the value must still be the oracle's (a flip that
                                // changed nothing), or it is a silent wrong value.
                                let serial = Int(object["serial"].int64Value ?? -1)
                                let want = oracle.expectedValues(serial, version: store.schema.versionIdentifier)
                                if want.contains(where: { object[$0.key] != $0.value }) { silent += 1 }
                            }
                        } catch let error as StoreError where error.code == .corruptedRecord {
                            detected += 1
                        }
                    }
                }
                let result = try oracle.check(store, expected: 0..<o.count)
                let report = try store.verify()
                let listed = Set(report.problems.filter { $0.kind == .corruptedRecord }.compactMap(\.objectID))
                let exact = listed == damaged ? 1 : 0
                let others = report.problems.filter { $0.kind != .corruptedRecord }.count
                emit("OPENED \(i) items=\(result.items) unreadable=\(result.unreadable) wrong=\(result.wrongValues) lost=\(result.lost) badLinks=\(result.badLinks) verify=\(result.verifyProblems) otherProblems=\(others) damaged=\(damaged.count) detected=\(detected) silent=\(silent) exact=\(exact)")
            } catch {
                let (typed, kind) = ErrorReport.classify(error)
                emit("REFUSED \(i) \(typed ? "typed" : "untyped") \(kind) \(String(describing: error).prefix(160).replacingOccurrences(of: "\n", with: " "))")
            }
        }
        emit("DONE")
        return 0
    }
}
