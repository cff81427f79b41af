import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

#if ReliabilityHooks
/// Fault injection for Strata's own reliability tests: compiled only with the package trait
/// `ReliabilityHooks` (which the nested packages `Reliability/` and `Fuzz/` enable), and inert until a test
/// turns a fault on in its own process. A normal build of the library has none of it.
///
/// Two kinds of faults:
/// - an LMDB call that returns an error code instead of running (`MDB_MAP_FULL` from a put or a commit,
///   `MDB_READERS_FULL`, `EIO`, …), through ``failLMDB(_:code:after:times:)``;
/// - named points in the migration engine (`batch.afterCommit`, `switch.beforeCommit`, …) where a child
///   process kills itself, throws, or sleeps, set with ``setPoint(_:index:action:)`` or, from a spec string
///   such as a test child reads from its environment, ``configure(spec:)``.
@_spi(Testing)
public enum FaultInjection {
    /// LMDB calls that can be made to fail.
    public enum Call: String, Sendable, CaseIterable {
        case beginTransaction, commit, get, put, cursorPut, cursorGet, delete, drop, openDatabase
    }

    /// What a fault point does when it fires.
    public enum Action: Sendable, Equatable {
        case kill
        case exit(Int32)
        case throwError
        case sleep(milliseconds: Int)
    }

    /// The error a fault point with the `throwError` action throws.
    public struct InjectedFault: Error, Sendable, CustomStringConvertible {
        public let point: String
        public var description: String { "injected fault at \(point)" }
    }

    struct LMDBRule: Sendable {
        var call: Call
        var code: Int32
        var skip: Int
        var remaining: Int
    }

    struct PointRule: Sendable {
        var name: String
        var index: Int?  // nil = every occurrence
        var action: Action
    }

    struct State: Sendable {
        var lmdbRules: [LMDBRule] = []
        var pointRules: [PointRule] = []
        var pointCounts: [String: Int] = [:]
        var trace: (@Sendable (String) -> Void)? = nil
    }

    static let armed = Atomic<Bool>(false)
    static let state = Mutex(State())

    /// Makes the next `times` calls of `call`, after skipping `after` of them, return `code`.
    public static func failLMDB(_ call: Call, code: Int32, after: Int = 0, times: Int = 1) {
        state.withLock { $0.lmdbRules.append(LMDBRule(call: call, code: code, skip: after, remaining: times)) }
        armed.store(true, ordering: .releasing)
    }

    /// Sets what happens at the `index`-th occurrence (0-based; nil for every occurrence) of a named point.
    public static func setPoint(_ name: String, index: Int?, action: Action) {
        state.withLock { $0.pointRules.append(PointRule(name: name, index: index, action: action)) }
        armed.store(true, ordering: .releasing)
    }

    /// Calls `trace` with the name of every fault point reached (for listing a migration's phases).
    public static func tracePoints(_ trace: (@Sendable (String) -> Void)?) {
        state.withLock { $0.trace = trace }
        armed.store(true, ordering: .releasing)
    }

    /// Removes every fault.
    public static func reset() {
        state.withLock { $0 = State() }
        armed.store(false, ordering: .releasing)
    }

    /// Sets the fault points of a spec `name:index:action[,…]`: index is a 0-based occurrence count in this
    /// process, or `*` for every occurrence; action is `kill`, `throw`, `exit[:code]`, or `sleep:<ms>`.
    /// Returns the items it did not understand.
    @discardableResult
    public static func configure(spec: String) -> [String] {
        var rejected: [String] = []
        for item in spec.split(separator: ",") {
            let parts = item.split(separator: ":", maxSplits: 2).map(String.init)
            guard parts.count == 3 else { rejected.append(String(item)); continue }
            let index = parts[1] == "*" ? nil : Int(parts[1])
            let action: Action
            switch parts[2] {
            case "kill": action = .kill
            case "throw": action = .throwError
            case let a where a.hasPrefix("exit"): action = .exit(Int32(a.dropFirst(5)) ?? 3)
            case let a where a.hasPrefix("sleep:"): action = .sleep(milliseconds: Int(a.dropFirst(6)) ?? 10)
            default: rejected.append(String(item)); continue
            }
            setPoint(parts[0], index: index, action: action)
        }
        return rejected
    }

    /// The injected return code for an LMDB call, if a rule fires.
    @inline(__always)
    static func lmdbFault(_ call: Call) -> Int32? {
        guard armed.load(ordering: .acquiring) else { return nil }
        return state.withLock { s -> Int32? in
            for i in s.lmdbRules.indices where s.lmdbRules[i].call == call && s.lmdbRules[i].remaining > 0 {
                if s.lmdbRules[i].skip > 0 { s.lmdbRules[i].skip -= 1; return nil }
                s.lmdbRules[i].remaining -= 1
                return s.lmdbRules[i].code
            }
            return nil
        }
    }

    /// A named point in the engine; fires the configured action.
    @inline(__always)
    static func point(_ name: @autoclosure () -> String) throws {
        guard armed.load(ordering: .acquiring) else { return }
        let name = name()
        let (action, trace) = state.withLock { s -> (Action?, (@Sendable (String) -> Void)?) in
            let n = s.pointCounts[name, default: 0]
            s.pointCounts[name] = n + 1
            let rule = s.pointRules.first { $0.name == name && ($0.index == nil || $0.index == n) }
            return (rule?.action, s.trace)
        }
        trace?(name)
        switch action {
        case nil: return
        case .kill?: kill(getpid(), SIGKILL)
        case .exit(let code)?: Foundation.exit(code)
        case .throwError?: throw InjectedFault(point: name)
        case .sleep(let ms)?: usleep(useconds_t(ms * 1000))
        }
    }
}
#else
/// Without the `ReliabilityHooks` trait (every build an app makes), fault points compile to nothing.
enum FaultInjection {
    enum Call { case beginTransaction, commit, get, put, cursorPut, cursorGet, delete, drop, openDatabase }

    @inline(__always) static func lmdbFault(_ call: Call) -> Int32? { nil }
    @inline(__always) static func point(_ name: @autoclosure () -> String) throws {}
}
#endif
