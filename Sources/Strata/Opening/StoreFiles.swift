import Foundation
#if canImport(Glibc)
import Glibc
#endif

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
        var quick = stat()
        if stat(path + "/data.mdb", &quick) == 0, (quick.st_mode & S_IFMT) == S_IFREG, quick.st_size > 0 {
            try checkHeader(path + "/data.mdb", storePath: path)
            return .existing
        }
        var st = stat()
        if lstat(path, &st) != 0 {
            if errno == ENOENT { return .missing }
            if errno == EACCES { throw StoreError.permissionDenied(path: path) }
            throw StoreError.ioError(errno: errno, operation: "stat \(path)")
        }
        var target = st
        if (st.st_mode & S_IFMT) == S_IFLNK {
            guard stat(path, &target) == 0 else { throw StoreError.notAStore(path: path, reason: "it is a dangling symbolic link") }
        }
        guard (target.st_mode & S_IFMT) == S_IFDIR else {
            throw StoreError.notAStore(path: path, reason: "it is a file; a store is a directory holding data.mdb and lock.mdb")
        }
        let data = path + "/data.mdb"
        var ds = stat()
        if stat(data, &ds) != 0 {
            let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            if contents.isEmpty { return .emptyDirectory }
            if contents.contains("lock.mdb") {
                throw StoreError.corrupted(path: path, reason: .missingDataFile)
            }
            throw StoreError.notAStore(path: path, reason: "the directory holds other files and no data.mdb")
        }
        guard (ds.st_mode & S_IFMT) == S_IFREG else {
            throw StoreError.notAStore(path: path, reason: "data.mdb is not a regular file")
        }
        if ds.st_size == 0 { throw StoreError.corrupted(path: path, reason: .emptyDataFile) }
        try checkHeader(data, storePath: path)
        return .existing
    }

    /// Checks the first meta page of `data.mdb` before LMDB touches the directory (LMDB would create a lock
    /// file beside any file it is pointed at): its magic number (`0xBEEFC0DE`, after the 16-byte page header)
    /// and LMDB's data format version (1 for LMDB 0.9).
    static func checkHeader(_ data: String, storePath: String) throws {
        let fd = open(data, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == EACCES || errno == EPERM { throw StoreError.permissionDenied(path: data) }
            throw StoreError.ioError(errno: errno, operation: "open \(data)")
        }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 24)
        let n = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 24, 0) }
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

    /// Flushes a directory's entries (after a rename into it).
    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
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
            guard let owner = temporaryOwner(String(name.dropFirst(prefix.count))), !processExists(owner) else { continue }
            try? FileManager.default.removeItem(atPath: parent + "/" + name)
        }
    }

    /// The process ID in a temporary directory's name suffix (`<pid>-<uuid>`), if it has one.
    private static func temporaryOwner(_ suffix: String) -> pid_t? {
        guard let dash = suffix.firstIndex(of: "-"), let pid = Int32(suffix[..<dash]), pid > 0 else { return nil }
        return pid
    }

    /// Whether a process with this ID exists (a process of another user counts as existing).
    private static func processExists(_ pid: pid_t) -> Bool {
        kill(pid, 0) == 0 || errno != ESRCH
    }

    /// A new, unique temporary directory next to `path`, on the same file system (for atomic renames). Its
    /// name carries this process's ID, so that a later creation or backup can remove it if this process dies.
    static func makeTemporaryDirectory(near path: String) throws -> String {
        let parent = parent(of: path)
        let base = (path as NSString).lastPathComponent
        let temp = parent + "/.\(base).strata-tmp-\(getpid())-\(UUID().uuidString)"
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
        if rename(temporary, path) != 0 {
            let code = errno
            try? FileManager.default.removeItem(atPath: temporary)
            if code == ENOTEMPTY || code == EEXIST { return false }
            throw StoreError.ioError(errno: code, operation: "rename to \(path)")
        }
        syncDirectory(parent(of: path))
        return true
    }
}
