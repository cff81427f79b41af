#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads and writes of open file descriptors (`read(2)`, `write(2)`), retried when a signal interrupts them:
/// the interchange's input and its temporary file of links, in large chunks, without Foundation's per-call
/// copies.
enum FileDescriptorIO {
    /// Reads up to `buffer.count` bytes; 0 at the end of the file.
    static func read(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            let n = systemRead(descriptor, base, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw SystemCallError(errno: errno, operation: "read")
        }
    }

    /// A new descriptor of the same open file (`dup(2)`, close-on-exec), which stays valid whatever becomes of
    /// the original: what a reading thread keeps of a file handle its caller may close.
    static func duplicate(_ descriptor: Int32) throws(SystemCallError) -> Int32 {
        let copy = fcntl(descriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw SystemCallError(errno: errno, operation: "dup") }
        return copy
    }

    static func close(_ descriptor: Int32) { _ = systemClose(descriptor) }

    /// Writes all of `bytes`.
    static func write(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let n = systemWrite(descriptor, base + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(errno: errno, operation: "write")
            }
            offset += n
        }
    }
}

extension SystemCallError {
    /// The system's words for the error (`strerror`), such as "No space left on device".
    var systemMessage: String { String(cString: strerror(errno)) }
}

/// `read(2)`, `write(2)` and `close(2)`, under names that the functions above do not shadow.
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(fd, buffer, count) }
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }
private func systemClose(_ fd: Int32) -> Int32 { close(fd) }
