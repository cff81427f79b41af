import Foundation

extension Store {
    /// Writes a consistent copy of the store into `destination` (a directory that must not exist) while
    /// the store stays in use — `mdb_env_copy2`, compacted by default (free pages left out). The copy is
    /// made beside `destination` and renamed into place, so a crash never leaves a partial backup there.
    public func backup(to destination: URL, compact: Bool = true) throws {
        if isClosed { throw StoreError.closed }
        try StoreBackup.copy(environment: environment, to: destination.standardizedFileURL.path, compact: compact)
    }
}

/// Consistent copies of a store.
enum StoreBackup {
    /// Writes a consistent (optionally compacted) copy of the store into `destination`, which must not exist:
    /// the copy is made in a temporary directory beside it, synced, and renamed into place.
    static func copy(environment: Environment, to destination: String, compact: Bool) throws {
        if FileManager.default.fileExists(atPath: destination) {
            throw StoreError.notAStore(path: destination, reason: "a backup destination must not exist")
        }
        StoreFiles.removeStaleTemporaries(near: destination)
        let temp = try StoreFiles.makeTemporaryDirectory(near: destination)
        do {
            try environment.copy(toEmptyDirectory: temp, compact: compact)
            try FaultInjection.point("backup.afterCopy")
            // The copy is published only once it is durable.
            let fd = open(temp + "/data.mdb", O_RDONLY)
            guard fd >= 0 else { throw StoreError.ioError(errno: errno, operation: "open the backup copy") }
            let synced = fsync(fd) == 0 ? 0 : errno
            close(fd)
            if synced != 0 { throw StoreError.ioError(errno: synced, operation: "fsync the backup copy") }
            StoreFiles.syncDirectory(temp)
            try FaultInjection.point("backup.beforePublish")
            guard try StoreFiles.publish(temp, at: destination) else {
                throw StoreError.notAStore(path: destination, reason: "a backup destination must not exist")
            }
            try FaultInjection.point("backup.afterPublish")
        } catch {
            try? FileManager.default.removeItem(atPath: temp)
            throw error
        }
    }
}
