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
