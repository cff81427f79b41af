#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The command-line tool's few calls into the C library, in one file (the library's own go through
// Sources/Strata/Platform/; `scripts/check-portability` allows no other file here to make them). The calls are
// POSIX and read the same on Linux and Darwin.

/// Exits the process (the C library's exit, which the names of ParsableCommand would shadow).
func terminate(_ status: Int32) -> Never { exit(status) }

/// Exits at once, without running exit handlers (a second Ctrl-C).
func terminateImmediately(_ status: Int32) -> Never { _exit(status) }

/// Writes all of `bytes` to a file descriptor with write(2), retried when a signal interrupts it; gives up
/// silently on any other error (a closed pipe).
func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, base + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += n
    }
}

/// Whether a file descriptor is a terminal.
func isTerminal(_ fd: Int32) -> Bool { isatty(fd) != 0 }

/// A monotonic clock in seconds.
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// The system's words for an error number (`strerror`), such as "No such file or directory".
func systemMessage(_ code: Int32) -> String { String(cString: strerror(code)) }

/// The interrupt signal (Ctrl-C), and making the process ignore its default action (a dispatch source then
/// receives it).
let interruptSignal = SIGINT
func ignoreDefaultInterruptAction() { signal(SIGINT, SIG_IGN) }

/// Looks at other processes' locks on a file without keeping any (`strata locks`).
enum FileLockProbe {
    enum State: Equatable {
        case missing
        case free
        /// Held, by this process ID when the system says.
        case held(Int32?)
        case unknown(String)
    }

    /// The holder of a POSIX record lock (`fcntl`) on any byte of the file: `F_GETLK` asks for a write lock on
    /// the whole file and reports the first conflicting lock. LMDB locks `lock.mdb` this way while the store is
    /// open.
    static func holderOfRecordLock(_ path: String) -> State {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .missing : .unknown(systemMessage(errno)) }
        // Closing any descriptor of a file drops this process's record locks on it: this process holds none.
        defer { close(fd) }
        var query = flock()
        query.l_type = Int16(F_WRLCK)
        query.l_whence = Int16(SEEK_SET)
        query.l_start = 0
        query.l_len = 0
        guard fcntl(fd, F_GETLK, &query) == 0 else { return .unknown(systemMessage(errno)) }
        return query.l_type == Int16(F_UNLCK) ? .free : .held(query.l_pid)
    }

    /// Whether another process holds a `flock` lock on the file: tries to take it exclusively without waiting,
    /// and lets it go at once. A migration holds `migration.lock` this way.
    static func isLockedExclusively(_ path: String) -> State {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno == ENOENT ? .missing : .unknown(systemMessage(errno)) }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return .free
        }
        return errno == EWOULDBLOCK ? .held(nil) : .unknown(systemMessage(errno))
    }
}
