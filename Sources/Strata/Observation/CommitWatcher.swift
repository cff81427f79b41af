import CStrataSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Notices commits made by other processes: a thread that sleeps on an inotify watch of `data.mdb` (every
/// commit writes its pages there) with a short timeout as a safety net, then compares LMDB's last
/// transaction ID with the last one dispatched. It runs only while someone observes, holds no transaction
/// between checks, and stops when the last observation ends.
final class CommitWatcher: Sendable {
    /// The longest a commit by another process can go unnoticed when the file notification is lost (or
    /// unavailable).
    static let pollInterval: Int32 = 20
    /// How many times (100 µs apart) the watcher looks again for a commit that is in the data file but not
    /// yet visible to readers, before leaving it to the next poll.
    static let inFlightRetries = 20

    private let stopped = Atomic<Bool>(false)
    /// The kernel's ID of the watcher's thread once it runs (0 before, or where threads have none).
    let threadID = Atomic<Int64>(0)
    /// Written to wake the thread when it must stop (a pipe's two ends).
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let exited = DispatchSemaphore(value: 0)

    init(hub: ObservationHub, environment: Environment) {
        var fds: [Int32] = [-1, -1]
        if pipe(&fds) != 0 { fds = [-1, -1] }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        let thread = Thread { [self] in
            self.run(hub: hub, environment: environment)
            self.exited.signal()
        }
        thread.name = "strata.observe"
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// Stops the thread and waits until it has left the environment alone. (Never called on the watcher's own
    /// thread: the hub stops it from there by returning false from ``ObservationHub/catchUp(environment:)``.)
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if wakeWrite >= 0 {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
        exited.wait()
    }

    private func run(hub: ObservationHub, environment: Environment) {
        strata_name_current_thread("strata.observe")
        threadID.store(strata_current_thread_id(), ordering: .releasing)
        let notify = FileNotification(path: environment.path + "/data.mdb")
        defer {
            notify.close()
            if wakeRead >= 0 { close(wakeRead) }
            if wakeWrite >= 0 { close(wakeWrite) }
        }
        while !stopped.load(ordering: .acquiring) {
            notify.wait(wakeDescriptor: wakeRead, timeoutMilliseconds: Self.pollInterval)
            if stopped.load(ordering: .acquiring) || environment.isClosed { break }
            var retries = 0
            var result = hub.catchUp(environment: environment)
            while result == .retry, retries < Self.inFlightRetries, !stopped.load(ordering: .acquiring) {
                // Typically another process's commit, written but not yet published to readers: it will be
                // within microseconds, and the file notification for it is already consumed.
                retries += 1
                usleep(100)
                result = hub.catchUp(environment: environment)
            }
            if result == .noObservers {
                stopped.store(true, ordering: .releasing)
                break
            }
        }
    }
}

/// A watch for writes to one file (inotify on Linux; elsewhere only the timeout).
private struct FileNotification {
    private let descriptor: Int32

    init(path: String) {
        #if canImport(Glibc)
        let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if fd >= 0, inotify_add_watch(fd, path, UInt32(IN_MODIFY)) < 0 {
            Glibc.close(fd)
            descriptor = -1
        } else {
            descriptor = fd
        }
        #else
        descriptor = -1
        #endif
    }

    /// Returns when the file was written, `wakeDescriptor` became readable, or the timeout passed.
    func wait(wakeDescriptor: Int32, timeoutMilliseconds: Int32) {
        var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
        guard descriptor >= 0, fds[0].revents != 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 4096)
        while read(descriptor, &buffer, buffer.count) > 0 {}
    }

    func close() { if descriptor >= 0 { Glibc.close(descriptor) } }
}
