@_spi(Testing) import Strata
import Foundation
import StrataTortureKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Map growth: `MDB_MAP_FULL` with a snapshot pinned in the same process, and processes that must adopt a
/// map another process grew.
enum MapGrowth {
    /// `pinned-migrate`: opens the store at v1 and pins a read snapshot on another thread, then migrates
    /// along `--plan` in this process with `--lmdb-fault` (an `MDB_MAP_FULL`): growing the map needs every
    /// transaction of the process ended, so the migration must stop with a typed error (resumable), the
    /// snapshot still read the v1 data, and — once the snapshot is released — migrating again finish.
    /// Prints `STOPPED <kind>`, `SNAPSHOT same|changed`, then the usual `RESULT`.
    static func pinnedMigrate(_ o: Options) throws -> Int32 {
        var configuration = o.configuration()
        configuration.mapGrowthWaitSeconds = Double(o.string("map-wait", "0.5")) ?? 0.5
        let v1 = try Store.open(at: o.url, schema: try TortureModels.v1(), configuration: configuration)
        let pinned = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let snapshot = Mutex<(Int, Int)>((0, 0))
        Thread.detachNewThread {
            do {
                try v1.read { context in
                    let before = try context.objects("Item").count()
                    pinned.signal()
                    release.wait()
                    let after = try context.objects("Item").count()
                    snapshot.withLock { $0 = (before, after) }
                }
            } catch {
                emit("ERR typed snapshot \(error)")
            }
            finished.signal()
        }
        pinned.wait()
        try installLMDBFaults(o.values["lmdb-fault"])
        let plan = try TortureModels.plan(o.plan)
        do {
            try Store.migrate(at: o.url, plan: plan, configuration: configuration)
            emit("STOPPED none")
        } catch {
            let (typed, kind) = ErrorReport.classify(error)
            emit("STOPPED \(typed ? "typed" : "untyped") \(kind)")
        }
        release.signal()
        finished.wait()
        let (before, after) = snapshot.withLock { $0 }
        emit("SNAPSHOT \(before == after && before == o.count ? "same" : "changed") \(before) \(after)")
        v1.close()
        let store = try Store.open(at: o.url, schema: plan.currentSchema, plan: plan, configuration: configuration)
        let result = try SeededContents(seed: o.seed).check(store, expected: 0..<o.count,
                                                    expectedMarkers: SeededContents.expectedMarkers(plan: o.plan, version: store.schema.versionIdentifier))
        emit("RESULT \(json(result))")
        store.close()
        return result.isClean ? 0 : 4
    }

    /// `late-reader`: opens the store (a small map with `--map-initial`), reads, prints `READY <map>`, waits
    /// for standard input to close — meanwhile another process grows the map far beyond this one's — then
    /// reads every item (adopting the grown map) and writes one more, and checks everything:
    /// `RESULT map=<before>→<after> items=<n> clean=<0|1>`.
    static func lateReader(_ o: Options) throws -> Int32 {
        let store = try Store.open(at: o.url, schema: try TortureModels.v1(), configuration: o.configuration())
        let before = try store.info().mapSize
        _ = try store.read { try $0.objects("Item").count() }
        emit("READY \(before)")
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(0, &buffer, buffer.count) > 0 {}
        do {
            let items = try store.read { context -> Int in
                var n = 0
                try context.objects("Item").forEach { item in
                    n += 1
                    _ = item["blob"].dataValue?.count
                }
                return n
            }
            _ = try store.write { context in try context.insert("Marker", ["kind": "late"]) }
            let after = try store.info().mapSize
            let result = try SeededContents(seed: o.seed).check(store, expected: 0..<items, ignoring: ["blob"])
            emit("RESULT map=\(before)→\(after) items=\(items) clean=\(result.verifyProblems == 0 && result.lost == 0 && result.wrongValues == 0 ? 1 : 0)")
            return 0
        } catch {
            return report(error)
        }
    }
}
