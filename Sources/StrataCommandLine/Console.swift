import Foundation

/// Standard output and standard error, written with write(2): nothing is buffered between them.
enum Console {
    /// Writes all of `bytes` to a file descriptor.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) { writeAll(fd, bytes) }

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

    static var stderrIsTerminal: Bool { isTerminal(2) }
}
