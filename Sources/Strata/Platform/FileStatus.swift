#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
import Foundation
#endif

/// What `stat(2)` says of a path: its kind, size and identity (device and inode). `stat` and `lstat` are
/// the same POSIX calls on Linux and Darwin (only the width of `st_mode` differs, which the masks absorb); the
/// fallback asks Foundation.
struct FileStatus: Sendable, Equatable {
    enum Kind: Sendable, Equatable { case regular, directory, symbolicLink, other }

    let kind: Kind
    let size: Int
    let device: UInt64
    let inode: UInt64

    /// The status of `path`, following a symbolic link unless `followingLinks` is false.
    static func of(_ path: String, followingLinks: Bool = true) throws(SystemCallError) -> FileStatus {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        var st = stat()
        let rc = followingLinks ? stat(path, &st) : lstat(path, &st)
        guard rc == 0 else { throw SystemCallError.last(followingLinks ? "stat \(path)" : "lstat \(path)") }
        let kind: Kind
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symbolicLink
        default: kind = .other
        }
        return FileStatus(kind: kind, size: Int(st.st_size), device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
        #else
        do {
            let attributes = followingLinks
                ? try FileManager.default.attributesOfItem(atPath: (path as NSString).resolvingSymlinksInPath)
                : try FileManager.default.attributesOfItem(atPath: path)
            let type = attributes[.type] as? FileAttributeType
            let kind: Kind = type == .typeRegular ? .regular : type == .typeDirectory ? .directory
                : type == .typeSymbolicLink ? .symbolicLink : .other
            return FileStatus(kind: kind, size: (attributes[.size] as? Int) ?? 0,
                              device: UInt64((attributes[.systemNumber] as? Int) ?? 0),
                              inode: UInt64((attributes[.systemFileNumber] as? Int) ?? 0))
        } catch {
            throw SystemCallError(errno: ENOENT, operation: "stat \(path)")
        }
        #endif
    }
}
