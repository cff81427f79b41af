#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
import Foundation
#endif

/// A readers–writer lock: every LMDB transaction holds it shared, and growing the map holds it
/// exclusively (LMDB requires that no transaction is active in the process while the map is resized).
///
/// A `pthread_rwlock_t` everywhere POSIX threads exist. Linux waits for the exclusive side with
/// `pthread_rwlock_timedwrlock`; Darwin has no timed variant, so it retries `pthread_rwlock_trywrlock` with a
/// growing pause (at most 1 ms) until the deadline. Where there are no POSIX threads, the fallback is a
/// condition-variable lock from Foundation.
final class ResizeGate: @unchecked Sendable {
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
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
    func unlockExclusive() { pthread_rwlock_unlock(lock) }
    #else
    private let condition = NSCondition()
    private var readers = 0
    private var writing = false

    init() {}

    func lockShared() {
        condition.lock()
        while writing { condition.wait() }
        readers += 1
        condition.unlock()
    }

    func unlockShared() {
        condition.lock()
        readers -= 1
        if readers == 0 { condition.broadcast() }
        condition.unlock()
    }

    func unlockExclusive() {
        condition.lock()
        writing = false
        condition.broadcast()
        condition.unlock()
    }
    #endif

    /// Takes the gate exclusively, waiting at most `timeout` seconds (a day at most; a negative or NaN
    /// timeout does not wait). Returns false on timeout.
    func lockExclusive(timeout: Double) -> Bool {
        let timeout = timeout.isNaN ? 0 : min(max(timeout, 0), 86_400)
        #if canImport(Glibc) || canImport(Musl)
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        let whole = Int(timeout)
        let fraction = Int((timeout - Double(whole)) * 1_000_000_000)
        deadline.tv_sec += whole
        deadline.tv_nsec += fraction
        if deadline.tv_nsec >= 1_000_000_000 { deadline.tv_sec += 1; deadline.tv_nsec -= 1_000_000_000 }
        return pthread_rwlock_timedwrlock(lock, &deadline) == 0
        #elseif canImport(Darwin)
        let deadline = MonotonicClock.now() + max(0, timeout)
        var pause = 10
        while pthread_rwlock_trywrlock(lock) != 0 {
            if MonotonicClock.now() >= deadline { return false }
            CurrentProcess.pause(microseconds: pause)
            pause = min(pause * 2, 1000)
        }
        return true
        #else
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: max(0, timeout))
        while writing || readers > 0 {
            if !condition.wait(until: deadline) { return false }
        }
        writing = true
        return true
        #endif
    }
}
