import CStrataLMDB
import Foundation

/// A return code from an LMDB call, with the name LMDB's header gives it.
///
/// The C module is plumbing: this type never appears in public API; ``StoreError`` carries the code's
/// name and number for errors that have no more specific case.
struct LMDBStatus: Error, Hashable, CustomStringConvertible {
    let code: Int32
    /// The LMDB function that returned the code, for messages (`"mdb_put"`).
    let operation: String

    init(_ code: Int32, _ operation: String) {
        self.code = code
        self.operation = operation
    }

    static let success: Int32 = 0
    static let keyExists = MDB_KEYEXIST
    static let notFound = MDB_NOTFOUND
    static let pageNotFound = MDB_PAGE_NOTFOUND
    static let corrupted = MDB_CORRUPTED
    static let panic = MDB_PANIC
    static let versionMismatch = MDB_VERSION_MISMATCH
    static let invalid = MDB_INVALID
    static let mapFull = MDB_MAP_FULL
    static let dbsFull = MDB_DBS_FULL
    static let readersFull = MDB_READERS_FULL
    static let txnFull = MDB_TXN_FULL
    static let cursorFull = MDB_CURSOR_FULL
    static let pageFull = MDB_PAGE_FULL
    static let mapResized = MDB_MAP_RESIZED
    static let incompatible = MDB_INCOMPATIBLE
    static let badReaderSlot = MDB_BAD_RSLOT
    static let badTransaction = MDB_BAD_TXN
    static let badValueSize = MDB_BAD_VALSIZE
    static let badDBI = MDB_BAD_DBI

    /// The C name of the code (`"MDB_MAP_FULL"`, `"ENOSPC"`).
    var name: String { Self.name(of: code) }

    static func name(of code: Int32) -> String {
        switch code {
        case MDB_KEYEXIST: "MDB_KEYEXIST"
        case MDB_NOTFOUND: "MDB_NOTFOUND"
        case MDB_PAGE_NOTFOUND: "MDB_PAGE_NOTFOUND"
        case MDB_CORRUPTED: "MDB_CORRUPTED"
        case MDB_PANIC: "MDB_PANIC"
        case MDB_VERSION_MISMATCH: "MDB_VERSION_MISMATCH"
        case MDB_INVALID: "MDB_INVALID"
        case MDB_MAP_FULL: "MDB_MAP_FULL"
        case MDB_DBS_FULL: "MDB_DBS_FULL"
        case MDB_READERS_FULL: "MDB_READERS_FULL"
        case MDB_TLS_FULL: "MDB_TLS_FULL"
        case MDB_TXN_FULL: "MDB_TXN_FULL"
        case MDB_CURSOR_FULL: "MDB_CURSOR_FULL"
        case MDB_PAGE_FULL: "MDB_PAGE_FULL"
        case MDB_MAP_RESIZED: "MDB_MAP_RESIZED"
        case MDB_INCOMPATIBLE: "MDB_INCOMPATIBLE"
        case MDB_BAD_RSLOT: "MDB_BAD_RSLOT"
        case MDB_BAD_TXN: "MDB_BAD_TXN"
        case MDB_BAD_VALSIZE: "MDB_BAD_VALSIZE"
        case MDB_BAD_DBI: "MDB_BAD_DBI"
        case ENOENT: "ENOENT"
        case EACCES: "EACCES"
        case EAGAIN: "EAGAIN"
        case ENOSPC: "ENOSPC"
        case EIO: "EIO"
        case ENOMEM: "ENOMEM"
        case EINVAL: "EINVAL"
        case EROFS: "EROFS"
        case EBUSY: "EBUSY"
        case EPERM: "EPERM"
        case EDQUOT: "EDQUOT"
        case EFBIG: "EFBIG"
        default: "error \(code)"
        }
    }

    /// LMDB's own message for the code.
    var message: String { String(cString: mdb_strerror(code)) }

    var description: String { "\(operation) failed: \(name) (\(message))" }

    /// The LMDB version the process is linked against, as "0.9.24".
    static var libraryVersion: String {
        var major: Int32 = 0, minor: Int32 = 0, patch: Int32 = 0
        _ = mdb_version(&major, &minor, &patch)
        return "\(major).\(minor).\(patch)"
    }
}
