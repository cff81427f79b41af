#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
import Foundation
#endif

/// This process and others, by process ID: the same POSIX calls on Linux and Darwin (`getpid`, `kill` with
/// signal 0); the fallback knows only its own ID and takes every other process for alive.
enum CurrentProcess {
    /// This process's ID.
    static var id: Int32 {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        return getpid()
        #else
        return ProcessInfo.processInfo.processIdentifier
        #endif
    }

    /// Whether a process with this ID exists (a process of another user counts as existing: `EPERM`).
    static func exists(_ pid: Int32) -> Bool {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        return kill(pid, 0) == 0 || errno != ESRCH
        #else
        return true
        #endif
    }

    /// Sleeps the calling thread (never on an async task: only on the library's own threads, and in loops
    /// that wait for another process, which has no way to wake this one).
    static func pause(microseconds: Int) {
        guard microseconds > 0 else { return }
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        var request = timespec(tv_sec: microseconds / 1_000_000, tv_nsec: (microseconds % 1_000_000) * 1000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
        #else
        Thread.sleep(forTimeInterval: Double(microseconds) / 1e6)
        #endif
    }
}
