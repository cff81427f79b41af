@_spi(Testing) import Strata
import Crypto
import Foundation
import StrataTortureKit

/// `fuzz-store-meta <dir> --seed S --start A --end B`: hostile metadata in real stores (issue 27, "fuzzed
/// metadata"). Input `i` copies one of two small base stores, writes one mutated metadata value into it with raw
/// LMDB (``StoreTampering``, the checksum recomputed so that the bytes reach the decoder behind it, except for a
/// few inputs that keep the stored checksum), then opens the store through the public API in one of several
/// ways and reads everything it can. Every outcome must be a success or one of Strata's typed errors; an open
/// that refuses for damage must leave `data.mdb` byte for byte as it was, and any other refusal may follow only
/// the recovery the undamaged store's open makes too (`REFERENCE` lines with `--describe`) or the one a damaged
/// state, journal or change log asks for. Traps and hangs are seen by the parent (the child dies, or goes quiet):
/// it restarts the child after the input that killed it. `--verbose` prints every error, `--keep` the data file
/// of each input before it was opened.
///
/// Prints `BEGIN i <kind>|<mode>` before input `i`, then `INPUT i <kind>|<mutation>|<mode>|<outcome>` (outcome `opened`,
/// `refused:<error kind>`), and `VIOLATION i <what>` for an untyped error, a store changed by a refused open, or
/// an observation that missed a commit. `DONE` at the end.
enum StoreMetaFuzz {
    /// How an input's store is opened.
    enum Mode: String, CaseIterable {
        /// With the model the store records (v2), no plan.
        case matching
        /// With the older v1 model, no plan.
        case older
        /// With the newer v3 model, no plan (Strata infers the step or refuses).
        case newer
        /// With the plan v1 → v2 → v3 (resuming the migration the mid-step base was left in).
        case plan
        /// With the model the store records, whatever it is (`Store.openRecorded`).
        case recorded
        /// With the recorded model, observing `Item` while a commit of another writer lands (the change-log read path).
        case observe
    }

    /// The two base stores: `settled` (v2 after a metadata-only migration: records in an older layout, an index
    /// build pending; change history on; a change log) and `midstep` (the same, then left in the middle of the
    /// v2 → v3 rewrite: a journal, the state marked migrating).
    struct Bases {
        let settled: URL
        let midstep: URL
        /// (database, key) of every value each base holds in the tampered databases.
        let targets: [String: [Target]]
    }

    struct Target {
        let kind: String
        let database: String
        let key: [UInt8]
        let value: [UInt8]
    }

    static func configuration(plan: Bool = false) -> StoreConfiguration {
        var c = StoreConfiguration()
        c.backgroundMaintenance = false
        c.createIfMissing = false
        c.mapGrowthWaitSeconds = 5
        if plan {
            c.migration.rewritesEveryRecord()
            c.migration.batchSize = 3
        }
        return c
    }

