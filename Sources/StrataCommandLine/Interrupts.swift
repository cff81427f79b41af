import Dispatch
import Foundation
import Synchronization

/// Ctrl-C (SIGINT) as a request to stop at the next safe point; a second one exits at once.
enum Interrupts {
    private static let count = Atomic<Int>(0)

    /// Whether Ctrl-C was pressed.
    static var requested: Bool { count.load(ordering: .relaxed) > 0 }

    /// Catches SIGINT until the returned source is cancelled.
    static func install(first: String, second: String) -> any DispatchSourceSignal {
        ignoreDefaultInterruptAction()
        let source = DispatchSource.makeSignalSource(signal: interruptSignal, queue: .global())
        source.setEventHandler {
            if count.add(1, ordering: .relaxed).newValue > 1 {
                Console.error("\nstrata: " + second)
                terminateImmediately(1)
            }
            Console.error("\nstrata: " + first)
        }
        source.resume()
        return source
    }
}
