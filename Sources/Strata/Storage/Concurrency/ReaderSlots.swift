import Dispatch

/// Bounds the number of read transactions a process has open at once, below LMDB's reader table size,
/// so that readers wait instead of failing with `MDB_READERS_FULL`.
final class ReaderSlots: @unchecked Sendable {
    private let semaphore: DispatchSemaphore
    init(count: Int) { semaphore = DispatchSemaphore(value: max(1, count)) }
    func acquire() { semaphore.wait() }
    /// Takes a slot if one is free now; false (nothing taken) when every slot is held.
    func acquireIfFree() -> Bool { semaphore.wait(timeout: .now()) == .success }
    func release() { semaphore.signal() }
}
