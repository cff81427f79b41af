import Foundation
import Synchronization

/// The change history's two databases: `history`, one entry per transaction keyed by its sequence number
/// (8 bytes big-endian: contiguous from 1, store-wide, never reused), and `historymodels`, the models entries
/// name, keyed by their ``HistoryModel/id``.
///
/// Entries are written in the write transaction whose changes they describe (a killed commit leaves neither),
/// appended at the end, and deleted only from the front (pruning), so the entries after the recorded floor form
/// an unbroken run up to the last key.
enum HistoryLog {
    static let entriesDatabase = "history"
    static let modelsDatabase = "historymodels"

    @inline(__always)
    static func withKey<T>(_ n: UInt64, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        try withUnsafeBytes(of: n.bigEndian) { try body($0) }
    }

    static func number(of key: UnsafeRawBufferPointer) -> UInt64? {
        guard key.count == 8 else { return nil }
        return UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
    }

    /// The entries database (nil when no entry was ever written, or, in a read transaction, when it was created
    /// after the snapshot).
    static func entries(in txn: Transaction, create: Bool = false) throws -> DatabaseHandle? {
        guard let dbi = try txn.openDatabase(entriesDatabase, flags: 0, create: create) else { return nil }
        return txn.sees(dbi) ? dbi : nil
    }

    static func models(in txn: Transaction, create: Bool = false) throws -> DatabaseHandle? {
        guard let dbi = try txn.openDatabase(modelsDatabase, flags: 0, create: create) else { return nil }
        return txn.sees(dbi) ? dbi : nil
    }

    /// The sequence of the newest transaction in the history: the last entry's, or the floor when every entry
    /// was deleted.
    static func head(_ state: HistoryState, in txn: Transaction) throws -> UInt64 {
        guard let dbi = try entries(in: txn), let last = try txn.cursor(dbi).last(), let n = number(of: last.key) else {
            return state.floor
        }
        return max(n, state.floor)
    }

    /// The sequence the next entry takes: one past the last entry's (`lastKey`, nil when there is none) and the
    /// floor.
    /// - Throws: ``StoreError/Code-swift.struct/corruptedHistory`` when the last key is not a sequence number, or
    ///   when a damaged key or floor is the largest sequence, leaving none to append.
    static func nextSequence(lastKey: UnsafeRawBufferPointer?, state: HistoryState, path: String) throws -> UInt64 {
        var last: UInt64 = 0
        if let lastKey {
            guard let n = number(of: lastKey) else {
                throw StoreError.corruptedHistory(path: path, sequence: state.floor,
                                                  reason: "the last entry's key has \(lastKey.count) bytes, not 8")
            }
            last = n
        }
        return try sequence(after: max(last, state.floor), path: path)
    }

    /// `head + 1`, or ``StoreError/Code-swift.struct/corruptedHistory`` when `head` (from a damaged key or floor)
    /// is the largest sequence.
    static func sequence(after head: UInt64, path: String) throws -> UInt64 {
        guard head < .max else {
            throw StoreError.corruptedHistory(path: path, sequence: head, reason: "no sequence is left after it: a damaged key or floor")
        }
        return head + 1
    }

    /// Appends `entry` (written by `model`) in `txn`, the transaction it describes; returns its sequence.
    static func append(_ entry: HistoryEntry, model: HistoryModel, state: HistoryState, in txn: Transaction) throws -> UInt64 {
        try store(model, in: txn)
        guard let dbi = try entries(in: txn, create: true) else {
            throw StoreError.internalInconsistency("the history database cannot be created")
        }
        let cursor = try txn.sharedCursor(dbi)
        let sequence = try nextSequence(lastKey: try cursor.last()?.key, state: state, path: txn.environment.path)
        let value = HistoryCodec.encode(entry, sequence: sequence)
        let appended = try withKey(sequence) { k in
            try value.withUnsafeBytes { v in try cursor.append(key: k, value: v) }
        }
        guard appended else { throw StoreError.internalInconsistency("history sequence \(sequence) is not past the last entry") }
        return sequence
    }

    /// Stores a model unless it is already stored.
    static func store(_ model: HistoryModel, in txn: Transaction) throws {
        guard let dbi = try models(in: txn, create: true) else {
            throw StoreError.internalInconsistency("the history models database cannot be created")
        }
        if try withKey(model.id, { try txn.get(dbi, key: $0) }) != nil { return }
        let value = HistoryCodec.encode(model)
        try withKey(model.id) { k in try value.withUnsafeBytes { v in _ = try txn.put(dbi, key: k, value: v) } }
    }

    /// The stored model `id` (cached for the environment: models never change once stored).
    static func model(_ id: UInt64, in txn: Transaction, sequence: UInt64) throws -> HistoryModel {
        let cache = txn.environment.historyModels
        if let known = cache.model(id) { return known }
        guard let dbi = try models(in: txn),
              let bytes = try withKey(id, { try txn.get(dbi, key: $0) }) else {
            throw StoreError.corruptedHistory(path: txn.environment.path, sequence: sequence,
                                              reason: "the model it names (\(String(id, radix: 16))) is missing")
        }
        do {
            let model = try HistoryCodec.decodeModel(bytes, id: id)
            cache.remember(model)
            return model
        } catch {
            throw StoreError.corruptedHistory(path: txn.environment.path, sequence: sequence,
                                              reason: "the model it names is damaged: \(error.reason)")
        }
    }
}

/// The history models of one environment: decoded stored models by id, and the model of each bound model
/// that writes (made once per binding).
final class HistoryModelCache: Sendable {
    private struct State {
        var byID: [UInt64: HistoryModel] = [:]
        var byBinding: [ObjectIdentifier: (binding: BoundModel, model: HistoryModel)] = [:]
    }

    private let state = Mutex(State())

    func model(_ id: UInt64) -> HistoryModel? { state.withLock { $0.byID[id] } }

    func remember(_ model: HistoryModel) { state.withLock { $0.byID[model.id] = model } }

    /// The history model of `binding` (the binding is kept with it, so its identifier is never reused).
    func model(of binding: BoundModel) -> HistoryModel {
        if let known = state.withLock({ $0.byBinding[ObjectIdentifier(binding)]?.model }) { return known }
        let made = HistoryModel(binding)
        state.withLock { s in
            s.byBinding[ObjectIdentifier(binding)] = (binding, made)
            s.byID[made.id] = made
        }
        return made
    }
}

extension Environment {
    /// This process's cache of the store's history models.
    var historyModels: HistoryModelCache { attachment(HistoryModelCache.self) { HistoryModelCache() } }
}
