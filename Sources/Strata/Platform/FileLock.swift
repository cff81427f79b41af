#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
import Foundation
#endif

/// An exclusive, advisory lock on a file that other processes see: `flock(2)` on Linux and Darwin (the same
/// BSD call on both). The kernel lets it go when its holder dies, so a killed holder never blocks the next.
///
/// The fallback (no POSIX C library) locks only within this process: a registry of held paths.
final class FileLock {
    private var descriptor: Int32
    private let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// Takes the lock on `path` (created if missing) without waiting; nil when someone else holds it.
    static func tryExclusive(path: String) throws(SystemCallError) -> FileLock? {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SystemCallError.last("open \(path)") }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
        return FileLock(descriptor: fd, path: path)
        #else
        guard FileManager.default.createFile(atPath: path, contents: nil) || FileManager.default.fileExists(atPath: path) else {
            throw SystemCallError(errno: EACCES, operation: "open \(path)")
        }
        let taken = FallbackLocks.held.withLock { $0.insert(path).inserted }
        return taken ? FileLock(descriptor: 0, path: path) : nil
        #endif
    }

    /// Lets the lock go now (at the latest when the object goes away).
    func release() {
        guard descriptor >= 0 else { return }
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        flock(descriptor, LOCK_UN)
        close(descriptor)
        #else
        FallbackLocks.held.withLock { _ = $0.remove(path) }
        #endif
        descriptor = -1
    }

    deinit { release() }
}

#if !(canImport(Glibc) || canImport(Musl) || canImport(Darwin))
import Synchronization

private enum FallbackLocks {
    static let held = Mutex<Set<String>>([])
}
#endif
