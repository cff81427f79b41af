#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
import Foundation
#endif
import Synchronization

/// A mutex held across a closure that may throw and return non-Sendable values on the same thread.
/// Records its owner so that re-entry is reported instead of deadlocking.
///
/// A `pthread_mutex_t` on Linux and Darwin (allocated once and never moved, as POSIX requires); `NSLock`
/// where there is no pthread library.
final class ThreadMutex: @unchecked Sendable {
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    #else
    private let mutex = NSLock()
    #endif
    private let owner = Atomic<UInt>(0)

    init() {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        #endif
    }

    deinit {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        #endif
    }

    /// Whether the calling thread holds the lock.
    var isHeldByCurrentThread: Bool {
        owner.load(ordering: .relaxed) == currentThreadID()
    }

    func lock() {
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        pthread_mutex_lock(mutex)
        #else
        mutex.lock()
        #endif
        owner.store(currentThreadID(), ordering: .relaxed)
    }

    func unlock() {
        owner.store(0, ordering: .relaxed)
        #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        pthread_mutex_unlock(mutex)
        #else
        mutex.unlock()
        #endif
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A number identifying the calling OS thread while it lives (never 0).
func currentThreadID() -> UInt {
    #if canImport(Glibc) || canImport(Musl)
    return UInt(pthread_self())
    #elseif canImport(Darwin)
    return UInt(bitPattern: pthread_self())
    #else
    return UInt(bitPattern: ObjectIdentifier(Thread.current).hashValue)
    #endif
}
