import Dispatch

/// A monotonic clock in seconds (not the wall clock: it never jumps back or forth).
enum MonotonicClock {
    static func now() -> Double {
        Double(DispatchTime.now().uptimeNanoseconds) / 1e9
    }
}
