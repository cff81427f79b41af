#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
import Foundation
#endif

/// A failed system call: its `errno` and what was being done. The platform layer's one error type; the
/// rest of the library maps it to a ``StoreError`` with the predicates below, never by comparing raw codes.
struct SystemCallError: Error, Sendable {
    let errno: Int32
    let operation: String

    /// The error of the call that just failed on this thread (its `errno`).
    static func last(_ operation: String) -> SystemCallError {
        SystemCallError(errno: currentErrno, operation: operation)
    }

    /// Whether the call failed for lack of permission (`EACCES`, `EPERM`, or a read-only file system).
    var isPermissionDenied: Bool { errno == EACCES || errno == EPERM || errno == EROFS }

    /// Whether the file or directory does not exist (`ENOENT`).
    var isNotFound: Bool { errno == ENOENT }

    /// Whether a rename failed because its target exists and is not an empty directory.
    var isTargetNotEmpty: Bool { errno == ENOTEMPTY || errno == EEXIST }

    /// Whether the call was interrupted by a signal (and should be made again).
    var isInterrupted: Bool { errno == EINTR }
}

/// The calling thread's `errno`.
var currentErrno: Int32 {
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
    return errno
    #else
    return 0
    #endif
}
