import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive, process-crossing lock on a store's migration: `flock` on `migration.lock` in the store
/// directory. The kernel releases it when its holder dies, so a killed migration never blocks the next.
final class MigrationLock {
    private var fd: Int32

    private init(fd: Int32) { self.fd = fd }

    /// Takes the lock, or returns nil when another process (or another migration in this one) holds it.
    static func acquire(storePath: String) throws -> MigrationLock? {
        let path = storePath + "/migration.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            if errno == EACCES || errno == EROFS { throw StoreError.permissionDenied(path: path) }
            throw StoreError.ioError(errno: errno, operation: "open \(path)")
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            close(fd)
            return nil
        }
        return MigrationLock(fd: fd)
    }

    /// Lets the lock go now (it is let go at the latest when the object goes away).
    func release() {
        guard fd >= 0 else { return }
        flock(fd, LOCK_UN)
        close(fd)
        fd = -1
    }

    deinit { release() }
}
