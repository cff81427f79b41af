import Foundation

/// An error from a store: opening it, reading or writing objects, or the storage underneath.
///
/// Every case's ``description`` says what happened and, where something can be done, what to do.
/// Errors never leave a store half-written: a write transaction that throws is rolled back whole.
///
/// ## Topics
/// ### Opening a store
/// - ``notFound(path:)``
/// - ``parentDirectoryMissing(path:)``
/// - ``notAStore(path:reason:)``
/// - ``corrupted(path:reason:)``
/// - ``unsupportedFormat(path:found:supported:)``
/// - ``migrationRequired(from:to:)``
/// - ``storeNewerThanModel(store:app:)``
/// - ``schemaMismatch(version:)``
/// - ``migrationInProgress(ownerPID:)``
/// - ``usedAfterFork``
/// ### Objects
/// - ``unknownEntity(_:)``
/// - ``unknownAttribute(entity:name:)``
/// - ``unknownRelationship(entity:name:)``
/// - ``invalidValue(entity:attribute:expected:actual:)``
/// - ``missingRequiredValue(entity:attribute:)``
/// - ``objectNotFound(entity:id:)``
/// - ``uniqueConstraintViolation(entity:attribute:value:existing:)``
/// - ``deleteDenied(entity:id:relationship:count:)``
/// - ``relationshipCountViolation(entity:id:relationship:count:minCount:maxCount:)``
/// - ``corruptedRecord(entity:id:reason:)``
/// ### Storage
/// - ``mapFull(mapSize:ceiling:)``
/// - ``mapGrowthBlocked(mapSize:)``
/// - ``addressSpaceExhausted(requestedMapSize:)``
/// - ``diskFull(operation:)``
/// - ``ioError(errno:operation:)``
/// - ``lmdb(code:name:operation:message:)``
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    // MARK: Opening

    /// No store exists at the path and the open did not allow creating one.
    case notFound(path: String)
    /// The directory that would hold a new store (or a backup) does not exist; nothing was created.
    case parentDirectoryMissing(path: String)
    /// The path holds something that is not a Strata store.
    case notAStore(path: String, reason: String)
    /// The store's files are damaged.
    case corrupted(path: String, reason: CorruptionReason)
    /// The store was written in a format this version of Strata cannot read.
    case unsupportedFormat(path: String, found: String, supported: String)
    /// The store was written by another model version and must be migrated first. `from` is the version
    /// identifier the store records, `to` the app's.
    case migrationRequired(from: String, to: String)
    /// The store was written by a newer model than any this app knows; nothing was written to it.
    case storeNewerThanModel(store: String, app: String)
    /// The store records a model whose version identifier the app knows, but with other version hashes:
    /// a frozen schema was changed after it shipped.
    case schemaMismatch(version: String)
    /// Another process is migrating the store.
    case migrationInProgress(ownerPID: Int32?)
    /// The store was migrated (by another handle or process) since this handle opened it: open it again.
    case modelChanged(path: String)
    /// The store was opened before `fork()` and used in the child; open it again in the child.
    case usedAfterFork
    /// The store was closed.
    case closed

    // MARK: Objects

    /// The model has no entity of that name.
    case unknownEntity(String)
    /// The entity has no attribute of that name.
    case unknownAttribute(entity: String, name: String)
    /// The entity has no relationship of that name.
    case unknownRelationship(entity: String, name: String)
    /// A value of the wrong type for an attribute.
    case invalidValue(entity: String, attribute: String, expected: String, actual: String)
    /// A value of the wrong type where another was expected.
    case typeMismatch(expected: String, actual: String)
    /// A required attribute was left null.
    case missingRequiredValue(entity: String, attribute: String)
    /// No object of the entity has that identifier.
    case objectNotFound(entity: String, id: ObjectID)
    /// Another object already has this value of a unique attribute.
    case uniqueConstraintViolation(entity: String, attribute: String, value: String, existing: ObjectID)
    /// The object cannot be deleted: a relationship with the deny rule still links it to `count` objects.
    case deleteDenied(entity: String, id: ObjectID, relationship: String, count: Int)
    /// A relationship's minimum or maximum count is not met.
    case relationshipCountViolation(entity: String, id: ObjectID, relationship: String, count: Int, minCount: Int?, maxCount: Int?)
    /// A stored record could not be decoded: its checksum does not match, or its bytes are not a record.
    case corruptedRecord(entity: String, id: ObjectID, reason: String)
    /// A key (an indexed value or a lookup key) is longer than the store can index.
    case keyTooLong(length: Int, maximum: Int)
    /// A record is larger than a store value may be.
    case valueTooLarge(size: Int, maximum: Int)

    // MARK: Transactions

    /// A write transaction was started inside another on the same thread.
    case nestedWriteTransaction
    /// A context, cursor or query was used after its transaction ended.
    case transactionEnded
    /// The store was opened read-only.
    case readOnly
    /// A single write transaction changed more pages than LMDB can hold (`MDB_TXN_FULL`).
    case transactionTooLarge

    // MARK: Storage

    /// The store reached its configured maximum size.
    case mapFull(mapSize: Int, ceiling: Int)
    /// The store is full and its map cannot grow while a read transaction of this process stays open (LMDB
    /// moves the map only when no transaction is active); the write was rolled back.
    case mapGrowthBlocked(mapSize: Int)
    /// The process's address space cannot hold a map of this size (`ENOMEM` from `mmap`: a low `ulimit -v`, or
    /// a platform that limits virtual memory). Opening already retried with smaller maps, down to the store's
    /// size; a write that needed a larger map was rolled back.
    case addressSpaceExhausted(requestedMapSize: Int)
    /// The disk is full.
    case diskFull(operation: String)
    /// The operating system reported an I/O error.
    case ioError(errno: Int32, operation: String)
    /// The process may not read or write the store's files.
    case permissionDenied(path: String)
    /// Too many readers at once (`MDB_READERS_FULL`), even after clearing readers of dead processes.
    case readersFull
    /// LMDB reported a fatal error (`MDB_PANIC`); the store must be opened again.
    case needsReopen
    /// Any other LMDB error.
    case lmdb(code: Int32, name: String, operation: String, message: String)

    public var description: String {
        switch self {
        case .notFound(let path):
            return "No store exists at \(path); open it with `create: true` (or `strata create`) to make one."
        case .parentDirectoryMissing(let path):
            return "The directory \(path) does not exist; create it first (Strata creates the store's own directory, not its parents)."
        case .notAStore(let path, let reason):
            return "\(path) is not a Strata store: \(reason)."
        case .corrupted(let path, let reason):
            return "The store at \(path) is damaged: \(reason). Restore it from a backup; `strata verify` lists what can still be read."
        case .unsupportedFormat(let path, let found, let supported):
            return "The store at \(path) has format \(found); this version of Strata reads \(supported). Update the app or the strata tool."
        case .migrationRequired(let from, let to):
            return "The store was written by model \(from) and must be migrated to \(to): open it with a migration plan, or call Store.migrate."
        case .storeNewerThanModel(let store, let app):
            return "The store was written by model \(store), newer than this app's newest model \(app); it was not changed. Update the app."
        case .schemaMismatch(let version):
            return "The store records model \(version) with other version hashes than the app's \(version): a shipped schema was changed. Restore the frozen schema, or give the changed model a new version identifier."
        case .migrationInProgress(let pid):
            return "Another process\(pid.map { " (pid \($0))" } ?? "") is migrating the store; open it again when that process is done."
        case .modelChanged(let path):
            return "The store at \(path) was migrated to another model since this handle opened it; open it again."
        case .usedAfterFork:
            return "The store was opened before fork() and cannot be used in the child process; open it again in the child."
        case .closed:
            return "The store was closed."
        case .unknownEntity(let name):
            return "The model has no entity named \(name)."
        case .unknownAttribute(let entity, let name):
            return "Entity \(entity) has no attribute named \(name)."
        case .unknownRelationship(let entity, let name):
            return "Entity \(entity) has no relationship named \(name)."
        case .invalidValue(let entity, let attribute, let expected, let actual):
            return "Attribute \(entity).\(attribute) holds \(expected) values; got \(actual)."
        case .typeMismatch(let expected, let actual):
            return "Expected a \(expected) value; got \(actual)."
        case .missingRequiredValue(let entity, let attribute):
            return "Attribute \(entity).\(attribute) is required; give it a value or a default."
        case .objectNotFound(let entity, let id):
            return "No \(entity) object has the identifier \(id)."
        case .uniqueConstraintViolation(let entity, let attribute, let value, let existing):
            return "Attribute \(entity).\(attribute) is unique and object \(existing) already has the value \(value)."
        case .deleteDenied(let entity, let id, let relationship, let count):
            return "\(entity) \(id) cannot be deleted: its relationship \(relationship) (delete rule deny) still links \(count) object\(count == 1 ? "" : "s")."
        case .relationshipCountViolation(let entity, let id, let relationship, let count, let min, let max):
            return "\(entity) \(id) has \(count) object\(count == 1 ? "" : "s") in \(relationship); the model allows \(min.map(String.init) ?? "0") to \(max.map(String.init) ?? "any number")."
        case .corruptedRecord(let entity, let id, let reason):
            return "The stored \(entity) \(id) is damaged (\(reason)); it cannot be read. `strata verify` lists every damaged record."
        case .keyTooLong(let length, let maximum):
            return "A key of \(length) bytes is longer than the \(maximum) bytes the store can index."
        case .valueTooLarge(let size, let maximum):
            return "A record of \(size) bytes is larger than the \(maximum) bytes allowed."
        case .nestedWriteTransaction:
            return "A write transaction was started inside another on the same thread; do the work in the outer transaction."
        case .transactionEnded:
            return "A context, cursor or query was used after its transaction ended; keep it inside the read or write closure."
        case .readOnly:
            return "The store was opened read-only."
        case .transactionTooLarge:
            return "One write transaction changed too many pages (MDB_TXN_FULL); split the work into smaller transactions."
        case .mapFull(let size, let ceiling):
            return "The store is full: its map of \(size) bytes reached the configured ceiling of \(ceiling) bytes. Raise StoreConfiguration.maximumMapSize."
        case .mapGrowthBlocked(let size):
            return "The store is full (its map holds \(size) bytes) and cannot grow while a read transaction of this process stays open; end long-running reads and try again, or open the store with a larger initialMapSize."
        case .addressSpaceExhausted(let size):
            return "The process cannot map \(size) bytes of address space (ENOMEM); raise its virtual memory limit (ulimit -v) or free address space, and try again. Committed work is intact."
        case .diskFull(let operation):
            return "The disk is full (\(operation)); free space and try again. Committed work is intact."
        case .ioError(let code, let operation):
            return "An I/O error occurred (\(operation): \(LMDBStatus.name(of: code))). Committed work is intact; check the disk."
        case .permissionDenied(let path):
            return "Permission denied for \(path); the process needs read and write access to the store's directory."
        case .readersFull:
            return "Too many concurrent readers (MDB_READERS_FULL); raise StoreConfiguration.maximumReaders."
        case .needsReopen:
            return "LMDB reported a fatal error (MDB_PANIC); close the store and open it again."
        case .lmdb(_, let name, let operation, let message):
            return "\(operation) failed with \(name): \(message)."
        }
    }
}

/// What is wrong with a damaged store's files.
public enum CorruptionReason: Sendable, Hashable, CustomStringConvertible {
    /// `data.mdb` is empty, although the store exists (LMDB would silently start a new store).
    case emptyDataFile
    /// `data.mdb` is missing next to `lock.mdb`.
    case missingDataFile
    /// `data.mdb` is shorter than its header says.
    case truncated(expectedBytes: Int, actualBytes: Int)
    /// A header (meta) page is damaged.
    case invalidHeader
    /// Strata's metadata inside the store is damaged.
    case metadata(String)
    /// LMDB found a damaged page (`MDB_CORRUPTED`, `MDB_PAGE_NOTFOUND`).
    case structure(String)

    public var description: String {
        switch self {
        case .emptyDataFile: "data.mdb is empty (0 bytes)"
        case .missingDataFile: "data.mdb is missing"
        case .truncated(let expected, let actual): "data.mdb has \(actual) bytes but its header needs \(expected)"
        case .invalidHeader: "a header page of data.mdb is damaged"
        case .metadata(let what): "its metadata is damaged (\(what))"
        case .structure(let what): "a page of data.mdb is damaged (\(what))"
        }
    }
}
