import Dispatch

/// The portable file watch: no notification at all, only the timeout (and wake-ups). Compiles and works
/// everywhere; a commit by another process is noticed within the poll interval.
final class PollingFileWatch: FileChangeWatch {
    private let wakeUp = DispatchSemaphore(value: 0)

    func wait(timeoutMilliseconds: Int) {
        _ = wakeUp.wait(timeout: .now() + .milliseconds(max(0, timeoutMilliseconds)))
    }

    func wake() { wakeUp.signal() }
}
