import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex held across a closure that may throw and return non-Sendable values on the same thread.
/// Records its owner so that re-entry is reported instead of deadlocking.
final class ThreadMutex: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let owner = Atomic<UInt>(0)

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Whether the calling thread holds the lock.
    var isHeldByCurrentThread: Bool {
        owner.load(ordering: .relaxed) == currentThreadID()
    }

    func lock() {
        pthread_mutex_lock(mutex)
        owner.store(currentThreadID(), ordering: .relaxed)
    }

    func unlock() {
        owner.store(0, ordering: .relaxed)
        pthread_mutex_unlock(mutex)
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A readers–writer lock: every LMDB transaction holds it shared, and growing the map holds it
/// exclusively (LMDB requires that no transaction is active in the process while the map is resized).
final class ResizeGate: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    init() {
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_rwlock_t())
        pthread_rwlock_init(lock, nil)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    func lockShared() { pthread_rwlock_rdlock(lock) }
    func unlockShared() { pthread_rwlock_unlock(lock) }

    /// Takes the gate exclusively, waiting at most `timeout` seconds. Returns false on timeout.
    func lockExclusive(timeout: Double) -> Bool {
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let whole = Int(timeout)
        let fraction = Int((timeout - Double(whole)) * 1_000_000_000)
        deadline.tv_sec += whole
        deadline.tv_nsec += fraction
        if deadline.tv_nsec >= 1_000_000_000 { deadline.tv_sec += 1; deadline.tv_nsec -= 1_000_000_000 }
        return pthread_rwlock_timedwrlock(lock, &deadline) == 0
    }

    func unlockExclusive() { pthread_rwlock_unlock(lock) }
}

/// Bounds the number of read transactions a process has open at once, below LMDB's reader table size,
/// so that readers wait instead of failing with `MDB_READERS_FULL`.
final class ReaderSlots: @unchecked Sendable {
    private let semaphore: DispatchSemaphore
    init(count: Int) { semaphore = DispatchSemaphore(value: max(1, count)) }
    func acquire() { semaphore.wait() }
    func release() { semaphore.signal() }
}

/// A number identifying the calling OS thread while it lives.
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    return UInt(bitPattern: pthread_self())
    #else
    return UInt(pthread_self())
    #endif
}
