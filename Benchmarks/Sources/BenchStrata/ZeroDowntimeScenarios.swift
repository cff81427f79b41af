import BenchCore
import Foundation
import Strata

/// Issue 13's rows: what follows a widening that changed metadata only. Each store is prepared by
/// ``widenAsProjection(_:url:)`` — the v1 data set, then `views` Int32 → Int64 as a projection with the
/// background sweep off — so that every record is still in v1's layout when the measurement starts.
enum ZeroDowntimeScenarios {
    static func configuration(maintenance: Bool) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.createIfMissing = false
        configuration.backgroundMaintenance = maintenance
        return configuration
    }

    /// Migrates the prepared v1 store to the widened model, metadata only (not timed).
    static func widenAsProjection(_ task: ChildTask, url: URL) throws {
        let plan = try MigrationPlan(schemas: [try PostModel.v1(), try PostModel.widened()])
        let store = try Store.open(at: url, schema: try PostModel.widened(), plan: plan, configuration: configuration(maintenance: false))
        defer { store.close() }
        let left = try store.maintenanceStatus().oldLayoutRecords
        guard left == task.records else { throw BenchFailure("\(left) records in the old layout after the widening, expected \(task.records)") }
    }

    // MARK: Sweep

    /// `performMaintenance` from open to close: every record rewritten into the widened layout.
    static func measureSweep(_ task: ChildTask, url: URL) throws -> ChildReport {
        var rewritten = 0
        let report = try measured(path: task.path) {
            let start = Clock.now()
            let store = try Store.open(at: url, schema: try PostModel.widened(), configuration: configuration(maintenance: false))
            rewritten = try store.performMaintenance(batchSize: task.batchSize).rewritten
            store.close()
            return (Clock.now() - start, task.records, "records", [:], [])
        }
        guard rewritten == task.records else { throw BenchFailure("the sweep rewrote \(rewritten) records, expected \(task.records)") }
        try verifySwept(task, url: url)
        return report
    }

    /// Every record in the current layout, and a sample of them holding their data set's values.
    static func verifySwept(_ task: ChildTask, url: URL) throws {
        let store = try Store.open(at: url, schema: try PostModel.widened(), configuration: configuration(maintenance: false))
        defer { store.close() }
        let status = try store.maintenanceStatus()
        guard status.isComplete else { throw BenchFailure("maintenance left after the sweep: \(status)") }
        try store.read { ctx in
            for i in Set([1, task.records / 3 + 1, task.records]) {
                let r = task.dataSet.record(i)
                guard let o = try ctx.object(ObjectID(rawValue: UInt64(i)), of: "Post"), o["views"] == .int64(Int64(r.views)),
                      o["content"] == .string(r.content), o["postID"] == .uuid(r.uuid) else {
                    throw BenchFailure("post \(i) does not hold record \(i) after the sweep")
                }
            }
        }
    }

    // MARK: Scans over old layouts

    @inline(__always)
    static func fold(_ o: DynamicObject, into fold: inout Fold) {
        fold.add(o.id.rawValue)
        if let u = o["postID"].uuidValue { fold.add(uuid: u.uuid) }
        if let d = o["date"].dateValue { fold.add(d.timeIntervalSinceReferenceDate) }
        if let s = o["color"].stringValue { fold.add(text: s) }
        if let s = o["content"].stringValue { fold.add(text: s) }
        if case .int64(let v) = o["views"] { fold.add(Int32(truncatingIfNeeded: v)) }
    }

    @inline(__always)
    static func fold(_ v: ObjectView, into fold: inout Fold) throws {
        fold.add(v.id.rawValue)
        if let u = try v.uuid("postID") { fold.add(uuid: u.uuid) }
        if let d = try v.date("date") { fold.add(d.timeIntervalSinceReferenceDate) }
        _ = try v.withBytes(of: "color") { fold.add(text: $0) }
        _ = try v.withBytes(of: "content") { fold.add(text: $0) }
        if let i = try v.int64("views") { fold.add(Int32(truncatingIfNeeded: i)) }
    }

    @inline(__always)
    static func fold(_ p: MacroPosts.Widened.Post, into fold: inout Fold) {
        fold.add(p.objectID?.rawValue ?? 0)
        fold.add(uuid: p.postID.uuid)
        fold.add(p.date.timeIntervalSinceReferenceDate)
        fold.add(text: p.color)
        fold.add(text: p.content)
        fold.add(Int32(truncatingIfNeeded: p.views))
    }

    /// One scan of the widened model through `system`'s API, from open to close: seconds and fold.
    static func scanWidened(_ task: ChildTask, url: URL) throws -> (seconds: Double, fold: UInt64) {
        var f = Fold()
        var n = 0
        let start = Clock.now()
        let store = try Store.open(at: url, schema: try PostModel.widened(), configuration: configuration(maintenance: false))
        try store.read { ctx in
            switch task.system {
            case .strataTyped:
                try ctx.objects(MacroPosts.Widened.Post.self).forEach { p in fold(p, into: &f); n += 1 }
            case .strataViews:
                try ctx.forEachView(of: "Post") { v in try fold(v, into: &f); n += 1 }
            default:
                try ctx.objects("Post").forEach { o in fold(o, into: &f); n += 1 }
            }
        }
        store.close()
        let seconds = Clock.now() - start
        guard n == task.records else { throw BenchFailure("scan read \(n) objects, expected \(task.records)") }
        return (seconds, f.value)
    }

    /// The scan over old layouts (timed as the row), then the sweep (not timed), then the same scan over the
    /// current layout: `swept_seconds` and `old_to_swept` (throughput over old layouts ÷ after the sweep).
    static func measureScanOldLayout(_ task: ChildTask, url: URL) throws -> ChildReport {
        var old: (seconds: Double, fold: UInt64) = (0, 0)
        var report = try measured(path: task.path) {
            old = try scanWidened(task, url: url)
            return (old.seconds, task.records, "records", [:], [])
        }
        let store = try Store.open(at: url, schema: try PostModel.widened(), configuration: configuration(maintenance: false))
        _ = try store.performMaintenance(batchSize: task.batchSize)
        store.close()
        // Warm the page cache the rewrite changed, as the first scan found it warm from the preparation.
        _ = try scanWidened(task, url: url)
        let swept = try scanWidened(task, url: url)
        guard swept.fold == old.fold else { throw BenchFailure("the scan after the sweep read other values (fold \(swept.fold) ≠ \(old.fold))") }
        report.extra["fold"] = Double(old.fold % (1 << 50))
        report.extra["swept_seconds"] = swept.seconds
        report.extra["old_to_swept"] = swept.seconds / max(old.seconds, 1e-12)
        return report
    }

    // MARK: App writes during the sweep

    /// How many objects the app writes: a tenth of the store (at least 1,000, at most 200,000).
    static func appWrites(_ task: ChildTask) -> Int { max(1_000, min(task.records / 10, 200_000)) }

    /// App-like writes: transactions of 500 inserts and 500 updates of seeded random existing posts.
    static func writeLikeAnApp(_ store: Store, task: ChildTask, round: UInt64, updated: inout Set<UInt64>) throws -> Double {
        let total = appWrites(task)
        var random = SplitMix(seed: task.seed &+ round)
        let start = Clock.now()
        var done = 0
        while done < total {
            let n = min(1_000, total - done)
            try store.write { ctx in
                for i in 0..<n / 2 {
                    let r = task.dataSet.record(1 + (done + i) % task.records)
                    _ = try ctx.insert("Post", orderedValues: [.uuid(r.uuid), .date(r.dateValue), .string(r.color),
                                                              .string(r.content), .int64(Int64(r.views))])
                }
                for _ in n / 2..<n {
                    let id = ObjectID(rawValue: 1 + random.next() % UInt64(task.records))
                    guard var o = try ctx.object(id, of: "Post") else { throw BenchFailure("no post \(id.rawValue)") }
                    o["views"] = .int64(-1)
                    try ctx.update(o)
                    updated.insert(id.rawValue)
                }
            }
            done += n
        }
        return Clock.now() - start
    }

    /// The writes while the store's own background sweep runs (timed as the row), then — once the sweep is
    /// done — the same amount of writes on the idle store: `idle_seconds`, `during_to_idle` (throughput
    /// during the sweep ÷ idle) and `old_records_left_after_writes` (the sweep still had work when the
    /// writes ended: they ran beside it all along).
    static func measureWritesDuringSweep(_ task: ChildTask, url: URL) throws -> ChildReport {
        var left = 0
        var updated = Set<UInt64>()
        var report = try measured(path: task.path) {
            let store = try Store.open(at: url, schema: try PostModel.widened(), configuration: configuration(maintenance: true))
            let seconds = try writeLikeAnApp(store, task: task, round: 1, updated: &updated)
            left = try store.maintenanceStatus().oldLayoutRecords
            store.close()
            return (seconds, appWrites(task), "objects", [:], [])
        }
        let store = try Store.open(at: url, schema: try PostModel.widened(), configuration: configuration(maintenance: false))
        defer { store.close() }
        _ = try store.performMaintenance(batchSize: task.batchSize)
        var updatedIdle = Set<UInt64>()
        let idle = try writeLikeAnApp(store, task: task, round: 2, updated: &updatedIdle)
        report.extra["idle_seconds"] = idle
        report.extra["during_to_idle"] = idle / max(report.seconds, 1e-12)
        report.extra["old_records_left_after_writes"] = Double(left)
        // Every post updated during the sweep still holds the update: no sweep batch put an older value back.
        try store.read { ctx in
            for id in updated {
                guard let o = try ctx.object(ObjectID(rawValue: id), of: "Post"), o["views"] == .int64(-1) else {
                    throw BenchFailure("post \(id), updated during the sweep, lost its update")
                }
            }
            let n = try ctx.count("Post")
            guard n == task.records + 2 * (appWrites(task) / 1_000 * 500 + (appWrites(task) % 1_000) / 2) else {
                throw BenchFailure("\(n) posts after the writes")
            }
        }
        return report
    }
}

/// A small seeded generator (SplitMix64) for the writes' random IDs.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
