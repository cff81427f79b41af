import CStrataLMDB
import Foundation

extension StoreError {
    /// The public error for an LMDB return code.
    static func from(lmdb code: Int32, operation: String, path: String, mapSize: Int = 0, ceiling: Int = 0) -> StoreError {
        switch code {
        case MDB_MAP_FULL: return .mapFull(mapSize: mapSize, ceiling: ceiling)
        case ENOMEM: return .addressSpaceExhausted(requestedMapSize: mapSize)
        case MDB_TXN_FULL: return .transactionTooLarge
        case ENOSPC, EDQUOT, EFBIG: return .diskFull(operation: operation)
        case EIO: return .ioError(errno: code, operation: operation)
        case MDB_READERS_FULL: return .readersFull
        case MDB_PANIC: return .needsReopen
        case MDB_CORRUPTED, MDB_PAGE_NOTFOUND:
            return .corrupted(path: path, reason: .structure("\(operation): \(LMDBStatus.name(of: code))"))
        case MDB_INVALID: return .corrupted(path: path, reason: .invalidHeader)
        case MDB_VERSION_MISMATCH:
            return .unsupportedFormat(path: path, found: "an LMDB data or lock format other than 0.9's",
                                      supported: "LMDB 0.9 (\(LMDBStatus.libraryVersion))")
        case EACCES, EPERM, EROFS: return .permissionDenied(path: path)
        default:
            let status = LMDBStatus(code, operation)
            return .lmdb(code: code, name: status.name, operation: operation, message: status.message)
        }
    }
}
