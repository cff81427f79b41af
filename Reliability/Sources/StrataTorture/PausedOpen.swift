@_spi(Testing) import Strata
import Foundation
import StrataTortureKit
import Synchronization

/// `paused-open <path> --plan P --pause-at POINT [--migrate]`: opens the store with the plan's model and stops at
/// the first time the library reaches fault point `POINT` — prints `PAUSED POINT` and waits for a line on
/// standard input — so that the parent can let another process change the store at exactly that instant (a
/// signal, never a sleep). Then prints `OPENED <version>` (and closes) or `ERR …`.
///
/// Without `--migrate` it opens as the open-loop tier does (never migrating, never waiting for another process's
/// migration); with it, it migrates (in batches of `--batch`).
enum PausedOpen {
    static func run(_ o: Options) throws -> Int32 {
        let point = o.string("pause-at", "")
        let paused = Mutex(false)
        FaultInjection.tracePoints { name in
            guard name == point, !paused.withLock({ done in defer { done = true }; return done }) else { return }
            emit("PAUSED \(name)")
            _ = readLine()
        }
        let plan = try TortureModels.plan(o.plan)
        var configuration = o.flags.contains("migrate") ? TortureModels.configuration(plan: o.plan)
            : OpenLoop.configuration(plan: o.plan, batch: o.batch)
        configuration.migration.batchSize = o.batch
        configuration.createIfMissing = false
        do {
            let store = try Store.open(at: o.url, schema: plan.currentSchema, plan: plan, configuration: configuration)
            defer { store.close() }
            emit("OPENED \(store.schema.versionIdentifier)")
            return 0
        } catch {
            return report(error)
        }
    }
}
