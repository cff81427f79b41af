import Dispatch
import Synchronization

/// Notices commits made by other processes: a thread that sleeps on a watch of `data.mdb` (every commit
/// writes its pages there; ``FileWatching`` says which watch) with a short timeout as a safety net, then
/// compares LMDB's last transaction ID with the last one dispatched. It runs only while someone observes,
/// holds no transaction between checks, and stops when the last observation ends.
final class CommitWatcher: Sendable {
    /// The longest a commit by another process can go unnoticed when the file notification is lost (or
    /// unavailable).
    static let pollInterval = 20
    /// How many times (100 µs apart) the watcher looks again for a commit that is in the data file but not
    /// yet visible to readers, before leaving it to the next poll.
    static let inFlightRetries = 20

    private let stopped = Atomic<Bool>(false)
    /// The kernel's ID of the watcher's thread once it runs (0 before, or where threads have none).
    let threadID = Atomic<Int64>(0)
    private let watch: any FileChangeWatch
    private let exited = DispatchSemaphore(value: 0)

    /// Starts watching for `hub`. With `startsThread` false no thread runs: whoever made the hub calls
    /// ``ObservationHub/catchUp(environment:)`` itself (tests that drive the hub step by step).
    init(hub: ObservationHub, environment: Environment, startsThread: Bool = true) {
        watch = environment.configuration.fileWatching.watch(path: environment.path + "/data.mdb")
        guard startsThread else {
            exited.signal()
            return
        }
        PlatformThread.start(name: "strata.observe", stackSize: 256 << 10) { [self] in
            self.run(hub: hub, environment: environment)
            self.exited.signal()
        }
    }

    /// Stops the thread and waits until it has ended (at once if it already has; any number of times).
    /// (Never called on the watcher's own thread: the hub stops it from there by returning false from
    /// ``ObservationHub/catchUp(environment:)``.)
    func stop() {
        stopped.store(true, ordering: .releasing)
        watch.wake()
        exited.wait()
        exited.signal()  // for any later stop()
    }

    private func run(hub: ObservationHub, environment: Environment) {
        threadID.store(PlatformThread.currentKernelID, ordering: .releasing)
        while !stopped.load(ordering: .acquiring) {
            watch.wait(timeoutMilliseconds: Self.pollInterval)
            if stopped.load(ordering: .acquiring) || environment.isClosed { break }
            var retries = 0
            var result = hub.catchUp(environment: environment)
            while result == .retry, retries < Self.inFlightRetries, !stopped.load(ordering: .acquiring) {
                // Typically another process's commit, written but not yet published to readers: it will be
                // within microseconds, and the file notification for it is already consumed.
                retries += 1
                CurrentProcess.pause(microseconds: 100)
                result = hub.catchUp(environment: environment)
            }
            if result == .noObservers {
                stopped.store(true, ordering: .releasing)
                break
            }
        }
    }
}
