/// An exclusive, process-crossing lock on a store's migration: a ``FileLock`` on `migration.lock` in the
/// store directory. The kernel releases it when its holder dies, so a killed migration never blocks the next.
final class MigrationLock {
    private let lock: FileLock

    private init(lock: FileLock) { self.lock = lock }

    /// Takes the lock, or returns nil when another process (or another migration in this one) holds it.
    static func acquire(storePath: String) throws -> MigrationLock? {
        let path = storePath + "/migration.lock"
        do throws(SystemCallError) {
            return try FileLock.tryExclusive(path: path).map(MigrationLock.init(lock:))
        } catch {
            if error.isPermissionDenied { throw StoreError.permissionDenied(path: path) }
            throw StoreError.ioError(errno: error.errno, operation: error.operation)
        }
    }

    /// Lets the lock go now (it is let go at the latest when the object goes away).
    func release() { lock.release() }
}
