@_spi(Testing) import Strata
import Foundation
import StrataTortureKit

/// Maintenance work under kills (the reliability plan's item 24, adapted): a backup published by rename, and
/// the batched rewrite of records into their entity's current layout.
enum Maintenance {
    /// `maintain <store> --op backup --dest PATH [--no-compact]`: opens the store with `--plan` (`OPENED`), writes a backup
    /// to `--dest`, prints `BACKED <seconds>`, then checks every object of the backup against the oracle (`RESULT`).
    ///
    /// `maintain <store> --op layouts`: opens the store with `--plan` (migrating it if needed), rewrites
    /// its records into their current layouts in batches of `--batch` (an ACK per commit), prints
    /// `LAYOUTS <records rewritten> <entities with more than one layout>`, then checks every object (`RESULT`).
    static func run(_ o: Options) throws -> Int32 {
        let plan = try TortureModels.plan(o.plan)
        let oracle = SeededContents(seed: o.seed)
        let store: Store
        do {
            store = try Store.open(at: o.url, schema: plan.currentSchema, plan: plan, configuration: o.configuration())
        } catch {
            return report(error)
        }
        defer { store.close() }
        emit("OPENED")
        let markers = SeededContents.expectedMarkers(plan: o.plan, version: store.schema.versionIdentifier)
        switch o.string("op", "") {
        case "backup":
            guard let destination = o.values["dest"] else { throw TortureError("--dest is required") }
            let started = Date()
            do {
                try store.backup(to: URL(fileURLWithPath: destination), compact: !o.flags.contains("no-compact"))
            } catch {
                return report(error)
            }
            emit("BACKED \(Date().timeIntervalSince(started))")
            let copy = try Store.open(at: URL(fileURLWithPath: destination), schema: plan.currentSchema, plan: plan,
                                      configuration: o.configuration())
            defer { copy.close() }
            let result = try oracle.check(copy, expected: 0..<o.count, expectedMarkers: markers)
            emit("RESULT \(json(result))")
            return result.isClean ? 0 : 4
        case "layouts":
            emit("ACK 0 \(signature(o.url))")
            installAcknowledgements(o.url, trace: o.flags.contains("trace"))
            let rewritten: Int
            do {
                rewritten = try store.performMaintenance(batchSize: o.batch).rewritten
            } catch {
                return report(error)
            }
            FaultInjection.tracePoints(nil)
            let layered = try store.info().entities.filter { $0.layoutCount > 1 }.count
            emit("LAYOUTS \(rewritten) \(layered)")
            let result = try oracle.check(store, expected: 0..<o.count, expectedMarkers: markers)
            emit("RESULT \(json(result))")
            return result.isClean && layered == 0 ? 0 : 4
        default:
            throw TortureError("--op must be backup or layouts")
        }
    }
}
