@_spi(Testing) import Strata
import Foundation
import StrataTestKit
import StrataTortureKit
#if canImport(Glibc)
import Glibc
#endif

/// The children of the open-loop tier (issue 27, "no false alarm of damage"): processes that open, read and
/// close a store in a tight loop, one that inserts into it, and one that migrates, sweeps and rewrites it — all
/// at once, on a store the parent names on standard input (one path per round; the loops follow the newest).
///
/// - `open-loop`: opens the store with v1, c2 (custom plan) and v3 (rewrite plan) in turn, never migrating
///   and never waiting for another process's migration; reads the item count and three items by serial, checks
///   them against the oracle at the version it opened, closes. Prints `PROGRESS <attempts>` every 100 attempts,
///   `CORRUPTED <message>` at once for any `corrupted` error, `WRONG <what>` for a wrong value, and at the end
///   of its input `TALLY <json>`.
/// - `insert-loop`: inserts `--per-round` items (blobs of `--blob-size` bytes) into each named store, with
///   whichever model opens it, and every `--undo-every` batches undoes an import of `--undo-size` objects in
///   one transaction (which can leave data.mdb shorter than LMDB's last page); prints `TALLY <json>` at the end
///   of its input.
/// - `open-loop-mutate <path> --plan custom|rewrite|instant`: migrates the store with the plan (in batches of
///   `--batch`), runs the maintenance to the end (the sweep, index builds, retired databases emptied), then
///   rewrites every record into its current layout; prints `DONE …`.
enum OpenLoop {
    /// The models the loops open with: name, plan.
    static let models: [(version: String, plan: String)] = [("v1", "v1"), ("c2", "custom"), ("v3", "rewrite")]

    /// What a loop saw, by outcome.
    typealias Tally = OpenLoopTally

    /// The store the parent names last on standard input, and how many it has named.
    final class Target: @unchecked Sendable {
        private let condition = NSCondition()
        private var path: String?
        private var round = 0
        private var ended = false

        init() {
            let reader = Thread { [self] in
                while let line = readLine() { name(line) }
                condition.lock(); ended = true; condition.broadcast(); condition.unlock()
            }
            reader.start()
        }

        private func name(_ line: String) {
            condition.lock(); path = line; round += 1; condition.broadcast(); condition.unlock()
        }

        /// The newest store and its round (waiting for the first), or nil once the input ended.
        func current() -> (path: String, round: Int)? {
            condition.lock()
            defer { condition.unlock() }
            while !ended && path == nil { condition.wait() }
            guard !ended, let path else { return nil }
            return (path, round)
        }

        /// Whether the parent named another store since `round` (or ended its input).
        func moved(from round: Int) -> Bool {
            condition.lock()
            defer { condition.unlock() }
            return ended || self.round != round
        }

        /// Waits until the parent names another store than `round`'s, or ends its input.
        func waitForNext(after round: Int) {
            condition.lock()
            while !ended && self.round == round { condition.wait() }
            condition.unlock()
        }
    }

    /// How the loops open: never creating, never migrating, never waiting for another process's migration —
    /// every such case is an immediate, typed refusal to tally.
    static func configuration(plan: String, batch: Int) -> StoreConfiguration {
        var configuration = TortureModels.configuration(plan: plan)
        configuration.createIfMissing = false
        configuration.migration.migratesAtOpen = false
        configuration.migration.waitsForOtherProcesses = false
        configuration.migration.batchSize = batch
        configuration.initialMapSize = smallMap
        return configuration
    }

    /// The map the children ask for: as small as LMDB allows, so that it grows (and the other processes adopt
    /// the grown map) every round.
    static let smallMap = 1 << 20

    // MARK: open-loop

    static func openLoop(_ o: Options) throws -> Int32 {
        let target = Target()
        let oracle = SeededContents(seed: o.seed)
        let pristine = o.count
        let plans = try models.map { try TortureModels.plan($0.plan) }
        var tally = Tally()
        var generator = SeededGenerator(seed: o.seed &+ UInt64(getpid()))
        var lastRound = 0
        while let (path, round) = target.current() {
            if round != lastRound { tally.rounds += 1; lastRound = round }
            let m = tally.attempts % models.count
            tally.attempts += 1
            if tally.attempts % 100 == 0 { emit("PROGRESS \(tally.attempts) \(tally.corrupted)") }
            let store: Store
            do {
                store = try Store.open(at: URL(fileURLWithPath: path), schema: plans[m].currentSchema, plan: plans[m],
                                       configuration: configuration(plan: models[m].plan, batch: 100))
            } catch {
                tally.note(error, afterOpen: false)
                continue
            }
            tally.opened += 1
            let version = store.schema.versionIdentifier
            tally.byVersion[version, default: 0] += 1
            if let info = try? store.info(), info.fileSize < info.pagesUsed * info.pageSize { tally.shortFileOpens += 1 }
            let serials = (0..<3).map { _ in Int(generator.next() % UInt64(max(pristine, 1))) }
            do {
                let (count, found) = try store.read { context -> (Int, [(Int, DynamicObject?)]) in
                    let count = try context.count("Item")
                    let found = try serials.map { serial in
                        (serial, try context.objects("Item").where("serial", equals: .int64(Int64(serial))).first())
                    }
                    return (count, found)
                }
                if count < pristine {
                    tally.wrongValues += 1
                    emit("WRONG \(version) count \(count) < \(pristine)")
                }
                for (serial, item) in found {
                    tally.itemsChecked += 1
                    guard let item else {
                        tally.wrongValues += 1
                        emit("WRONG \(version) item \(serial) missing")
                        continue
                    }
                    for (name, value) in oracle.expectedValues(serial, version: version) where item[name] != value {
                        tally.wrongValues += 1
                        emit("WRONG \(version) item \(serial).\(name) = \(item[name]), expected \(value)")
                        break
                    }
                }
            } catch {
                tally.note(error, afterOpen: true)
            }
            store.close()
        }
        emit("TALLY \(json(tally))")
        return 0
    }

