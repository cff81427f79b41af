import Synchronization

/// Where an observer's notifications wait for its consumer: a pending payload that later notifications merge
/// into (so bursts coalesce and the latest state always arrives), and at most one waiting consumer.
final class Mailbox<Payload: Sendable>: Sendable {
    private struct State {
        var payload: Payload?
        var waiter: CheckedContinuation<Void, Never>?
        var ended = false
        var error: StoreError?
    }

    private let state = Mutex(State())

    /// Merges a notification into the pending payload and wakes the consumer.
    func post(_ merge: (inout Payload?) -> Void) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.ended else { return nil }
            merge(&s.payload)
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    /// Ends the observation: the consumer's next wait returns the error, or nil.
    func end(_ error: StoreError?) {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard !s.ended else { return nil }
            s.ended = true
            s.error = error
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    var isEnded: Bool { state.withLock { $0.ended } }

    /// Waits for a payload. Returns nil when the observation ended or the task was cancelled; throws the
    /// error it ended with.
    func next() async throws(StoreError) -> Payload? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.payload != nil || s.ended || Task.isCancelled { return true }
                    s.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            end(nil)
        }
        let (payload, error) = state.withLock { s -> (Payload?, StoreError?) in
            if let payload = s.payload.take() { return (payload, nil) }
            return (nil, s.error)
        }
        if let error { throw error }
        return payload
    }
}
