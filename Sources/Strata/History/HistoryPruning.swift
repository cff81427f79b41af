import Foundation
import Synchronization

/// Deletes the oldest entries of the change history — those its retention (``HistoryConfiguration``) no longer
/// keeps, or those before a consumer's token (``Store/deleteHistory(before:)``) — from the front, in bounded write
/// transactions that move the recorded floor with them (a kill loses at most the batch in flight, which never
/// committed).
enum HistoryPruning {
    /// The most entries, and the most bytes of entries, one batch deletes.
    static let entriesPerBatch = 1_000
    static let bytesPerBatch = 8 << 20
    /// A commit asks for an age check every this many transactions (reading the oldest entry's time is left to
    /// the pruner).
    static let ageCheckInterval: UInt64 = 256

    /// Whether the history may have outgrown its retention after the commit of `head` (cheap: the count from
    /// the sequences, the size from the database's page count; age every ``ageCheckInterval`` commits).
    static func mayBeDue(_ state: HistoryState, head: UInt64, in txn: Transaction) throws -> Bool {
        if let maximum = state.maximumTransactions, head - state.floor > UInt64(max(0, maximum)) { return true }
        if state.maximumAgeMilliseconds != nil, head % ageCheckInterval == 0 { return true }
        if let maximum = state.maximumBytes, let dbi = try HistoryLog.entries(in: txn) {
            let stat = try txn.statistics(dbi)
            if (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * Int(stat.ms_psize) > maximum { return true }
        }
        return false
    }

    /// Whether the store, as `txn` sees it, keeps a history that may have outgrown its retention while no handle
    /// pruned it (what a handle that prunes in the background checks when it opens).
    static func mayBeOverLimits(_ meta: MetaTable, in txn: Transaction) throws -> Bool {
        guard let state = try HistoryRecording.activeState(meta, in: txn) else { return false }
        let head = try HistoryLog.head(state, in: txn)
        if head <= state.floor { return false }
        if state.maximumAgeMilliseconds != nil { return true }
        return try mayBeDue(state, head: head, in: txn)
    }

    /// What one batch did.
    struct Outcome {
        var deleted = 0
        /// Nothing more to delete (for now).
        var isFinished = true
    }

    /// One batch, in one write transaction: deletes from the front the entries retention no longer keeps and,
    /// with `before`, every entry with a smaller sequence; records the new floor.
    static func batch(environment: Environment, meta: MetaTable, before: UInt64? = nil, now: Int64 = HistoryRecording.now()) throws -> Outcome {
        try environment.write { txn -> Outcome in
            guard var state = try HistoryState.read(meta, in: txn), state.isEnabled,
                  let dbi = try HistoryLog.entries(in: txn) else { return Outcome() }
            let stat = try txn.statistics(dbi)
            let entries = stat.ms_entries
            guard entries > 0 else { return Outcome() }
            let bytes = (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * Int(stat.ms_psize)
            let bytesPerEntry = max(1, bytes / entries)
            let cursor = try txn.cursor(dbi)
            var outcome = Outcome(deleted: 0, isFinished: false)
            var deletedBytes = 0
            var entry = try cursor.first()
            while let current = entry {
                guard let sequence = HistoryLog.number(of: current.key) else {
                    throw StoreError.corruptedHistory(path: environment.path, sequence: 0, reason: "a key of \(current.key.count) bytes")
                }
                if outcome.deleted >= entriesPerBatch || deletedBytes >= bytesPerBatch { break }
                let left = entries - outcome.deleted
                var expired = before.map { sequence < $0 } ?? false
                if !expired, let maximum = state.maximumTransactions, left > max(0, maximum) { expired = true }
                if !expired, let maximum = state.maximumBytes, left * bytesPerEntry > maximum, left > 1 { expired = true }
                if !expired, let maximum = state.maximumAgeMilliseconds {
                    // A damaged entry has no readable time: it is kept for the other limits (and `verify`) to deal with.
                    if let time = try? HistoryCodec.decode(current.value, sequence: sequence).time, now - time > maximum { expired = true }
                }
                guard expired else {
                    outcome.isFinished = true
                    break
                }
                deletedBytes += current.value.count
                try cursor.deleteCurrent()
                state.floor = max(state.floor, sequence)
                outcome.deleted += 1
                // Deleting from the front: the next entry is the first one now.
                entry = try cursor.first()
            }
            if entry == nil { outcome.isFinished = true }
            if outcome.deleted > 0 { try state.write(meta, in: txn) }
            return outcome
        }
    }
}

/// Runs pruning batches in the background for one environment, one run at a time, yielding to the app's
/// writers between batches.
final class HistoryPruner: Sendable {
    private let running = Atomic<Bool>(false)

    /// Starts a run unless one is under way.
    func schedule(environment: Environment, meta: MetaTable) {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        DispatchQueue.global(qos: .utility).async { [self] in
            defer { running.store(false, ordering: .releasing) }
            while !environment.isClosed {
                if environment.writersWaiting.load(ordering: .relaxed) > 0 {
                    CurrentProcess.pause(microseconds: 500)
                    continue
                }
                // A failure (the store closed, a full disk) ends the run; the next commit that finds the history
                // over its limits schedules another.
                guard let outcome = try? HistoryPruning.batch(environment: environment, meta: meta), !outcome.isFinished else { return }
            }
        }
    }
}

extension Environment {
    /// This process's background pruner of the store's history.
    var historyPruner: HistoryPruner { attachment(HistoryPruner.self) { HistoryPruner() } }
}