    // MARK: insert-loop

    static func insertLoop(_ o: Options) throws -> Int32 {
        let target = Target()
        let oracle = SeededContents(seed: o.seed)
        let plans = try models.map { try TortureModels.plan($0.plan) }
        let perRound = o.int("per-round", 2_000)
        let blobSize = o.int("blob-size", 0)
        let undoEvery = o.int("undo-every", 10), undoSize = o.int("undo-size", 1_500)
        var batches = 0
        var tally = Tally()
        var round = 0, inserted = 0
        while let current = target.current() {
            if current.round != round { round = current.round; inserted = 0; tally.rounds += 1 }
            if inserted >= perRound {
                target.waitForNext(after: round)
                continue
            }
            // Whichever model the store is at (or can be read at) opens it.
            let m = tally.attempts % models.count
            tally.attempts += 1
            let store: Store
            do {
                store = try Store.open(at: URL(fileURLWithPath: current.path), schema: plans[m].currentSchema, plan: plans[m],
                                       configuration: configuration(plan: models[m].plan, batch: 100))
            } catch {
                tally.note(error, afterOpen: false)
                continue
            }
            tally.opened += 1
            let version = store.schema.versionIdentifier
            tally.byVersion[version, default: 0] += 1
            do {
                while inserted < perRound, !target.moved(from: round) {
                    let start = o.count + inserted, end = min(o.count + perRound, start + o.batch)
                    try store.write { context in
                        for i in start..<end {
                            var values = oracle.expectedValues(i, version: version).filter { !$0.value.isNull }
                            if blobSize > 0 { values["blob"] = .data(Data(repeating: UInt8(truncatingIfNeeded: i), count: blobSize)) }
                            _ = try context.insert("Item", values)
                        }
                    }
                    inserted += end - start
                    tally.inserted += end - start
                    batches += 1
                    if undoEvery > 0, batches % undoEvery == 0 {
                        // An import undone in the same transaction (inserted, then deleted in reverse order): LMDB
                        // allocates pages past the file's end and frees them unwritten, leaving data.mdb shorter
                        // than its last page number — healthy (issue 28), and what a size check must not call damage.
                        try store.write { context in
                            let undone = try (0..<undoSize).map { k in
                                try context.insert("Marker", ["kind": .string("undone import \(k) " + String(repeating: "abcdefghij", count: 8))])
                            }
                            for object in undone.reversed() { try context.delete(object) }
                        }
                        tally.undoneImports += 1
                    }
                }
            } catch {
                tally.note(error, afterOpen: true)
            }
            store.close()
        }
        emit("TALLY \(json(tally))")
        return 0
    }

    // MARK: open-loop-mutate

    static func mutate(_ o: Options) throws -> Int32 {
        let plan = try TortureModels.plan(o.plan)
        var configuration = TortureModels.configuration(plan: o.plan)
        configuration.createIfMissing = false
        configuration.migration.batchSize = o.batch
        configuration.initialMapSize = smallMap
        let started = Date()
        do {
            let store = try Store.open(at: o.url, schema: plan.currentSchema, plan: plan, configuration: configuration)
            defer { store.close() }
            let migrated = Date().timeIntervalSince(started)
            let maintained = try store.performMaintenance(batchSize: o.batch)
            // A second maintenance run, after the first finished: what it finds left to rewrite (none, normally).
            let rewritten = try store.performMaintenance(batchSize: o.batch).rewritten
            let info = try store.info()
            emit("DONE version=\(store.schema.versionIdentifier) migrate=\(String(format: "%.1f", migrated))s swept=\(maintained.rewritten) deleted=\(maintained.deleted) rewritten=\(rewritten) map=\(info.mapSize) file=\(info.fileSize) seconds=\(String(format: "%.1f", Date().timeIntervalSince(started)))")
            return 0
        } catch {
            return report(error)
        }
    }
}

extension OpenLoopTally {
    /// Counts `error` as a refused open or a failure after one; a `corrupted` one is also reported at once.
    mutating func note(_ error: any Error, afterOpen: Bool) {
        let kind = ErrorReport.classify(error).kind
        if afterOpen { failedAfterOpen[kind, default: 0] += 1 } else { refused[kind, default: 0] += 1 }
        let corruptedError = (error as? StoreError)?.code == .corrupted
            || (error as? MigrationError)?.storeError?.code == .corrupted
        if corruptedError {
            corrupted += 1
            let message = String(describing: error).replacingOccurrences(of: "\n", with: " ")
            if corruptedMessages.count < 10 { corruptedMessages.append(message) }
            emit("CORRUPTED \(message.prefix(400))")
        }
    }
}
