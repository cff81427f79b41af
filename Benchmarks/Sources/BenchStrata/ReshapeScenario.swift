import BenchCore
import Foundation
import Strata

/// Issue 13's Codable row: a store of places whose `spot` is a Codable value, migrated to a model whose
/// `spot` type renamed a key, dropped one and added one with a default — declared shapes, so metadata only.
/// The row times that open; beside it, a scan of every spot over the old layout (reshaped as read) against
/// the same scan after the sweep.
enum ReshapeScenario {
    static func v1() throws -> Schema {
        try Schema("p1") {
            Entity("Place") {
                Attribute("n", .int64)
                Attribute("spot", .codable("Point2D"))
                    .shape([.field("x", .number), .field("y", .number), .field("label", .string)])
            }
        }
    }

    static func v2() throws -> Schema {
        try Schema("p2") {
            Entity("Place") {
                Attribute("n", .int64)
                Attribute("spot", .codable("Point3D")).shape([
                    .field("x", .number), .field("north", .number).renamed(from: "y"),
                    .field("z", .number).defaultValue(.integer(0)),
                ])
            }
        }
    }

    /// Place `i`'s spot at p1, as canonical JSON.
    static func spot(_ i: Int) -> Value {
        .codable(Data(#"{"label":"place \#(i)","x":\#(i),"y":\#(-i)}"#.utf8))
    }

    static func configuration() -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        return configuration
    }

    /// Writes the p1 store (not timed).
    static func prepare(_ task: ChildTask, url: URL) throws {
        let store = try Store.open(at: url, schema: try v1(), configuration: configuration())
        defer { store.close() }
        var i = 0
        while i < task.records {
            let end = min(task.records, i + task.batchSize)
            try store.write { ctx in
                for k in i..<end { _ = try ctx.insert("Place", orderedValues: [.int64(Int64(k)), spot(k)]) }
            }
            i = end
        }
    }

    /// Every spot's bytes, read through the p2 model: seconds and a fold of them.
    static func scan(_ url: URL, records: Int) throws -> (seconds: Double, fold: UInt64) {
        var f = Fold()
        var n = 0
        let store = try Store.open(at: url, schema: try v2(), configuration: configuration())
        defer { store.close() }
        let start = Clock.now()
        try store.read { ctx in
            try ctx.forEachView(of: "Place") { v in
                _ = try v.withBytes(of: "spot") { f.add(text: $0) }
                n += 1
            }
        }
        let seconds = Clock.now() - start
        guard n == records else { throw BenchFailure("the scan read \(n) places, expected \(records)") }
        return (seconds, f.value)
    }

    /// The open that migrates p1 → p2 (timed), then the scans over old layouts and after the sweep.
    static func measure(_ task: ChildTask, url: URL) throws -> ChildReport {
        let plan = try MigrationPlan(schemas: [try v1(), try v2()])
        var left = 0
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let store = try Store.open(at: url, schema: try v2(), plan: plan, configuration: configuration())
            let seconds = Clock.now() - start
            left = try store.maintenanceStatus().oldLayoutRecords
            store.close()
            return (seconds, task.records, "records", [:], [])
        }
        guard left == task.records else { throw BenchFailure("\(left) places in the old layout after the reshape, expected \(task.records)") }
        _ = try scan(url, records: task.records)  // warms the page cache as the sweep's scans find it
        let old = try scan(url, records: task.records)
        do {
            let store = try Store.open(at: url, schema: try v2(), configuration: configuration())
            defer { store.close() }
            let rewritten = try store.performMaintenance(batchSize: task.batchSize).rewritten
            guard rewritten == task.records else { throw BenchFailure("the sweep rewrote \(rewritten) places, expected \(task.records)") }
            try store.read { ctx in
                for i in Set([0, task.records / 2, task.records - 1]) {
                    let want = Value.codable(Data(#"{"north":\#(-i),"x":\#(i),"z":0}"#.utf8))
                    // Identifiers follow the insertion order from 1.
                    guard let place = try ctx.object(ObjectID(rawValue: UInt64(i + 1)), of: "Place"), place["n"] == .int64(Int64(i)),
                          place["spot"] == want else {
                        throw BenchFailure("place \(i) does not read its reshaped spot after the sweep")
                    }
                }
            }
        }
        _ = try scan(url, records: task.records)
        let swept = try scan(url, records: task.records)
        guard swept.fold == old.fold else { throw BenchFailure("the scan after the sweep read other bytes (fold \(swept.fold) ≠ \(old.fold))") }
        report.extra["old_scan_seconds"] = old.seconds
        report.extra["swept_scan_seconds"] = swept.seconds
        report.extra["old_to_swept"] = swept.seconds / max(old.seconds, 1e-12)
        report.extra["fold"] = Double(old.fold % (1 << 50))
        return report
    }
}
