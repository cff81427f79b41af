import Foundation
import Synchronization

/// The results of a query, again after each commit that may change them: an `AsyncSequence` made by
/// ``Store/observe(_:)``.
///
/// The first value is fetched as soon as iteration starts; after that, a new value follows each commit
/// (by this process or another) that touches an entity the query read. Commits that arrive while the
/// consumer is busy coalesce: the next value is fetched after the latest of them, so the latest state always
/// arrives and no value is older than the last commit. Each value is fetched in its own short read
/// transaction; nothing is held between values.
///
/// The sequence ends when the iterating task is cancelled or the store handle is closed, and throws
/// ``StoreError/Code-swift.struct/modelChanged`` when the store is migrated by another handle or process
/// (open it again to go on), or the error the query throws.
public struct QueryObservation<Value: Sendable>: AsyncSequence, Sendable {
    public typealias Element = Value

    let store: Store
    let query: @Sendable (ReadContext) throws -> Value

    public func makeAsyncIterator() -> Iterator {
        Iterator(store: store, query: query)
    }

    /// Fetches the query's values; see ``QueryObservation``.
    public struct Iterator: AsyncIteratorProtocol {
        let store: Store
        let query: @Sendable (ReadContext) throws -> Value
        private var subscription: Subscription<QuerySubscriber>?
        private var isFinished = false

        init(store: Store, query: @escaping @Sendable (ReadContext) throws -> Value) {
            self.store = store
            self.query = query
        }

        public mutating func next() async throws -> Value? {
            guard !isFinished else { return nil }
            do {
                if let subscription {
                    guard try await subscription.subscriber.mailbox.next() != nil else { return finish() }
                } else {
                    subscription = try store.subscribe(QuerySubscriber(generation: store.model.generation))
                }
                guard let subscriber = subscription?.subscriber else { return finish() }
                let query = self.query
                // While it fetches, every commit counts: one after its snapshot may touch an entity this fetch
                // reads for the first time.
                while true {
                    subscriber.region = nil
                    do {
                        let (value, region) = try await store.readTracking(query)
                        subscriber.region = region
                        return value
                    } catch let error as StoreError where error.code == .suspended {
                        // The store was suspended before this fetch: fetch again when it resumes (or when a
                        // commit arrives). Marked before looking again, so that a resume in between is seen.
                        subscriber.missedFetch.store(true, ordering: .releasing)
                        if store.isSuspended {
                            guard try await subscriber.mailbox.next() != nil else { return finish() }
                        }
                        subscriber.missedFetch.store(false, ordering: .releasing)
                    }
                }
            } catch let error as StoreError where error.code == .closed {
                return finish()
            } catch {
                _ = finish()
                throw error
            }
        }

        private mutating func finish() -> Value? {
            isFinished = true
            subscription = nil
            return nil
        }
    }
}

/// A query observation's registration: which entities its last fetch read, and a dirty flag.
final class QuerySubscriber: CommitSubscriber {
    let generation: UInt64
    let mailbox = Mailbox<Void>()
    private let tags = Mutex<Set<UInt32>?>(nil)
    /// A fetch failed because the store was suspended: the next resume asks for another.
    let missedFetch = Atomic<Bool>(false)

    init(generation: UInt64) { self.generation = generation }

    /// The entity tags the last fetch read (nil before the first: every commit counts).
    var region: Set<UInt32>? {
        get { tags.withLock { $0 } }
        set { tags.withLock { $0 = newValue } }
    }

    func receive(_ commit: CommitChanges) {
        let concerned = commit.isUnknown || tags.withLock { region in
            guard let region else { return true }
            return commit.entities.keys.contains { region.contains($0) }
        }
        if concerned { mailbox.post { $0 = () } }
    }

    func end(_ error: StoreError?) { mailbox.end(error) }

    func resumed() {
        if missedFetch.exchange(false, ordering: .acquiringAndReleasing) { mailbox.post { $0 = () } }
    }
}

/// Keeps a subscriber registered while an iterator holds it; unregisters when the iterator goes away.
final class Subscription<Subscriber: CommitSubscriber>: Sendable {
    let subscriber: Subscriber
    private let hub: ObservationHub
    private let token: Int

    init(subscriber: Subscriber, hub: ObservationHub, token: Int) {
        self.subscriber = subscriber
        self.hub = hub
        self.token = token
    }

    deinit { hub.unregister(token) }
}
