import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Exits the process (the C library's exit, which the names of ParsableCommand would shadow).
func terminate(_ status: Int32) -> Never { exit(status) }

/// write(2), under a name that methods called `write` do not shadow.
func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }

/// Standard output and standard error, written with write(2): nothing is buffered between them.
enum Console {
    /// Writes all of `bytes` to a file descriptor.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let n = systemWrite(fd, base + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
    }

    static func write(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { write(fd, UnsafeRawBufferPointer($0)) }
    }

    /// A line on standard output.
    static func out(_ text: String) {
        write(1, text.hasSuffix("\n") ? text : text + "\n")
    }

    /// A line on standard error.
    static func error(_ text: String) {
        write(2, text.hasSuffix("\n") ? text : text + "\n")
    }

    /// Writes to standard error without a newline (progress bars).
    static func errorRaw(_ text: String) {
        write(2, text)
    }

    static var stderrIsTerminal: Bool { isatty(2) != 0 }
}
