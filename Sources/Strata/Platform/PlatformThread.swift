import CStrataSupport
import Foundation

/// The library's own threads (the commit watcher, background maintenance, a migration run from async code,
/// the interchange's reader): Foundation's `Thread`, which is POSIX threads on Linux and Darwin, named so
/// that `top -H`, Instruments and crash reports show which is which.
enum PlatformThread {
    /// Importance of a thread's work, mapped to Foundation's quality of service (Darwin schedules by it).
    enum Priority { case normal, utility }

    /// Starts a thread that runs `body`, then ends.
    static func start(name: String, stackSize: Int? = nil, priority: Priority = .normal,
                      _ body: @escaping @Sendable () -> Void) {
        let thread = Thread {
            strata_name_current_thread(name)
            body()
        }
        thread.name = name
        if let stackSize { thread.stackSize = stackSize }
        if priority == .utility { thread.qualityOfService = .utility }
        thread.start()
    }

    /// The kernel's ID of the calling thread (`gettid` on Linux, `pthread_threadid_np` on Darwin; 0 where
    /// threads have none).
    static var currentKernelID: Int64 { strata_current_thread_id() }
}
