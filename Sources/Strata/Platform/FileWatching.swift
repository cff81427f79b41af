/// How a store notices commits made by other processes to its data file: the platform's file notification,
/// or the portable poll.
///
/// ``native`` is inotify on Linux and a kqueue `EVFILT_VNODE` watch on Darwin; ``polling`` looks only on a
/// timer (``CommitWatcher/pollInterval``) and is what any other platform gets. Strata's tests run the
/// observation suites with both, so that the code Apple platforms share with Linux — everything but the
/// notification itself — runs here.
@_spi(Testing)
public enum FileWatching: String, Sendable, CaseIterable, CustomStringConvertible {
    /// The platform's file notification (falls back to polling when it cannot be set up).
    case native
    /// The portable fallback: a timer only.
    case polling

    public var description: String { rawValue }

    /// A watch of `path` of this kind.
    func watch(path: String) -> any FileChangeWatch {
        switch self {
        case .polling: return PollingFileWatch()
        case .native:
            #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
            return NativeFileWatch(path: path) ?? PollingFileWatch()
            #else
            return PollingFileWatch()
            #endif
        }
    }
}

/// Waits, on one thread, for writes to one file; another thread can cut a wait short. The watch's resources
/// are released when it goes away.
protocol FileChangeWatch: AnyObject, Sendable {
    /// Returns when the file was written since the last wait, ``wake()`` was called, or `timeoutMilliseconds`
    /// passed — whichever comes first. Spurious returns are allowed; callers look for themselves.
    func wait(timeoutMilliseconds: Int)
    /// Ends the current wait (or the next one, if none is under way). Safe from any thread.
    func wake()
}
