import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A pseudo-terminal from the C library (posix_openpt): a process given its slave side as standard error
/// sees a terminal (`isatty(2)`), and everything it draws there is read back from the master side. No
/// external tool is needed, so a test that uses it always runs.
final class PseudoTerminal {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let master: Int32
    /// The slave side, for the child process (open until ``capture(_:)`` has started the child).
    let slave: FileHandle

    /// The C library's pseudo-terminal calls, looked up at run time (Swift's Glibc module does not import them).
    private struct Calls {
        let openpt: @convention(c) (Int32) -> Int32
        let grantpt: @convention(c) (Int32) -> Int32
        let unlockpt: @convention(c) (Int32) -> Int32
        let ptsname: @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?

        init() throws {
            func symbol<T>(_ name: String, _: T.Type) throws -> T {
                guard let p = dlsym(nil, name) else { throw Failure(description: "the C library has no \(name)") }
                return unsafeBitCast(p, to: T.self)
            }
            openpt = try symbol("posix_openpt", (@convention(c) (Int32) -> Int32).self)
            grantpt = try symbol("grantpt", (@convention(c) (Int32) -> Int32).self)
            unlockpt = try symbol("unlockpt", (@convention(c) (Int32) -> Int32).self)
            ptsname = try symbol("ptsname", (@convention(c) (Int32) -> UnsafeMutablePointer<CChar>?).self)
        }
    }

    init() throws {
        let c = try Calls()
        master = c.openpt(O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw Failure(description: "posix_openpt: errno \(errno)") }
        // Close-on-exec: other processes the test process starts meanwhile must not inherit either side.
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        guard c.grantpt(master) == 0, c.unlockpt(master) == 0, let name = c.ptsname(master) else {
            close(master)
            throw Failure(description: "grantpt/unlockpt/ptsname: errno \(errno)")
        }
        // O_NOCTTY: the slave must not become this process's controlling terminal.
        let fd = open(String(cString: name), O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            close(master)
            throw Failure(description: "open \(String(cString: name)): errno \(errno)")
        }
        slave = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    deinit { close(master) }

    /// Starts `process` (whose standard error the caller set to ``slave``), reads everything it writes to the
    /// terminal until it exits, and returns it. The master side is read while the process runs, so the
    /// process never blocks on a full terminal buffer.
    func capture(_ process: Process) throws -> Data {
        try process.run()
        // Only the child holds the slave side now: reading the master ends (EIO) once the child is gone.
        try slave.close()
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(master, &buffer, buffer.count)
            if n > 0 { output.append(contentsOf: buffer[0..<n]); continue }
            if n < 0 && errno == EINTR { continue }
            break
        }
        process.waitUntilExit()
        return output
    }
}
