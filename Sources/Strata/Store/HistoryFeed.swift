import Synchronization
import Foundation

/// The change history as an `AsyncSequence`: the transactions committed after a token, then each new one as it
/// commits, made by ``Store/history(after:)``.
///
/// The feed reads the history in pages, then waits for commits with the store's observation machinery — the
/// same wake-ups as ``Store/observe(_:)``: this process's commits at once, other processes' through the store's
/// commit watcher — and reads again. It does not end when the store is migrated: the migration's transaction
/// arrives (``HistoryTransaction/migration``), then the transactions after it, named by the new model. It ends
/// when the iterating task is cancelled or the handle closes, and throws what reading throws (for example
/// ``StoreError/Code-swift.struct/historyExpired`` when retention pruned the transactions after the token before
/// they were read).
public struct HistoryFeed: AsyncSequence, Sendable {
    public typealias Element = HistoryTransaction

    let store: Store
    let after: HistoryToken?

    public func makeAsyncIterator() -> Iterator {
        Iterator(store: store, after: after)
    }

    /// Waits for the next transaction; see ``HistoryFeed``.
    public struct Iterator: AsyncIteratorProtocol {
        let store: Store
        /// The position after the last transaction returned (nil before the first page when following from the
        /// first transaction).
        private var position: HistoryToken?
        private var pending: [HistoryTransaction] = []
        private var nextIndex = 0
        private var subscription: Subscription<HistorySubscriber>?
        private var isFinished = false

        init(store: Store, after: HistoryToken?) {
            self.store = store
            self.position = after
        }

        public mutating func next() async throws -> HistoryTransaction? {
            guard !isFinished else { return nil }
            do {
                while true {
                    if nextIndex < pending.count {
                        let transaction = pending[nextIndex]
                        nextIndex += 1
                        position = transaction.token
                        return transaction
                    }
                    let page: HistoryPage
                    do {
                        // Registered before reading: a commit after the read wakes the wait below.
                        if subscription == nil { subscription = try store.subscribe(HistorySubscriber(generation: try currentGeneration())) }
                        page = try await Self.fetch(store, after: position)
                    } catch let error as StoreError where error.code == .suspended {
                        // The store is suspended (Store.suspend()): read again once it resumes. Marked before
                        // looking again, so that a resume in between is seen.
                        if let subscriber = subscription?.subscriber {
                            subscriber.missedFetch.store(true, ordering: .releasing)
                            if store.isSuspended {
                                guard try await subscriber.mailbox.next() != nil else { return finish() }
                            }
                            subscriber.missedFetch.store(false, ordering: .releasing)
                        } else if store.isSuspended {
                            // Not registered yet (the store was suspended before the first read): look again shortly.
                            try await Task.sleep(for: .milliseconds(20))
                        }
                        continue
                    }
                    position = page.next
                    pending = page.transactions
                    nextIndex = 0
                    if !pending.isEmpty || !page.isAtEnd { continue }
                    guard let subscriber = subscription?.subscriber else { return finish() }
                    switch try await Self.wait(for: subscriber) {
                    case .commit:
                        continue
                    case .migrated:
                        // The history goes on (the migration is in it): subscribe again at the new generation and
                        // read on.
                        subscription = nil
                    case .ended:
                        return finish()
                    }
                }
            } catch let error as StoreError where error.code == .closed {
                return finish()
            } catch {
                _ = finish()
                throw error
            }
        }

        private enum Wake { case commit, migrated, ended }

        /// Waits for a commit; `migrated` when the store was migrated (observations of a generation end then).
        private static func wait(for subscriber: HistorySubscriber) async throws -> Wake {
            do {
                return try await subscriber.mailbox.next() == nil ? .ended : .commit
            } catch {
                if error.code == .modelChanged { return .migrated }
                throw error
            }
        }

        private func currentGeneration() throws -> UInt64 {
            try store.environment.read { txn in try store.model.meta.read(.state, in: txn, StateRecord.init(decoding:))?.generation ?? 0 }
        }

        private static func fetch(_ store: Store, after token: HistoryToken?) async throws -> HistoryPage {
            try await withCheckedThrowingContinuation { continuation in
                DispatchQueue.global().async {
                    continuation.resume(with: Result { try store.fetchHistory(after: token) })
                }
            }
        }

        private mutating func finish() -> HistoryTransaction? {
            isFinished = true
            subscription = nil
            return nil
        }
    }
}

/// A history feed's registration with the store's observation hub: any commit wakes it (it reads the history
/// itself, whatever model wrote it).
final class HistorySubscriber: CommitSubscriber {
    let generation: UInt64
    let mailbox = Mailbox<Bool>()

    init(generation: UInt64) { self.generation = generation }

    /// A read failed because the store was suspended: the next resume asks for another.
    let missedFetch = Atomic<Bool>(false)

    func receive(_ commit: CommitChanges) { mailbox.post { $0 = true } }

    func end(_ error: StoreError?) { mailbox.end(error) }

    func resumed() {
        if missedFetch.exchange(false, ordering: .acquiringAndReleasing) { mailbox.post { $0 = true } }
    }
}
