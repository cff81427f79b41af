#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#else
import Dispatch
#endif

/// A monotonic clock (not the wall clock: it never jumps back or forth), for time budgets and deadlines.
///
/// `CLOCK_MONOTONIC` on Linux; `CLOCK_UPTIME_RAW` on Darwin (`mach_absolute_time`'s clock: it stops while
/// the device sleeps, which a budget of work wants); Dispatch's uptime elsewhere.
enum MonotonicClock {
    /// Nanoseconds since an arbitrary origin fixed for the life of the process.
    static func nanoseconds() -> UInt64 {
        #if canImport(Glibc) || canImport(Musl)
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
        #elseif canImport(Darwin)
        return clock_gettime_nsec_np(CLOCK_UPTIME_RAW)
        #else
        return DispatchTime.now().uptimeNanoseconds
        #endif
    }

    /// Seconds since the same origin.
    static func now() -> Double {
        Double(nanoseconds()) / 1e9
    }
}
