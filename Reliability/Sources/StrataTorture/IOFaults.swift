@_spi(Testing) import Strata
import Foundation
import StrataTortureKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// SQLite-style I/O fault loops, in one process: the n-th write (or sync) of `data.mdb` fails with `EIO` or
/// `ENOSPC` — once, or from then on — for n = 1, 2, … until the workload completes without meeting the
/// fault. After each failure: the error must be typed, the process alive, the store at its last
/// acknowledged state; then "space returns" (the fault is lifted) and reopening must finish the work.
enum IOFaults {
    typealias Arm = @convention(c) (Int32, Int, Int32, Int32) -> Int32
    typealias Disarm = @convention(c) () -> Void
    typealias Count = @convention(c) () -> Int

    struct Shim {
        let arm: Arm
        let disarm: Disarm
        let hits: Count
        let calls: Count

        init() throws {
            func symbol<T>(_ name: String, _: T.Type) throws -> T {
                guard let p = dlsym(nil, name) else { throw TortureError("the fault shim is not loaded (LD_PRELOAD): \(name) missing") }
                return unsafeBitCast(p, to: T.self)
            }
            arm = try symbol("strata_shim_arm", Arm.self)
            disarm = try symbol("strata_shim_disarm", Disarm.self)
            hits = try symbol("strata_shim_hits", Count.self)
            calls = try symbol("strata_shim_calls", Count.self)
        }
    }

    static let lastAcknowledged = Mutex("none")

    /// `io-loop <pristine store> --work <dir> --workload migrate|fill|create --plan P --op write|sync
    /// --errno EIO|ENOSPC --forever 0|1 [--extra N] [--max M]`.
    /// Prints `FAULT n <kind> state=ok|<why> resumed=clean|<why>` per injected fault, then `DONE faults=K calls=C`.
    static func loop(_ o: Options) throws -> Int32 {
        let shim = try Shim()
        let op: Int32 = o.string("op", "write") == "sync" ? 2 : 1
        let err: Int32 = o.string("errno", "EIO") == "ENOSPC" ? ENOSPC : EIO
        let forever: Int32 = o.string("forever", "0") == "1" ? 1 : 0
        let workload = o.string("workload", "migrate")
        let work = URL(fileURLWithPath: o.string("work", NSTemporaryDirectory() + "/strata-io"))
        let extra = o.int("extra", 500)
        let oracle = SeededContents(seed: o.seed)
        let planName = o.plan
        var faults = 0
        var configuration = o.configuration()
        configuration.createIfMissing = workload == "create"
        let store = work.appendingPathComponent("store")

        func run() throws {
            switch workload {
            case "migrate":
                let plan = try TortureModels.plan(planName)
                let s = try Store.open(at: store, schema: plan.currentSchema, plan: plan, configuration: configuration)
                s.close()
            case "fill":
                let s = try Store.open(at: store, schema: try TortureModels.v1(), configuration: configuration)
                defer { s.close() }
                let have = try s.read { try $0.count("Item") }
                try Workloads.fill(s, oracle: oracle, from: have, to: o.count + extra, batch: o.batch)
            default:  // create
                let s = try Store.open(at: store, schema: try TortureModels.v1(), configuration: configuration)
                defer { s.close() }
                // The store exists once `open` returned: that is acknowledged too.
                lastAcknowledged.withLock { $0 = signature(store) }
                let have = try s.read { try $0.count("Item") }
                try Workloads.fill(s, oracle: oracle, from: have, to: extra, batch: o.batch)
            }
        }

        FaultInjection.tracePoints { name in
            if name == "txn.afterCommit" { lastAcknowledged.withLock { $0 = signature(store) } }
        }
        var n = 1
        let limit = o.int("max", 10_000)
        while n <= limit {
            try? FileManager.default.removeItem(at: work)
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            if workload != "create" { try copyStore(o.url, to: store) }
            lastAcknowledged.withLock { $0 = signature(store) }
            _ = shim.arm(op, n, err, forever)
            var failure: (any Error)? = nil
            do { try run() } catch { failure = error }
            let hits = shim.hits()
            let calls = shim.calls()
            shim.disarm()
            if hits == 0 {
                // The workload met no fault: it must have completed, and the loop ends.
                if let failure { emit("FAIL \(n) error without a fault: \(failure)"); return 4 }
                emit("COMPLETE \(n) calls=\(calls)")
                break
            }
            faults += 1
            var line = "FAULT \(n) hits=\(hits)"
            if let failure {
                let (typed, kind) = ErrorReport.classify(failure)
                line += " \(typed ? "typed" : "untyped") \(kind)"
            } else {
                line += " absorbed"
            }
            // The store is at its last acknowledged state (nothing half-written is visible).
            let found = signature(store)
            let acknowledged = lastAcknowledged.withLock { $0 }
            if failure != nil && found != acknowledged {
                line += " state=MISMATCH(found \(found), acknowledged \(acknowledged))"
            } else {
                line += " state=ok"
            }
            // Space returns: reopening finishes the work, and every object is there.
            do {
                try run()
                let plan = workload == "migrate" ? try TortureModels.plan(planName) : try TortureModels.plan("v1")
                var check = configuration
                check.createIfMissing = false
                let s = try Store.open(at: store, schema: plan.currentSchema, plan: plan, configuration: check)
                let expected = workload == "migrate" ? 0..<o.count : workload == "fill" ? 0..<(o.count + extra) : 0..<extra
                let result = try oracle.check(s, expected: expected,
                                              expectedMarkers: workload == "migrate" ? SeededContents.expectedMarkers(plan: planName, version: s.schema.versionIdentifier) : [:])
                s.close()
                line += result.isClean ? " resumed=clean" : " resumed=BAD(\(result))"
            } catch {
                line += " resumed=ERROR(\(error))"
            }
            emit(line)
            n += 1
        }
        emit("DONE faults=\(faults)")
        return 0
    }
}
