import Foundation

extension Store {
    /// Writes a consistent copy of the store into `destination` (a directory that must not exist) while
    /// the store stays in use — `mdb_env_copy2`, compacted by default (free pages left out). The copy is
    /// made beside `destination` and renamed into place, so a crash never leaves a partial backup there.
    public func backup(to destination: URL, compact: Bool = true) throws {
        if isClosed { throw StoreError.closed }
        try StoreBackup.copy(environment: environment, to: destination.storePath, compact: compact)
    }
}
