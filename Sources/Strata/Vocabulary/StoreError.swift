import Foundation

/// An error from a store: opening it, reading or writing objects, or the storage underneath.
///
/// A `StoreError` is a ``code`` (what kind of failure, to branch on), a ``description`` that says what
/// happened and what to do next, and the details that apply (``path``, ``entity``, ``attribute``,
/// ``objectID``, …). New codes can be added in any release without breaking a `switch`: switch over
/// ``code`` with a `default` case, as with swift-system's `Errno`.
///
/// ```swift
/// do {
///     try store.write { try $0.insert("User", ["email": "a@example.com"]) }
/// } catch let error as StoreError where error.code == .uniqueConstraintViolation {
///     print("taken by \(error.existingObjectID!)")
/// }
/// ```
///
/// Errors never leave a store half-written: a write transaction that throws is rolled back whole.
///
/// ## Topics
/// ### What failed
/// - ``code``
/// - ``Code``
/// - ``description``
/// ### Details
/// - ``path``
/// - ``entity``
/// - ``attribute``
/// - ``relationship``
/// - ``objectID``
/// - ``existingObjectID``
/// - ``storeVersion``
/// - ``modelVersion``
/// - ``processID``
/// - ``reason``
/// - ``corruption``
/// - ``systemError``
/// - ``lmdbCode``
/// - ``operation``
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure an error is. Compare with the static members (`error.code == .notFound`); a
    /// `switch` over codes needs a `default` case, since later releases may add codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as in `StoreError.Code.notFound` (`"notFound"`).
        public let name: String
        init(_ name: String) { self.name = name }
        public var description: String { name }

        // Opening a store
        /// No store exists at the path and the open did not allow creating one.
        public static let notFound = Code("notFound")
        /// The directory that would hold a new store (or a backup) does not exist.
        public static let parentDirectoryMissing = Code("parentDirectoryMissing")
        /// The path holds something that is not a Strata store.
        public static let notAStore = Code("notAStore")
        /// The store's files are damaged (see ``StoreError/corruption``).
        public static let corrupted = Code("corrupted")
        /// The store was written in a format this version of Strata cannot read.
        public static let unsupportedFormat = Code("unsupportedFormat")
        /// The store was written by another model version and must be migrated first.
        public static let migrationRequired = Code("migrationRequired")
        /// The store was written by a newer model than any this app knows.
        public static let storeNewerThanModel = Code("storeNewerThanModel")
        /// The store records a version identifier the app knows, with other version hashes.
        public static let schemaMismatch = Code("schemaMismatch")
        /// Another process (or handle) is migrating the store.
        public static let migrationInProgress = Code("migrationInProgress")
        /// The store was migrated since this handle opened it.
        public static let modelChanged = Code("modelChanged")
        /// The store was opened before `fork()` and used in the child.
        public static let usedAfterFork = Code("usedAfterFork")
        /// The handle was closed.
        public static let closed = Code("closed")
        /// The store is suspended (``Store/suspend()``): resume it first.
        public static let suspended = Code("suspended")
        /// ``Store/suspend()`` could not close the store: a transaction of this process stayed open.
        public static let suspendBlocked = Code("suspendBlocked")
        /// The store is encrypted and was opened without ``StoreConfiguration/encryption``.
        public static let encryptionKeyRequired = Code("encryptionKeyRequired")
        /// The store is encrypted with another key than the one it was opened with.
        public static let wrongEncryptionKey = Code("wrongEncryptionKey")
        /// The store is not encrypted and was opened with a key.
        public static let storeNotEncrypted = Code("storeNotEncrypted")
        /// The key given is not 256 bits long.
        public static let invalidEncryptionKey = Code("invalidEncryptionKey")
        /// A rotation of the store's key, or its encryption or decryption, was asked for while one of them runs.
        public static let keyRotationInProgress = Code("keyRotationInProgress")
        /// ``Store/encrypt(at:with:configuration:)`` was asked for a store that is encrypted already.
        public static let storeAlreadyEncrypted = Code("storeAlreadyEncrypted")

        // Objects
        /// The model has no entity of that name.
        public static let unknownEntity = Code("unknownEntity")
        /// The entity has no attribute of that name.
        public static let unknownAttribute = Code("unknownAttribute")
        /// The entity has no relationship of that name.
        public static let unknownRelationship = Code("unknownRelationship")
        /// A value of the wrong type for an attribute.
        public static let invalidValue = Code("invalidValue")
        /// A value of the wrong kind where another was expected.
        public static let typeMismatch = Code("typeMismatch")
        /// A required attribute was left null.
        public static let missingRequiredValue = Code("missingRequiredValue")
        /// No object of the entity has that identifier.
        public static let objectNotFound = Code("objectNotFound")
        /// Another object already has this value of a unique attribute.
        public static let uniqueConstraintViolation = Code("uniqueConstraintViolation")
        /// A relationship with the deny rule still links the object.
        public static let deleteDenied = Code("deleteDenied")
        /// A relationship's minimum or maximum count is not met.
        public static let relationshipCountViolation = Code("relationshipCountViolation")
        /// A stored record could not be decoded.
        public static let corruptedRecord = Code("corruptedRecord")
        /// A key (an indexed value or a lookup key) is longer than the store can index.
        public static let keyTooLong = Code("keyTooLong")
        /// A declared entity mapping of a custom stage names something the stage's models do not have, or that
        /// does not fit (a type, a relationship's cardinality): the store is left untouched.
        public static let invalidEntityMapping = Code("invalidEntityMapping")
        /// A record is larger than a store value may be.
        public static let valueTooLarge = Code("valueTooLarge")

        // Transactions
        /// A write transaction was started inside another on the same thread.
        public static let nestedWriteTransaction = Code("nestedWriteTransaction")
        /// A context, cursor or query was used after its transaction ended.
        public static let transactionEnded = Code("transactionEnded")
        /// The store was opened read-only.
        public static let readOnly = Code("readOnly")
        /// One write transaction changed more pages than LMDB can hold (`MDB_TXN_FULL`).
        public static let transactionTooLarge = Code("transactionTooLarge")

        // Storage
        /// The store reached its configured maximum size.
        public static let mapFull = Code("mapFull")
        /// The map cannot grow while a read transaction of this process stays open.
        public static let mapGrowthBlocked = Code("mapGrowthBlocked")
        /// The process's address space cannot hold a map of the size needed.
        public static let addressSpaceExhausted = Code("addressSpaceExhausted")
        /// The disk is full.
        public static let diskFull = Code("diskFull")
        /// The operating system reported an I/O error.
        public static let ioError = Code("ioError")
        /// The process may not read or write the store's files.
        public static let permissionDenied = Code("permissionDenied")
        /// Too many readers at once (`MDB_READERS_FULL`).
        public static let readersFull = Code("readersFull")
        /// LMDB reported a fatal error (`MDB_PANIC`); the store must be opened again.
        public static let needsReopen = Code("needsReopen")
        /// Any other LMDB error (see ``StoreError/lmdbCode``).
        public static let lmdb = Code("lmdb")
        /// Strata reached a state its own code rules out: a bug in Strata, not damage to the store.
        public static let internalInconsistency = Code("internalInconsistency")

        // Change history
        /// The store keeps no change history (see ``StoreConfiguration/history``).
        public static let historyDisabled = Code("historyDisabled")
        /// The history after a token is no longer kept (pruned by retention or ``Store/deleteHistory(before:)``):
        /// resynchronize fully.
        public static let historyExpired = Code("historyExpired")
        /// A history token's text is damaged, truncated or not a token.
        public static let historyTokenInvalid = Code("historyTokenInvalid")
        /// A history token was made by another store (or by this store before it was deleted and created again).
        public static let historyTokenFromOtherStore = Code("historyTokenFromOtherStore")
        /// A history token names transactions this store does not have as the token saw them: the store was
        /// replaced by an older copy (a restored backup) since. Resynchronize fully.
        public static let historyDiverged = Code("historyDiverged")
        /// A history entry is damaged (its checksum does not match, or its bytes are not an entry).
        public static let corruptedHistory = Code("corruptedHistory")

        /// Whether the code is a failure of the environment (disk, memory, the map, LMDB) rather than of the
        /// request: retrying later, or after fixing the machine, can succeed with the same input.
        public var isEnvironmental: Bool {
            switch self {
            case .diskFull, .ioError, .mapFull, .mapGrowthBlocked, .addressSpaceExhausted, .readersFull, .needsReopen,
                 .lmdb, .transactionTooLarge, .closed, .usedAfterFork, .permissionDenied, .corrupted, .corruptedHistory:
                true
            default:
                false
            }
        }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What happened and, where something can be done, what to do.
    public internal(set) var description: String

    /// The store's (or another file's) path, when the error concerns one.
    public internal(set) var path: String? = nil
    /// The entity concerned.
    public internal(set) var entity: String? = nil
    /// The attribute concerned (or, for ``Code-swift.struct/typeMismatch``, what was expected).
    public internal(set) var attribute: String? = nil
    /// The relationship concerned.
    public internal(set) var relationship: String? = nil
    /// The object concerned.
    public internal(set) var objectID: ObjectID? = nil
    /// For ``Code-swift.struct/uniqueConstraintViolation``: the object that already has the value.
    public internal(set) var existingObjectID: ObjectID? = nil
    /// The model version the store records (migration-related codes).
    public internal(set) var storeVersion: String? = nil
    /// The app's model version (migration-related codes).
    public internal(set) var modelVersion: String? = nil
    /// The process concerned (``Code-swift.struct/migrationInProgress``: the one migrating, when known).
    public internal(set) var processID: Int32? = nil
    /// Why a record or a file could not be read (``Code-swift.struct/corruptedRecord``,
    /// ``Code-swift.struct/notAStore``).
    public internal(set) var reason: String? = nil
    /// What is damaged, for ``Code-swift.struct/corrupted``.
    public internal(set) var corruption: CorruptionReason? = nil
    /// The `errno` of a system call, for I/O errors.
    public internal(set) var systemError: Int32? = nil
    /// LMDB's return code, for errors LMDB reported.
    public internal(set) var lmdbCode: Int32? = nil
    /// The operation that failed (`mdb_txn_commit`, `fsync the backup copy`, …).
    public internal(set) var operation: String? = nil

    init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    /// The error, naming the object it concerns.
    func about(_ id: ObjectID) -> StoreError { with { $0.objectID = id } }

    /// The error of an open that refused after it had recovered the store (rolled back an interrupted step):
    /// the message says what was written (`recovery`) instead of claiming nothing was.
    func afterRecovery(_ recovery: String) -> StoreError {
        with { error in
            let claim = "nothing was written to it"
            error.description = error.description.contains(claim)
                ? error.description.replacingOccurrences(of: claim, with: "\(recovery), and nothing else was written to it")
                : error.description + " (Before refusing, the open \(recovery).)"
        }
    }

    private func with(_ change: (inout StoreError) -> Void) -> StoreError {
        var copy = self
        change(&copy)
        return copy
    }

    // MARK: Opening

    /// No store exists at the path and the open did not allow creating one.
    public static func notFound(path: String) -> StoreError {
        StoreError(.notFound, "No store exists at \(path); open it with createIfMissing (the default), or make one with `strata create`.")
            .with { $0.path = path }
    }

    /// The directory that would hold a new store (or a backup) does not exist; nothing was created.
    public static func parentDirectoryMissing(path: String) -> StoreError {
        StoreError(.parentDirectoryMissing, "The directory \(path) does not exist; create it first (Strata creates the store's own directory, not its parents).")
            .with { $0.path = path }
    }

    /// The path holds something that is not a Strata store.
    public static func notAStore(path: String, reason: String) -> StoreError {
        StoreError(.notAStore, "\(path) is not a Strata store: \(reason); check the path.").with { $0.path = path; $0.reason = reason }
    }

    /// The store's files are damaged.
    public static func corrupted(path: String, reason: CorruptionReason) -> StoreError {
        StoreError(.corrupted, "The store at \(path) is damaged: \(reason); nothing was written to it. Restore it from a backup; `strata verify` lists what can still be read.")
            .with { $0.path = path; $0.corruption = reason }
    }

    /// The store was written in a format this version of Strata cannot read.
    public static func unsupportedFormat(path: String, found: String, supported: String) -> StoreError {
        StoreError(.unsupportedFormat, "The store at \(path) has format \(found); this version of Strata reads \(supported); nothing was written to it. Update the app or the strata tool.")
            .with { $0.path = path }
    }

    /// The store was written by model `from` and must be migrated to the app's model `to`.
    public static func migrationRequired(from: String, to: String) -> StoreError {
        StoreError(.migrationRequired, "The store was written by model \(from) and must be migrated to \(to); nothing was written to it. Open it with a migration plan, or call Store.migrate.")
            .with { $0.storeVersion = from; $0.modelVersion = to }
    }

    /// The store is at model `store`: its migration from `from` switched, but the custom stage's `didMigrate`
    /// has not completed, and this app (model `app`) cannot run it (it lacks the stage, or does not migrate at
    /// open). Code ``Code-swift.struct/migrationRequired``.
    static func didMigratePending(store: String, from: String, app: String) -> StoreError {
        StoreError(.migrationRequired, "The store is at model \(store) — its migration from \(from) switched, but the custom stage's didMigrate has not completed — and this app's model is \(app); nothing was written to it. Open it with a plan that has the \(from) → \(store) stage and migrates at open (or call Store.migrate) to run didMigrate again.")
            .with { $0.storeVersion = store; $0.modelVersion = app }
    }

    /// The store was written by a newer model than any this app knows; nothing was written to it.
    public static func storeNewerThanModel(store: String, app: String) -> StoreError {
        StoreError(.storeNewerThanModel, "The store is at model \(store), newer than this app's newest model \(app); nothing was written to it. Update the app (or give the tool the model of \(store) or later).")
            .with { $0.storeVersion = store; $0.modelVersion = app }
    }

    /// The store is newer and the changes since the app's model are not all additive (see the Migrations
    /// article, "Opening a newer store").
    static func storeNewerThanModel(store: String, app: String, notAdditive reason: String) -> StoreError {
        StoreError(.storeNewerThanModel, "The store is at model \(store), newer than this app's newest model \(app), and \(app) cannot open it as it is: \(reason); nothing was written to it. Update the app (or give the tool the model of \(store) or later).")
            .with { $0.storeVersion = store; $0.modelVersion = app }
    }

    /// The store records a model whose version identifier the app knows, with other version hashes: a frozen
    /// schema was changed after it shipped.
    public static func schemaMismatch(version: String) -> StoreError {
        StoreError(.schemaMismatch, "The store records model \(version) with other version hashes than the app's \(version): a shipped schema was changed; nothing was written to it. Restore the frozen schema, or give the changed model a new version identifier.")
            .with { $0.storeVersion = version; $0.modelVersion = version }
    }

    /// Another process (or handle) is migrating the store.
    public static func migrationInProgress(ownerPID: Int32?) -> StoreError {
        StoreError(.migrationInProgress, "Another process\(ownerPID.map { " (pid \($0))" } ?? "") is migrating the store; try again when it is done (`strata info` shows its progress).")
            .with { $0.processID = ownerPID }
    }

    /// Another process (or handle) is migrating the store: from `source` to `destination` when its journal says
    /// (the store reads as `source` until the step switches), and this app's model is `app`. For a read-only
    /// handle, which cannot tell a running step from an interrupted one (it takes no lock), `readOnly` says both.
    static func migrationInProgress(ownerPID: Int32?, source: String, destination: String?, app: String,
                                    readOnly: Bool = false) -> StoreError {
        let step = destination.map { "from model \(source) to \($0) (the store reads as \(source) until the step switches)" }
            ?? "(the store is at model \(source))"
        let description = readOnly
            ? "A migration of the store \(step) is running in another process or was interrupted; this read-only handle of model \(app) cannot open it until the step completes; nothing was written to it. Wait for the process migrating it, or open the store for writing with the plan to resume the step."
            : "\(ownerPID == CurrentProcess.id ? "Another handle of this process" : "Another process\(ownerPID.map { " (pid \($0))" } ?? "")") is migrating the store \(step); this app's model is \(app); nothing was written to it. Try again when it is done (`strata info` shows its progress)."
        return StoreError(.migrationInProgress, description)
            .with { $0.processID = ownerPID; $0.storeVersion = source; $0.modelVersion = app }
    }

    /// The store was migrated (by another handle or process) since this handle opened it: open it again.
    public static func modelChanged(path: String) -> StoreError {
        StoreError(.modelChanged, "The store at \(path) was migrated to another model since this handle opened it; open it again.")
            .with { $0.path = path }
    }

    /// The store was migrated to `store` (or is being migrated, `migrating`) since this handle opened it with
    /// the model `handle`: open it again (with `store`'s model, or a plan that leads there).
    static func modelChanged(path: String, store: String, handle: String, migrating: Bool) -> StoreError {
        let now = migrating ? "is being migrated (it reads as model \(store) until the step switches)" : "is now at model \(store)"
        return StoreError(.modelChanged, "The store at \(path) \(now); this handle opened it with model \(handle) and can no longer use it. Open it again.")
            .with { $0.path = path; $0.storeVersion = store; $0.modelVersion = handle }
    }

    /// The store was opened before `fork()` and used in the child; open it again in the child.
    public static let usedAfterFork = StoreError(.usedAfterFork, "The store was opened before fork() and cannot be used in the child process; open it again in the child.")

    /// The handle was closed.
    public static let closed = StoreError(.closed, "The store was closed; open it again to use it.")

    /// The store is suspended: its files are closed until ``Store/resume()``.
    public static func suspended(path: String) -> StoreError {
        StoreError(.suspended, "The store at \(path) is suspended (its files are closed while the app is in the background); call resume() first.")
            .with { $0.path = path }
    }

    /// A read or write of this process stayed open while the store was being suspended; the store keeps running.
    public static func suspendBlocked(path: String) -> StoreError {
        StoreError(.suspendBlocked, "The store at \(path) could not be suspended: a read or write of this process stayed open for more than a second; end it (keep transactions short) and suspend again.")
            .with { $0.path = path }
    }

    /// The store at `path` is encrypted and was opened without a key.
    public static func encryptionKeyRequired(path: String) -> StoreError {
        StoreError(.encryptionKeyRequired, "The store at \(path) is encrypted; nothing was read or written. Open it with its key in `StoreConfiguration.encryption` (`strata --key-file`).")
            .with { $0.path = path }
    }

    /// The store at `path` is being rotated to a new key, and was opened without the key of the values the rotation
    /// has not reached (or without the new key).
    public static func encryptionKeyRequiredDuringRotation(path: String) -> StoreError {
        StoreError(.encryptionKeyRequired, "The store at \(path) is being rotated to a new key; nothing was read or written. Until maintenanceStatus() says the rotation is done, open it with both keys: StoreEncryption(key: newKey, previousKeys: [oldKey]).")
            .with { $0.path = path }
    }

    /// The store at `path` is being decrypted, and was opened without the key of the values the sweep has not
    /// reached.
    public static func encryptionKeyRequiredDuringDecryption(path: String) -> StoreError {
        StoreError(.encryptionKeyRequired, "The store at \(path) is being decrypted; nothing was read or written. Until maintenanceStatus() says the decryption is done, open it with its key: StoreEncryption(key: key); afterwards without one.")
            .with { $0.path = path }
    }

    /// The store at `path` is encrypted with another key.
    public static func wrongEncryptionKey(path: String) -> StoreError {
        StoreError(.wrongEncryptionKey, "The store at \(path) is encrypted with another key; nothing was read or written. Open it with the key it was created with.")
            .with { $0.path = path }
    }

    /// The store at `path` is not encrypted, and was opened with a key.
    public static func storeNotEncrypted(path: String) -> StoreError {
        StoreError(.storeNotEncrypted, "The store at \(path) is not encrypted; nothing was written. Open it without `StoreConfiguration.encryption` (an existing store is not encrypted by opening it with a key).")
            .with { $0.path = path }
    }

    /// A rotation of the key of the store at `path` was asked for while one runs.
    public static func keyRotationInProgress(path: String) -> StoreError {
        StoreError(.keyRotationInProgress, "The key of the store at \(path) is already being rotated; nothing was written. Let the rotation finish (maintenanceStatus(), performMaintenance()) before rotating again.")
            .with { $0.path = path }
    }

    /// A key change (a rotation, encrypting, decrypting) of the store at `path` was asked for while `running` (one
    /// of them) runs.
    public static func keyChangeInProgress(path: String, running: String) -> StoreError {
        StoreError(.keyRotationInProgress, "The store at \(path) is \(running); nothing was written. Let it finish (maintenanceStatus(), performMaintenance()) before encrypting, decrypting or rotating its key.")
            .with { $0.path = path }
    }

    /// ``Store/encrypt(at:with:configuration:)`` was asked for the store at `path`, which is encrypted already.
    public static func storeAlreadyEncrypted(path: String) -> StoreError {
        StoreError(.storeAlreadyEncrypted, "The store at \(path) is encrypted already; nothing was written. Rotate its key with Store.rotateEncryptionKey(at:to:configuration:) (`strata rotate-key`), or decrypt it first.")
            .with { $0.path = path }
    }

    /// The key given is not 256 bits long.
    public static func invalidEncryptionKey(bits: Int) -> StoreError {
        StoreError(.invalidEncryptionKey, "The encryption key has \(bits) bits; Strata needs a 256-bit key (`SymmetricKey(size: .bits256)`).")
    }

    // MARK: Objects

    /// The model has no entity of that name.
    public static func unknownEntity(_ name: String) -> StoreError {
        StoreError(.unknownEntity, "The model has no entity named \(name).").with { $0.entity = name }
    }

    /// The entity has no attribute of that name.
    public static func unknownAttribute(entity: String, name: String) -> StoreError {
        StoreError(.unknownAttribute, "Entity \(entity) has no attribute named \(name).").with { $0.entity = entity; $0.attribute = name }
    }

    /// The entity has no relationship of that name.
    public static func unknownRelationship(entity: String, name: String) -> StoreError {
        StoreError(.unknownRelationship, "Entity \(entity) has no relationship named \(name).").with { $0.entity = entity; $0.relationship = name }
    }

    /// A value of the wrong type for an attribute.
    public static func invalidValue(entity: String, attribute: String, expected: String, actual: String) -> StoreError {
        StoreError(.invalidValue, "Attribute \(entity).\(attribute) holds \(expected) values; got \(actual).").with { $0.entity = entity; $0.attribute = attribute }
    }

    /// A value of the wrong kind where another was expected.
    public static func typeMismatch(expected: String, actual: String) -> StoreError {
        StoreError(.typeMismatch, "Expected \(expected); got \(actual).")
    }

    /// A required attribute was left null.
    public static func missingRequiredValue(entity: String, attribute: String) -> StoreError {
        StoreError(.missingRequiredValue, "Attribute \(entity).\(attribute) is required; give it a value or a default.").with { $0.entity = entity; $0.attribute = attribute }
    }

    /// No object of the entity has that identifier.
    public static func objectNotFound(entity: String, id: ObjectID) -> StoreError {
        StoreError(.objectNotFound, "No \(entity) object has the identifier \(id).").with { $0.entity = entity; $0.objectID = id }
    }

    /// Another object already has this value of a unique attribute.
    public static func uniqueConstraintViolation(entity: String, attribute: String, value: String, existing: ObjectID) -> StoreError {
        StoreError(.uniqueConstraintViolation, "Attribute \(entity).\(attribute) is unique and object \(existing) already has the value \(value).")
            .with { $0.entity = entity; $0.attribute = attribute; $0.existingObjectID = existing }
    }

    /// The object cannot be deleted: a relationship with the deny rule still links it to `count` objects.
    public static func deleteDenied(entity: String, id: ObjectID, relationship: String, count: Int) -> StoreError {
        StoreError(.deleteDenied, "\(entity) \(id) cannot be deleted: its relationship \(relationship) (delete rule deny) still links \(count) object\(count == 1 ? "" : "s").")
            .with { $0.entity = entity; $0.objectID = id; $0.relationship = relationship }
    }

    /// A relationship's minimum or maximum count is not met.
    public static func relationshipCountViolation(entity: String, id: ObjectID, relationship: String, count: Int, minCount: Int?, maxCount: Int?) -> StoreError {
        StoreError(.relationshipCountViolation, "\(entity) \(id) has \(count) object\(count == 1 ? "" : "s") in \(relationship); the model allows \(minCount.map(String.init) ?? "0") to \(maxCount.map(String.init) ?? "any number").")
            .with { $0.entity = entity; $0.objectID = id; $0.relationship = relationship }
    }

    /// A stored record could not be decoded: its checksum does not match, or its bytes are not a record.
    public static func corruptedRecord(entity: String, id: ObjectID, reason: String) -> StoreError {
        StoreError(.corruptedRecord, "The stored \(entity) \(id) is damaged (\(reason)); it cannot be read. `strata verify` lists every damaged record.")
            .with { $0.entity = entity; $0.objectID = id; $0.reason = reason }
    }

    /// A declared entity mapping of the custom stage `source` → `destination`, for source entity `mapping`, does not
    /// fit the stage's models; `problem` says what is wrong.
    public static func invalidEntityMapping(stage source: String, _ destination: String, mapping: String, problem: String,
                                            entity: String? = nil, attribute: String? = nil, relationship: String? = nil) -> StoreError {
        StoreError(.invalidEntityMapping,
                   "The declared mapping of \(mapping) in the custom stage \(source) → \(destination) is invalid: \(problem). Fix the stage; the store was not changed.")
            .with { $0.entity = entity; $0.attribute = attribute; $0.relationship = relationship; $0.reason = problem }
    }

    /// A key (an indexed value or a lookup key) is longer than the store can index.
    public static func keyTooLong(length: Int, maximum: Int) -> StoreError {
        StoreError(.keyTooLong, "A key of \(length) bytes is longer than the \(maximum) bytes the store can index.")
    }

    /// A record is larger than a store value may be.
    public static func valueTooLarge(size: Int, maximum: Int) -> StoreError {
        StoreError(.valueTooLarge, "A record of \(size) bytes is larger than the \(maximum) bytes allowed.")
    }

    // MARK: Transactions

    /// A write transaction was started inside another on the same thread.
    public static let nestedWriteTransaction = StoreError(.nestedWriteTransaction, "A write transaction was started inside another on the same thread; do the work in the outer transaction.")
    /// A context, cursor or query was used after its transaction ended.
    public static let transactionEnded = StoreError(.transactionEnded, "A context, cursor or query was used after its transaction ended; keep it inside the read or write closure.")
    /// The store was opened read-only.
    public static let readOnly = StoreError(.readOnly, "The store was opened read-only; open it without `readOnly` to write or migrate.")
    /// A single write transaction changed more pages than LMDB can hold (`MDB_TXN_FULL`).
    public static let transactionTooLarge = StoreError(.transactionTooLarge, "One write transaction changed too many pages (MDB_TXN_FULL); split the work into smaller transactions.")

    // MARK: Storage

    /// The store reached its configured maximum size.
    public static func mapFull(mapSize: Int, ceiling: Int) -> StoreError {
        StoreError(.mapFull, "The store is full: its map of \(mapSize) bytes reached the configured ceiling of \(ceiling) bytes; the write was rolled back. Raise StoreConfiguration.maximumMapSize.")
    }

    /// The store is full and its map cannot grow while a read transaction of this process stays open.
    public static func mapGrowthBlocked(mapSize: Int) -> StoreError {
        StoreError(.mapGrowthBlocked, "The store is full (its map holds \(mapSize) bytes) and cannot grow while a read transaction of this process stays open; the write was rolled back. End long-running reads and try again, or open the store with a larger initialMapSize.")
    }

    /// The process's address space cannot hold a map of this size (`ENOMEM` from `mmap`).
    public static func addressSpaceExhausted(requestedMapSize: Int) -> StoreError {
        StoreError(.addressSpaceExhausted, "The process cannot map \(requestedMapSize) bytes of address space (ENOMEM); raise its virtual memory limit (ulimit -v) or free address space, and try again. Committed work is intact.")
    }

    /// The disk is full.
    public static func diskFull(operation: String) -> StoreError {
        StoreError(.diskFull, "The disk is full (\(operation)); free space and try again. Committed work is intact.")
            .with { $0.operation = operation; $0.systemError = ENOSPC }
    }

    /// The operating system reported an I/O error.
    public static func ioError(errno code: Int32, operation: String) -> StoreError {
        StoreError(.ioError, "An I/O error occurred (\(operation): \(LMDBStatus.name(of: code))). Committed work is intact; check the disk.")
            .with { $0.operation = operation; $0.systemError = code }
    }

    /// The process may not read or write the store's files.
    public static func permissionDenied(path: String) -> StoreError {
        StoreError(.permissionDenied, "Permission denied for \(path); the process needs read and write access to the store's directory.")
            .with { $0.path = path }
    }

    /// Too many readers at once (`MDB_READERS_FULL`), even after clearing readers of dead processes.
    public static let readersFull = StoreError(.readersFull, "Too many concurrent readers (MDB_READERS_FULL); raise StoreConfiguration.maximumReaders.")

    /// LMDB reported a fatal error (`MDB_PANIC`); the store must be opened again.
    public static let needsReopen = StoreError(.needsReopen, "LMDB reported a fatal error (MDB_PANIC); close the store and open it again.")

    /// Strata reached a state its own code rules out (`what`): a bug in Strata, not damage to the store. The
    /// transaction that found it was rolled back; the store is as its last commit left it.
    public static func internalInconsistency(_ what: String) -> StoreError {
        StoreError(.internalInconsistency, "Strata reached an inconsistent state (\(what)); the transaction that found it was rolled back and the store is as its last commit left it. This is a bug in Strata: please report it with the output of `strata info` and `strata plan` for the store.")
            .with { $0.reason = what }
    }

    // MARK: Change history

    /// The store keeps no change history; nothing was read or written.
    public static func historyDisabled(path: String) -> StoreError {
        StoreError(.historyDisabled, "The store at \(path) keeps no change history; open it once with StoreConfiguration.history = .enabled(…) to turn history on (it records transactions from then on).")
            .with { $0.path = path }
    }

    /// The history after the token is no longer kept; nothing was read.
    public static func historyExpired(path: String, reason: String) -> StoreError {
        StoreError(.historyExpired, "The change history of \(path) no longer holds the transactions after this token (\(reason)); nothing was read. Resynchronize fully: read the objects and ReadContext.historyToken() in one read, then follow the history from that token.")
            .with { $0.path = path; $0.reason = reason }
    }

    /// The text is not a history token (damaged, truncated, or made by something else); nothing was read.
    public static func historyTokenInvalid(reason: String) -> StoreError {
        StoreError(.historyTokenInvalid, "The history token is damaged or not a token (\(reason)); nothing was read. Save tokens exactly as HistoryToken.description or Codable writes them; without a valid token, resynchronize fully.")
            .with { $0.reason = reason }
    }

    /// The token was made by another store; nothing was read.
    public static func historyTokenFromOtherStore(path: String, tokenStore: String, store: String) -> StoreError {
        StoreError(.historyTokenFromOtherStore, "The history token was made by store \(tokenStore), not by the store at \(path) (\(store)); nothing was read. A store deleted and created again is another store: resynchronize fully.")
            .with { $0.path = path; $0.reason = "token of store \(tokenStore), store \(store)" }
    }

    /// The token names transactions this store no longer has as they were; nothing was read.
    public static func historyDiverged(path: String, reason: String) -> StoreError {
        StoreError(.historyDiverged, "The change history of \(path) does not continue the history this token was taken from (\(reason)): the store was probably replaced by an older copy, such as a restored backup; nothing was read. Resynchronize fully.")
            .with { $0.path = path; $0.reason = reason }
    }

    /// A history entry (or a model it names) is damaged; nothing was written, and the objects of the store are not
    /// affected.
    public static func corruptedHistory(path: String, sequence: UInt64, reason: String) -> StoreError {
        StoreError(.corruptedHistory, "The change history of \(path) is damaged at transaction \(sequence) (\(reason)); nothing was written, and the store's objects are not affected. Consumers past this point cannot follow: resynchronize them fully, then delete the history before the current token (Store.deleteHistory(before:)).")
            .with { $0.path = path; $0.reason = reason }
    }

    /// Any other LMDB error.
    public static func lmdb(code: Int32, name: String, operation: String, message: String) -> StoreError {
        StoreError(.lmdb, "\(operation) failed with \(name): \(message).").with { $0.lmdbCode = code; $0.operation = operation }
    }
}

/// What is damaged in a store whose files are damaged.
public enum CorruptionReason: Sendable, Hashable, CustomStringConvertible {
    /// `data.mdb` is empty, although the store exists (LMDB would silently start a new store).
    case emptyDataFile
    /// `data.mdb` is missing next to `lock.mdb`.
    case missingDataFile
    /// `data.mdb` ends before pages in use: it must be at least `expectedBytes` long to hold them. (A file
    /// shorter than LMDB's last page number whose missing pages are all free is not damaged.)
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
        case .truncated(let expected, let actual): "data.mdb has \(actual) bytes but pages in use reach byte \(expected)"
        case .invalidHeader: "a header page of data.mdb is damaged"
        case .metadata(let what): "its metadata is damaged (\(what))"
        case .structure(let what): "a page of data.mdb is damaged (\(what))"
        }
    }
}
