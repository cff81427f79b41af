import Foundation

/// Records write transactions in the change history, inside the transaction they describe: what every
/// writer of the store calls once its changes are made (``Store/write(author:_:)``, a migration's scripts, the
/// switch of a migration step).
enum HistoryRecording {
    /// The history state when the store keeps a history (nil when it does not): read at the start of every write
    /// transaction, so that a handle opened before another turned history on records its commits too.
    static func activeState(_ meta: MetaTable, in txn: Transaction) throws -> HistoryState? {
        guard let state = try HistoryState.read(meta, in: txn), state.isEnabled else { return nil }
        return state
    }

    /// Milliseconds since 1970, now.
    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// Appends the entry of a commit's changes, named by `model` (the writing handle's). Returns whether the
    /// history may have outgrown its retention (a background pruning is then due).
    @discardableResult
    static func record(_ changes: CommitChanges, model: BoundModel, author: String?, state: HistoryState,
                       in txn: Transaction) throws -> Bool {
        let names = txn.environment.historyModels.model(of: model)
        let entry = HistoryEntry(kind: .commit, time: now(), author: author, modelID: names.id, entities: changes.entities)
        let sequence = try HistoryLog.append(entry, model: names, state: state, in: txn)
        return try HistoryPruning.mayBeDue(state, head: sequence, in: txn)
    }

    /// The changes a write context recorded, named by entity tag (empty when it changed nothing).
    static func changes(of context: WriteContext, model: BoundModel, txn: Transaction) -> CommitChanges {
        context.changes.changes(transactionID: txn.id) { model.entities[$0].tag }
    }
}