    /// Makes the two base stores under `dir` (once: a restarted child reuses them).
    static func makeBases(_ dir: URL) throws -> Bases {
        let fm = FileManager.default
        let settled = dir.appendingPathComponent("base-settled")
        let midstep = dir.appendingPathComponent("base-midstep")
        if !fm.fileExists(atPath: midstep.appendingPathComponent("ready").path) {
            let work = dir.appendingPathComponent("base-work")
            try? fm.removeItem(at: work)
            var create = configuration()
            create.createIfMissing = true
            create.history = .enabled(HistoryConfiguration())
            let oracle = SeededContents(seed: 7)
            do {
                let store = try Store.open(at: work, schema: try TortureModels.v1(), configuration: create)
                try Workloads.fill(store, oracle: oracle, from: 0, to: 12, batch: 4)
                store.close()
            }
            do {
                // v1 → v2 without rewriting: records stay in the v1 layout, the index on `score` is to be built.
                let plan = try TortureModels.plan("light")
                let store = try Store.open(at: work, schema: try TortureModels.v2(), plan: plan, configuration: configuration())
                try store.write { context in
                    try context.insert("Marker", ["kind": "after v2"])
                    if var item = try context.objects("Item").first() {
                        item["name"] = .string("renamed")
                        try context.update(item)
                    }
                }
                store.close()
            }
            try copyStore(work, to: settled)
            do {
                // v2 → v3 rewriting every record in batches of 3, stopped by an error after the second batch.
                FaultInjection.setPoint("batch.afterCommit", index: 1, action: .throwError)
                defer { FaultInjection.reset() }
                let plan = try TortureModels.plan("chain")
                if let store = try? Store.open(at: work, schema: try TortureModels.v3(), plan: plan, configuration: configuration(plan: true)) {
                    store.close()
                    throw TortureError("the migration meant to stop mid-step finished")
                }
            }
            let probe = try ReliabilityProbe.snapshot(at: work)
            guard probe.journal != nil else { throw TortureError("the mid-step base has no journal: \(signature(of: probe))") }
            try copyStore(work, to: midstep)
            try? fm.removeItem(at: work)
            _ = fm.createFile(atPath: midstep.appendingPathComponent("ready").path, contents: Data())
        }
        var targets: [String: [Target]] = [:]
        for (name, base) in [("settled", settled), ("midstep", midstep)] {
            var list: [Target] = []
            for database in [StoreTampering.metaDatabase, StoreTampering.changeLogDatabase, StoreTampering.historyDatabase,
                             StoreTampering.historyModelsDatabase] {
                for entry in try StoreTampering.entries(at: base, database: database) {
                    let kind: String
                    switch database {
                    case StoreTampering.metaDatabase: kind = String(decoding: entry.key, as: UTF8.self)
                    case StoreTampering.changeLogDatabase: kind = "change log entry"
                    case StoreTampering.historyDatabase: kind = "history entry"
                    default: kind = "history model"
                    }
                    list.append(Target(kind: kind, database: database, key: entry.key, value: entry.value))
                }
            }
            targets[name] = list
        }
        return Bases(settled: settled, midstep: midstep, targets: targets)
    }

    static func sha256(_ url: URL) -> String {
        guard let data = try? Data(contentsOf: url.appendingPathComponent("data.mdb")) else { return "missing" }
        return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
    }

    nonisolated(unsafe) static var verbose = false
    /// Every object the last `runOne` read, one line each (nil when a read failed).
    nonisolated(unsafe) static var lastContents: String? = nil

