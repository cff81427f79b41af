import Foundation

/// What is at a store path, checked before LMDB touches anything: LMDB takes an empty or missing
/// `data.mdb` for a new store, and crashes on a truncated one.
enum StoreFiles {
    enum State {
        /// Nothing at the path.
        case missing
        /// An empty directory.
        case emptyDirectory
        /// A directory with a non-empty `data.mdb`.
        case existing
    }

    static func inspect(_ path: String) throws -> State {
        // The common case first: an existing store's data file.
        if let quick = try? FileStatus.of(path + "/data.mdb"), quick.kind == .regular, quick.size > 0 {
            try checkHeader(path + "/data.mdb", storePath: path)
            return .existing
        }
        let entry: FileStatus
        do throws(SystemCallError) {
            entry = try FileStatus.of(path, followingLinks: false)
        } catch {
            if error.isNotFound { return .missing }
            if error.isPermissionDenied { throw StoreError.permissionDenied(path: path) }
            throw StoreError.ioError(errno: error.errno, operation: error.operation)
        }
        var target = entry
        if entry.kind == .symbolicLink {
            guard let followed = try? FileStatus.of(path) else {
                throw StoreError.notAStore(path: path, reason: "it is a dangling symbolic link")
            }
            target = followed
        }
        guard target.kind == .directory else {
            throw StoreError.notAStore(path: path, reason: "it is a file; a store is a directory holding data.mdb and lock.mdb")
        }
        let data = path + "/data.mdb"
        guard let ds = try? FileStatus.of(data) else {
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            if contents.isEmpty { return .emptyDirectory }
            if contents.contains("lock.mdb") {
                throw StoreError.corrupted(path: path, reason: .missingDataFile)
            }
            throw StoreError.notAStore(path: path, reason: "the directory holds other files and no data.mdb")
        }
        guard ds.kind == .regular else {
            throw StoreError.notAStore(path: path, reason: "data.mdb is not a regular file")
        }
        if ds.size == 0 { throw StoreError.corrupted(path: path, reason: .emptyDataFile) }
        try checkHeader(data, storePath: path)
        return .existing
    }

    /// Checks the first meta page of `data.mdb` before LMDB touches the directory (LMDB would create a lock
    /// file beside any file it is pointed at): its magic number (`0xBEEFC0DE`, after the 16-byte page header)
    /// and LMDB's data format version (1 for LMDB 0.9).
    static func checkHeader(_ data: String, storePath: String) throws {
        let header: [UInt8]
        do throws(SystemCallError) {
            header = try ReadOnlyFile(path: data).read(count: 24, at: 0)
        } catch {
            if error.isPermissionDenied { throw StoreError.permissionDenied(path: data) }
            throw StoreError.ioError(errno: error.errno, operation: error.operation)
        }
        let n = header.count
        var hasLockFile: Bool { FileManager.default.fileExists(atPath: storePath + "/lock.mdb") }
        guard n == 24 else {
            if hasLockFile { throw StoreError.corrupted(path: storePath, reason: .invalidHeader) }
            throw StoreError.notAStore(path: storePath, reason: "data.mdb is too short to be an LMDB data file")
        }
        let magic = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt32.self) }
        let version = header.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 20, as: UInt32.self) }
        guard magic == 0xBEEF_C0DE else {
            if hasLockFile { throw StoreError.corrupted(path: storePath, reason: .invalidHeader) }
            throw StoreError.notAStore(path: storePath, reason: "data.mdb is not an LMDB data file")
        }
        guard version == 1 else {
            throw StoreError.unsupportedFormat(path: storePath, found: "LMDB data format \(version)",
                                               supported: "LMDB data format 1 (LMDB 0.9)")
        }
    }

    /// The parent directory of `path`.
    static func parent(of path: String) -> String {
        (path as NSString).deletingLastPathComponent.isEmpty ? "." : (path as NSString).deletingLastPathComponent
    }

    /// Removes leftovers of interrupted creations or backups next to `path`: temporary directories whose
    /// creating process (its ID is in the name) no longer exists. A temporary of a live process — another
    /// creation or backup still running — is left alone, however old. Processes of another PID namespace
    /// sharing the directory are not told apart (see the Reliability article).
    static func removeStaleTemporaries(near path: String) {
        let parent = parent(of: path)
        let base = (path as NSString).lastPathComponent
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        let prefix = ".\(base).strata-tmp-"
        for name in names where name.hasPrefix(prefix) {
            guard let owner = temporaryOwner(String(name.dropFirst(prefix.count))), !CurrentProcess.exists(owner) else { continue }
            try? FileManager.default.removeItem(atPath: parent + "/" + name)
        }
    }

    /// The process ID in a temporary directory's name suffix (`<pid>-<uuid>`), if it has one.
    private static func temporaryOwner(_ suffix: String) -> Int32? {
        guard let dash = suffix.firstIndex(of: "-"), let pid = Int32(suffix[..<dash]), pid > 0 else { return nil }
        return pid
    }

    /// A new, unique temporary directory next to `path`, on the same file system (for atomic renames). Its
    /// name carries this process's ID, so that a later creation or backup can remove it if this process dies.
    static func makeTemporaryDirectory(near path: String) throws -> String {
        let parent = parent(of: path)
        let base = (path as NSString).lastPathComponent
        let temp = parent + "/.\(base).strata-tmp-\(CurrentProcess.id)-\(UUID().uuidString)"
        do {
            try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: false)
        } catch {
            if !FileManager.default.fileExists(atPath: parent) {
                throw StoreError.parentDirectoryMissing(path: parent)
            }
            throw StoreError.permissionDenied(path: parent)
        }
        return temp
    }

    /// Renames `temporary` to `path` atomically (replacing an empty directory), then syncs the parent.
    /// Returns false when `path` was created meanwhile by someone else (the temporary is removed).
    static func publish(_ temporary: String, at path: String) throws -> Bool {
        do throws(SystemCallError) {
            try FileSync.rename(temporary, to: path)
        } catch {
            try? FileManager.default.removeItem(atPath: temporary)
            if error.isTargetNotEmpty { return false }
            throw StoreError.ioError(errno: error.errno, operation: error.operation)
        }
        FileSync.syncDirectory(parent(of: path))
        return true
    }
}
