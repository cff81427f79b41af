import Foundation

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
            if compact {
                // The compacted copy restarts LMDB's transaction IDs: the change log, keyed by them, must not
                // come along (its entries would be read as changes of the copy's later transactions).
                var configuration = environment.configuration
                configuration.readOnly = false
                let copy = try Environment.openPrivate(path: temp, configuration: configuration)
                defer { copy.closePrivate() }
                try ChangeLog.discardEntriesFromAnotherFile(environment: copy)
            }
            try FaultInjection.point("backup.afterCopy")
            // The copy is published only once it is durable.
            do throws(SystemCallError) {
                try FileSync.syncFile(temp + "/data.mdb")
            } catch {
                throw StoreError.ioError(errno: error.errno, operation: "\(error.operation) (the backup copy)")
            }
            FileSync.syncDirectory(temp)
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