    static func run(_ o: Options) throws -> Int32 {
        verbose = o.flags.contains("verbose")
        let dir = o.url
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let bases = try makeBases(dir)
        if o.flags.contains("describe") {
            for (name, list) in bases.targets.sorted(by: { $0.key < $1.key }) {
                emit("BASE \(name) " + list.map { "\($0.kind)(\($0.value.count))" }.joined(separator: " "))
            }
        }
        // What opening each undamaged base in each mode does: whether it writes (a step rolled back or resumed,
        // retired databases collected) before it succeeds or refuses.
        var references: [String: (outcome: String, changed: Bool)] = [:]
        var referenceContents: [String: String?] = [:]
        let work = dir.appendingPathComponent("input")
        for (name, base) in [("settled", bases.settled), ("midstep", bases.midstep)] {
            for mode in Mode.allCases {
                try copyStore(base, to: work)
                let before = sha256(work)
                let outcome = runOne(work, mode: mode, observedEntry: nil) { emit("VIOLATION reference \(name) \(mode.rawValue): \($0)") }
                references["\(name) \(mode.rawValue)"] = (outcome, sha256(work) != before)
                referenceContents["\(name) \(mode.rawValue)"] = lastContents
                if o.flags.contains("describe") { emit("REFERENCE \(name) \(mode.rawValue) \(outcome) changed=\(sha256(work) != before) objects=\(lastContents.map { $0.split(separator: "\n").count } ?? -1)") }
            }
        }
        let kinds = Array(Set(bases.targets.values.joined().map(\.kind))).sorted() + ["missing record", "swapped record"]
        let start = o.int("start", 0)
        let end = o.int("end", 100)
        for i in start..<end {
            var rng = SplitMix64(seed: o.seed &* 0x9E37_79B9 ^ UInt64(i) &* 0x1000_0000_01B3)
            let kind = kinds[i % kinds.count]
            var mode = Mode.allCases[(i / kinds.count) % Mode.allCases.count]
            if kind == "change log entry" && !rng.chance(25) { mode = .observe }
            // A journal exists only in the mid-step base; otherwise either base.
            let midstep = kind == "journal" || rng.chance(50)
            emit("BEGIN \(i) \(kind)|\(mode.rawValue)\(midstep ? "@midstep" : "")")
            let base = midstep ? bases.midstep : bases.settled
            let targets = bases.targets[midstep ? "midstep" : "settled"] ?? []
            try copyStore(base, to: work)
            // What to write.
            var edits: [StoreTampering.Edit] = []
            var mutation: String
            // The metadata kind written (for a missing or swapped record, the key it is written under).
            var recordKind = kind
            var observedEntry: (value: [UInt8], mustDeliver: Bool)? = nil
            var observedMeta: (edit: StoreTampering.Edit, mustReact: Bool)? = nil
            switch kind {
            case "missing record":
                let meta = targets.filter { $0.database == StoreTampering.metaDatabase }
                let target = rng.pick(meta)
                mutation = "no \(target.kind)"
                recordKind = target.kind
                edits.append(.init(database: target.database, key: target.key, value: nil))
            case "swapped record":
                let meta = targets.filter { $0.database == StoreTampering.metaDatabase }
                let target = rng.pick(meta)
                let other = rng.pick(meta)
                mutation = "\(other.kind) as \(target.kind)"
                recordKind = target.kind
                let payload = StoreTampering.payload(of: other.value) ?? []
                edits.append(.init(database: target.database, key: target.key,
                                   value: StoreTampering.seal(database: target.database, key: target.key, payload: payload)))
            default:
                let candidates = targets.filter { $0.kind == kind }
                guard !candidates.isEmpty else { emit("INPUT \(i) \(kind)|none|\(mode.rawValue)|skipped"); continue }
                let target = rng.pick(candidates)
                let payload = StoreTampering.payload(of: target.value) ?? []
                var (name, mutated): (String, [UInt8])
                if kind == "model" && rng.chance(70) {
                    (name, mutated) = rng.chance(5) ? ("JSON duplicate keys", MetaMutations.duplicateKey(payload)) : MetaMutations.json(payload, &rng)
                } else {
                    (name, mutated) = MetaMutations.bytes(payload, &rng)
                }
                // A few keep the stored checksum: the envelope must refuse them.
                let keepChecksum = rng.chance(8)
                var value = keepChecksum ? Array(target.value.prefix(4)) + mutated
                    : StoreTampering.seal(database: target.database, key: target.key, payload: mutated) ?? mutated
                if keepChecksum { name += " (stored checksum)" }
                mutation = name
                var key = target.key
                if target.database != StoreTampering.metaDatabase && rng.chance(10) {
                    // Under another key: a gap, the largest sequence, a short key.
                    key = rng.pick([[0, 0, 0, 0, 0, 0, 0, 0], [UInt8](repeating: 0xFF, count: 8), [0, 0, 0, 0, 0, 0, 3, 0xE8], [1, 2, 3]])
                    value = StoreTampering.seal(database: target.database, key: key, payload: keepChecksum ? payload : mutated) ?? value
                    mutation += " under another key"
                }
                if mode == .observe && target.database == StoreTampering.changeLogDatabase {
                    observedEntry = (value, keepChecksum && mutated != payload)
                } else if mode == .observe && kind == "state" {
                    // Written by "another writer" while the store is observed: the watcher reads the state with
                    // every commit it catches up with. One it cannot decode must end the observation with a
                    // typed error or reach it as unknown changes, not leave it waiting forever.
                    let undecodable = (try? value.withUnsafeBytes { try DecoderEntryPoints.decodeMetadata("state", $0) }) == nil
                    observedMeta = (.init(database: target.database, key: key, value: value), undecodable)
                } else {
                    edits.append(.init(database: target.database, key: key, value: value))
                }
            }
            if !edits.isEmpty { try StoreTampering.apply(edits, at: work) }
            let before = sha256(work)
            if o.flags.contains("keep") {
                try? FileManager.default.removeItem(at: dir.appendingPathComponent("before-\(i).mdb"))
                try? FileManager.default.copyItem(at: work.appendingPathComponent("data.mdb"), to: dir.appendingPathComponent("before-\(i).mdb"))
            }
            let outcome = runOne(work, mode: mode, observedEntry: observedEntry, observedMeta: observedMeta) { emit("VIOLATION \(i) \(kind)|\(mutation)|\(mode.rawValue)\(midstep ? "@midstep" : ""): \($0)") }
            var outcomeNote = ""
            if outcome.hasPrefix("opened"), mode != .observe, let read = lastContents,
               let reference = referenceContents["\(midstep ? "midstep" : "settled") \(mode.rawValue)"] ?? nil, read != reference {
                outcomeNote = " (values differ from the undamaged store's)"
            }
            if outcome.hasPrefix("refused") {
                // lock.mdb is left out: it is LMDB's reader table and writer mutex, not the store's contents, and
                // every open resets it (LMDB reinitialises the lock file when no other process has it open).
                let after = sha256(work)
                if after != before, o.flags.contains("keep") {
                    try? FileManager.default.copyItem(at: work.appendingPathComponent("data.mdb"), to: dir.appendingPathComponent("after-\(i).mdb"))
                }
                let reference = references["\(midstep ? "midstep" : "settled") \(mode.rawValue)"]
                if after != before {
                    // The state and the journal direct recovery: a state that says "migrating" without a journal
                    // has its flag cleared, a journal has its step rolled back, before the open decides; a change
                    // log with entries of transactions that have not happened yet (a compacted copy) is emptied.
                    let directsRecovery = ["state", "journal", "change log entry"].contains(recordKind)
                    if isDamage(outcome) || (reference?.changed != true && !directsRecovery) {
                        // Damage must be refused before anything is written; any other refusal may follow only the
                        // recovery that opening the undamaged store makes too (an interrupted step rolled back), or
                        // the recovery the damaged state or journal asks for.
                        emit("VIOLATION \(i) \(kind)|\(mutation)|\(mode.rawValue)\(midstep ? "@midstep" : ""): the refused open changed data.mdb (\(outcome); undamaged: \(reference?.outcome ?? "?"))")
                    } else {
                        outcomeNote = " (after recovering)"
                    }
                }
            }
            emit("INPUT \(i) \(kind)|\(mutation)|\(mode.rawValue)\(midstep ? "@midstep" : "")|\(outcome)\(outcomeNote)")
        }
        try? FileManager.default.removeItem(at: work)
        emit("DONE")
        return 0
    }

