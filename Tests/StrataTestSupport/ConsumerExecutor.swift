import Dispatch

/// Where the tests' observation consumers run: a serial dispatch queue of its own, not Swift's cooperative pool.
///
/// Swift Testing runs synchronous tests on the cooperative pool, which has one thread per core. On a 2-core
/// machine two long synchronous tests (a random-evolution run, a large migration) hold the whole pool, and a
/// consumer task queued behind them — the one that registers an observation, or takes its values — waited there
/// for over a minute in a full run, so tests waiting for it timed out. A consumer that prefers this executor
/// runs as soon as it is ready, whatever the rest of the run is doing; the library's own threads (the commit
/// watcher) never depended on the pool.
public final class ConsumerExecutor: TaskExecutor {
    /// The one executor every test's consumers share (each consumer only awaits, so one serial queue is enough).
    public static let shared = ConsumerExecutor()

    private let queue = DispatchQueue(label: "strata.tests.observation-consumers")

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
