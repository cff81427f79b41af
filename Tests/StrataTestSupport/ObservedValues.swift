import Foundation
import Strata
import Synchronization

/// Collects what an observation delivers, from a background task, for a test to wait on.
///
/// ```swift
/// let counts = ObservedValues<Int>()
/// let task = counts.record(store.observe { try $0.count("Post") })
/// #expect(await counts.waitUntil { $0 == [0] })
/// ```
public final class ObservedValues<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    private let ending = Mutex<String?>(nil)

    public init() {}

    /// Everything delivered so far, in order.
    public var all: [Value] { values.withLock { $0 } }

    /// How the iteration ended, if it has (see ``waitForEnd()``): for failure messages.
    public var end: String? { ending.withLock { $0 } }

    /// Iterates `sequence` in a task, recording each element (then running `after`, e.g. to stay busy). The task
    /// runs on ``ConsumerExecutor``, so that a run full of long synchronous tests does not hold it back.
    public func record<S: AsyncSequence & Sendable>(_ sequence: S, after: (@Sendable (Value) async -> Void)? = nil) -> Task<Void, Never>
    where S.Element == Value {
        Task(executorPreference: ConsumerExecutor.shared) {
            do {
                for try await value in sequence {
                    self.values.withLock { $0.append(value) }
                    await after?(value)
                }
                self.ending.withLock { $0 = "finished" }
            } catch let error as StoreError {
                self.ending.withLock { $0 = error.code.name }
            } catch {
                self.ending.withLock { $0 = "\(error)" }
            }
        }
    }

    /// Waits (up to 60 s: a busy machine or a test run that fills the cooperative pool delays, never loses, a value) until the values satisfy `predicate`; returns whether they do.
    public func waitUntil(_ predicate: ([Value]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if values.withLock({ predicate($0) }) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return values.withLock { predicate($0) }
    }

    /// Waits (up to 60 s: a busy machine or a test run that fills the cooperative pool delays, never loses, a value) for the iteration to end: "finished", a ``StoreError`` code's name, another error's
    /// description, or nil when it has not ended.
    public func waitForEnd() async -> String? {
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            if let end = ending.withLock({ $0 }) { return end }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return ending.withLock { $0 }
    }
}
