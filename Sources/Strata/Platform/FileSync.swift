#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
import Foundation
#endif

/// Making files and directory entries durable, and the atomic rename that publishes a finished directory.
///
/// On Darwin `fsync(2)` asks the drive to write but not to empty its cache; `F_FULLFSYNC` does, and is what
/// Apple documents for data that must survive a power loss — LMDB itself uses it there. Linux's `fsync`
/// already flushes the drive's cache. The fallback (no POSIX C library) uses Foundation's `FileHandle`.
enum FileSync {
    /// Flushes a file's contents to stable storage.
    static func syncFile(_ path: String) throws(SystemCallError) {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError.last("open \(path)") }
        defer { close(fd) }
        guard flush(fd) else { throw SystemCallError.last("fsync \(path)") }
        #else
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw SystemCallError(errno: ENOENT, operation: "open \(path)")
        }
        defer { try? handle.close() }
        do { try handle.synchronize() } catch { throw SystemCallError(errno: EIO, operation: "fsync \(path)") }
        #endif
    }

    /// Flushes a directory's entries (after a rename into it). Best effort: a file system that cannot sync a
    /// directory (some network file systems) is not an error.
    static func syncDirectory(_ path: String) {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = flush(fd)
        close(fd)
        #endif
    }

    /// Renames `source` to `target` atomically; a target that is an empty directory is replaced.
    static func rename(_ source: String, to target: String) throws(SystemCallError) {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        guard systemRename(source, target) == 0 else { throw SystemCallError.last("rename to \(target)") }
        #else
        do { try FileManager.default.moveItem(atPath: source, toPath: target) } catch {
            throw SystemCallError(errno: EEXIST, operation: "rename to \(target)")
        }
        #endif
    }

    #if canImport(Glibc) || canImport(Musl)
    private static func flush(_ fd: Int32) -> Bool { fsync(fd) == 0 }
    #elseif canImport(Darwin)
    /// `F_FULLFSYNC`, or `fsync` where the file system does not support it (it fails with `ENOTSUP` there).
    private static func flush(_ fd: Int32) -> Bool { fcntl(fd, F_FULLFSYNC) == 0 || fsync(fd) == 0 }
    #endif
}

#if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
/// `rename(2)`, under a name that ``FileSync/rename(_:to:)`` does not shadow.
private func systemRename(_ source: String, _ target: String) -> Int32 { rename(source, target) }
#endif