    /// Whether a refusal says the store is damaged (rather than, say, newer than the model).
    static func isDamage(_ outcome: String) -> Bool {
        ["corrupted", "notAStore", "unsupportedFormat", "History"].contains { outcome.contains($0) }
    }

    /// The error's kind, or nil (and a violation) for an untyped error.
    static func kind(of error: any Error, _ violation: (String) -> Void) -> String {
        let (typed, kind) = ErrorReport.classify(error)
        if !typed { violation("untyped error \(kind): \(String(describing: error).prefix(300))") }
        return kind
    }

    /// Opens the store at `url` as `mode` says and reads everything; returns `opened` or `refused:<kind>`.
    static func runOne(_ url: URL, mode: Mode, observedEntry: (value: [UInt8], mustDeliver: Bool)?,
                       observedMeta: (edit: StoreTampering.Edit, mustReact: Bool)? = nil, violation: (String) -> Void) -> String {
        lastContents = nil
        let store: Store
        do {
            switch mode {
            case .matching, .observe: store = try Store.open(at: url, schema: try TortureModels.v2(), configuration: configuration())
            case .older: store = try Store.open(at: url, schema: try TortureModels.v1(), configuration: configuration())
            case .newer: store = try Store.open(at: url, schema: try TortureModels.v3(), configuration: configuration())
            case .plan:
                store = try Store.open(at: url, schema: try TortureModels.v3(), plan: try TortureModels.plan("chain"),
                                       configuration: configuration(plan: true))
            case .recorded: store = try Store.openRecorded(at: url, configuration: configuration())
            }
        } catch {
            if verbose { emit("ERROR \(String(describing: error).prefix(500))") }
            return "refused:" + kind(of: error, violation)
        }
        defer { store.close() }
        var failures: [String] = []
        func attempt(_ name: String, _ body: () throws -> Void) {
            do { try body() } catch {
                if verbose { emit("ERROR \(name): \(String(describing: error).prefix(500))") }
                failures.append("\(name):\(kind(of: error, violation))") }
        }
        if mode == .observe { observe(store, url: url, entry: observedEntry, meta: observedMeta, violation: violation) }
        var contents: [String] = []
        for entity in store.schema.entities.map(\.name) {
            attempt("read \(entity)") {
                try store.read { context in
                    let objects = try context.objects(entity).fetch()
                    contents += objects.map { o in
                        "\(entity) \(o.id.rawValue) " + o.attributeValues.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                    }.sorted()
                    _ = try context.count(entity)
                    for object in objects.prefix(3) { _ = try context.object(object.id, of: entity) }
                }
            }
        }
        // What the objects read, before this input's own writes (for the figure of values that differ from what
        // the undamaged store reads: damage that decodes can change values; it is counted, not refused).
        lastContents = failures.isEmpty ? contents.joined(separator: "\n") : nil
        attempt("maintenanceStatus") { _ = try store.maintenanceStatus() }
        attempt("verify") { _ = try store.verify() }
        attempt("info") { _ = try store.info() }
        attempt("history") {
            _ = try store.fetchHistory(after: nil, limit: 100)
            _ = try store.historyInfo()
        }
        attempt("write") { try store.write { context in _ = try context.insert("Marker", ["kind": "fuzz"]) } }
        attempt("history after write") { _ = try store.fetchHistory(after: nil, limit: 100) }
        return failures.isEmpty ? "opened" : "opened, then " + failures.joined(separator: ",")
    }

