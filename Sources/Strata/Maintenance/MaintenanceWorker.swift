import Foundation
import Synchronization

/// The background maintenance of one open store handle: a thread that runs ``MaintenanceBatch`` batches — records
/// of older layouts rewritten into the current layout, indexes built, retired databases emptied — until
/// nothing is left, each batch a short write transaction (a few milliseconds), pausing while the app's own
/// writers wait for the write lock. It stops when the handle closes, when another handle migrates the store,
/// or when the work is done; a kill loses nothing (every batch commits its progress).
final class MaintenanceWorker: Sendable {
    /// Set to stop the thread after its current batch.
    final class StopFlag: Sendable {
        let requested = Atomic<Bool>(false)
    }

    private let stopFlag = StopFlag()
    private let done = DispatchSemaphore(value: 0)

    /// Records visited per batch, and the longest a batch may take.
    static let batchLimit = 2_000
    static let batchSeconds = 0.005

    init(model: BoundModel, environment: Environment) {
        let stop = stopFlag
        let done = done
        PlatformThread.start(name: "strata.maintenance", priority: .utility) {
            MaintenanceWorker.run(model: model, environment: environment, stop: stop)
            done.signal()
        }
    }

    /// Asks the thread to stop after its current batch and waits for it.
    func stop() {
        stopFlag.requested.store(true, ordering: .relaxed)
        done.wait()
        done.signal()
    }

    private static func run(model: BoundModel, environment: Environment, stop: StopFlag) {
        var failures = 0
        while !stop.requested.load(ordering: .relaxed) {
            // Suspended (the app is in the background): wait for resume, or for stop.
            if environment.isSuspended {
                CurrentProcess.pause(microseconds: 10_000)
                continue
            }
            // The app's writers go first.
            if environment.writersWaiting.load(ordering: .relaxed) > 0 {
                CurrentProcess.pause(microseconds: 500)
                continue
            }
            do {
                let batch = try MaintenanceBatch.run(model: model, environment: environment, limit: batchLimit, seconds: batchSeconds)
                failures = 0
                if batch.isDone { return }
            } catch let error as StoreError where error.code == .suspended {
                // Suspended between the check above and the batch: nothing was written; wait as above.
                continue
            } catch let error as StoreError where error.code.isEnvironmental && error.code != .closed && error.code != .usedAfterFork {
                // A full disk or an I/O error: try again later, a few times.
                failures += 1
                if failures > 8 { return }
                CurrentProcess.pause(microseconds: min(2_000_000, 50_000 << failures))
            } catch {
                // Closed, migrated by another handle, migrating, read-only: nothing for this handle to do.
                return
            }
        }
    }
}