    /// Observes `Item`, makes sure the observation is registered (a commit of this handle is delivered), then
    /// commits `entry` as another writer's change-log entry (or, without one, a raw commit that logs nothing):
    /// an entry that cannot be decoded must reach the observer as "unknown changes" within 10 s.
    static func observe(_ store: Store, url: URL, entry: (value: [UInt8], mustDeliver: Bool)?,
                        meta: (edit: StoreTampering.Edit, mustReact: Bool)?, violation: (String) -> Void) {
        let deliveries = Deliveries()
        let observation: ChangeObservation
        do { observation = try store.changes(of: "Item") } catch { _ = kind(of: error, violation); return }
        let task = Task.detached {
            do {
                for try await change in observation { deliveries.add(change) }
                deliveries.finish(nil)
            } catch {
                deliveries.finish(error)
            }
        }
        defer { task.cancel() }
        // The observation registers when its task first waits: commit until one commit of this handle arrives.
        var registered = false
        for attempt in 0..<100 where !registered {
            do {
                try store.write { context in
                    _ = try context.insert("Item", ["serial": .int64(10_000 + Int64(attempt)), "name": "observed", "score": .int16(1),
                                                    "when": .date(Date(timeIntervalSinceReferenceDate: 0))])
                }
            } catch {
                _ = kind(of: error, violation)
                return
            }
            registered = deliveries.wait(count: 1, timeout: 0.1)
            if deliveries.ended { break }
        }
        guard registered else {
            if let error = deliveries.error { _ = kind(of: error, violation) } else if !deliveries.ended {
                violation("the observation missed 100 commits of its own handle")
            }
            return
        }
        let seen = deliveries.delivered
        if let meta {
            do { try StoreTampering.apply([meta.edit], at: url) } catch { _ = kind(of: error, violation); return }
            let reacted = deliveries.wait(count: seen + 1, timeout: meta.mustReact ? 10 : 0.3)
            if let error = deliveries.error { _ = kind(of: error, violation) }
            if meta.mustReact && !reacted && !deliveries.ended {
                violation("a state record another writer damaged left the observation waiting, neither ended nor told of unknown changes, for 10 s")
            }
            return
        }
        do {
            try StoreTampering.commitChangeLogEntry(entry?.value ?? [], at: url)
        } catch {
            _ = kind(of: error, violation)
            return
        }
        let delivered = deliveries.wait(count: seen + 1, timeout: entry?.mustDeliver == true ? 10 : 0.3)
        if let error = deliveries.error { _ = kind(of: error, violation) }
        if entry?.mustDeliver == true && !delivered && !deliveries.ended {
            violation("an undecodable change-log entry of another writer reached no observer within 10 s (a lost wake-up)")
        }
    }

    /// What an observation delivered, for the thread that waits on it.
    final class Deliveries: @unchecked Sendable {
        private let condition = NSCondition()
        private var count = 0
        var delivered: Int { condition.lock(); defer { condition.unlock() }; return count }
        private(set) var ended = false
        private(set) var error: (any Error)?

        func add(_ change: ChangeSet) {
            condition.lock(); count += 1; condition.broadcast(); condition.unlock()
        }

        func finish(_ error: (any Error)?) {
            condition.lock(); ended = true; self.error = error; condition.broadcast(); condition.unlock()
        }

        func wait(count wanted: Int, timeout: Double) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            condition.lock()
            defer { condition.unlock() }
            while count < wanted && !ended {
                if !condition.wait(until: deadline) { break }
            }
            return count >= wanted
        }
    }
}
