import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where the suite finds the built `strata-torture` executable and the fault shim: next to the test
/// bundle in the build's products directory (override with STRATA_TORTURE_BIN / STRATA_FAULT_SHIM).
enum Products {
    static let directory: URL = {
        if let executable = Bundle.main.executableURL { return executable.deletingLastPathComponent() }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }()

    static var torture: String {
        ProcessInfo.processInfo.environment["STRATA_TORTURE_BIN"] ?? directory.appendingPathComponent("strata-torture").path
    }

    static var shim: String {
        ProcessInfo.processInfo.environment["STRATA_FAULT_SHIM"] ?? directory.appendingPathComponent("libStrataFaultShim.so").path
    }

    /// Whether the child was built (the test target depends on it).
    static var available: Bool { FileManager.default.isExecutableFile(atPath: torture) }

    /// Whether the fault shim was built: a dynamic library product, which `swift build --build-tests` (what
    /// `scripts/test` runs first) builds, and a bare `swift test` may not.
    static var shimAvailable: Bool { available && FileManager.default.fileExists(atPath: shim) }
}

/// How a child process ended.
struct ChildResult: CustomStringConvertible {
    var exitCode: Int32?
    var signal: Int32?
    var lines: [String]
    /// When each line arrived, in seconds after the child started.
    var lineTimes: [Double]
    var errorOutput: String
    var duration: Double
    var timedOut: Bool

    var killedBySignal: Bool { signal != nil }
    var acknowledgements: [String] { lines.filter { $0.hasPrefix("ACK ") } }
    /// When the last line with `prefix` arrived, in seconds after the first line.
    func timeOfLast(_ prefix: String) -> Double? {
        guard let i = lines.lastIndex(where: { $0.hasPrefix(prefix) }), let first = lineTimes.first else { return nil }
        return lineTimes[i] - first
    }
    func line(_ prefix: String) -> String? { lines.last { $0.hasPrefix(prefix) } }
    func lines(prefix: String) -> [String] { lines.filter { $0.hasPrefix(prefix) } }

    var description: String {
        let end = signal.map { "signal \($0)" } ?? exitCode.map { "exit \($0)" } ?? "?"
        return "\(end)\(timedOut ? " (timed out)" : ""), \(lines.count) lines, last: \(lines.suffix(3)), stderr: \(errorOutput.suffix(600))"
    }
}

/// A `strata-torture` child: started with arguments and extra environment, its standard output read line
/// by line as it comes. Only this child is ever signalled, by its own process identifier.
final class Child: @unchecked Sendable {
    private let process = Process()
    private let output = Pipe()
    private let input = Pipe()
    private let errorFile: URL
    private let condition = NSCondition()
    private var lines: [String] = []
    private var lineTimes: [Double] = []
    private var finishedReading = false
    private let started = Date()
    private var killWhen: ((String) -> Bool)?
    private var killedByUs = false

    /// Starts `strata-torture arguments…`. `killWhen` is called with every line and, when it returns true,
    /// the child is killed with SIGKILL at once (before reading further).
    init(_ arguments: [String], environment: [String: String] = [:], killWhen: ((String) -> Bool)? = nil) throws {
        var env = ProcessInfo.processInfo.environment
        for key in env.keys where key.hasPrefix("STRATA_FAULT") || key.hasPrefix("STRATA_SHIM") || key == "LD_PRELOAD" {
            env[key] = nil
        }
        env["SWIFT_BACKTRACE"] = "enable=no"
        for (k, v) in environment { env[k] = v }
        process.executableURL = URL(fileURLWithPath: Products.torture)
        process.arguments = arguments
        process.environment = env
        process.standardOutput = output
        process.standardInput = input
        errorFile = FileManager.default.temporaryDirectory.appendingPathComponent("strata-child-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        self.killWhen = killWhen
        try process.run()
        let reader = Thread { [self] in self.readLoop() }
        reader.stackSize = 1 << 20
        reader.start()
    }

    var pid: Int32 { process.processIdentifier }

    private func readLoop() {
        let handle = output.fileHandleForReading
        var pending = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                condition.lock()
                lines.append(line)
                lineTimes.append(Date().timeIntervalSince(started))
                let shouldKill = killWhen?(line) ?? false
                if shouldKill { killWhen = nil; killNow() }
                condition.broadcast()
                condition.unlock()
            }
        }
        condition.lock()
        if !pending.isEmpty { lines.append(String(decoding: pending, as: UTF8.self)); lineTimes.append(Date().timeIntervalSince(started)) }
        finishedReading = true
        condition.broadcast()
        condition.unlock()
    }

    /// Sends SIGKILL to the child if it is still running.
    func killNow() {
        if process.isRunning {
            killedByUs = true
            kill(process.processIdentifier, SIGKILL)
        }
    }

    /// Waits until a line satisfies `predicate` (returns it), or the output ends, or `timeout` passes (nil).
    func waitForLine(timeout: Double = 60, _ predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        var checked = 0
        while true {
            while checked < lines.count {
                if predicate(lines[checked]) { return lines[checked] }
                checked += 1
            }
            if finishedReading { return nil }
            if !condition.wait(until: deadline) { return nil }
        }
    }

    private var cursor = 0

    /// The next line not yet returned by this method, waiting at most `timeout` seconds; nil when the
    /// output ended or nothing came in time (`isRunning` tells which).
    func nextLine(timeout: Double) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while cursor >= lines.count {
            if finishedReading { return nil }
            if !condition.wait(until: deadline) { return nil }
        }
        cursor += 1
        return lines[cursor - 1]
    }

    /// The last line so far that begins with `prefix` (the child goes on running).
    func lastLine(withPrefix prefix: String) -> String? {
        condition.lock()
        defer { condition.unlock() }
        return lines.last { $0.hasPrefix(prefix) }
    }

    var isRunning: Bool { process.isRunning }

    /// Whether the child's standard output has ended (the child is gone, or going: a child killed by a
    /// signal closes its output before `isRunning` turns false).
    var outputEnded: Bool {
        condition.lock()
        defer { condition.unlock() }
        return finishedReading
    }

    /// Writes `line` and a newline to the child's standard input.
    func send(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closes the child's standard input (children that wait on it then go on).
    func closeInput() { try? input.fileHandleForWriting.close() }

    /// Waits for the child to end (killing it after `timeout` seconds) and returns how it ended.
    @discardableResult
    func wait(timeout: Double = 180) -> ChildResult {
        let deadline = Date().addingTimeInterval(timeout)
        var timedOut = false
        while process.isRunning {
            if Date() > deadline { timedOut = true; killNow(); break }
            usleep(2_000)
        }
        process.waitUntilExit()
        condition.lock()
        // The output ends when the child (and anything that inherited its standard output) is gone.
        let readDeadline = Date().addingTimeInterval(60)
        while !finishedReading && condition.wait(until: readDeadline) {}
        let captured = lines
        let times = lineTimes
        condition.unlock()
        let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        try? FileManager.default.removeItem(at: errorFile)
        let signalled = process.terminationReason == .uncaughtSignal
        return ChildResult(exitCode: signalled ? nil : process.terminationStatus,
                           signal: signalled ? process.terminationStatus : nil,
                           lines: captured, lineTimes: times, errorOutput: errors, duration: Date().timeIntervalSince(started), timedOut: timedOut)
    }

    /// Runs a child to its end.
    static func run(_ arguments: [String], environment: [String: String] = [:], timeout: Double = 180,
                    killWhen: ((String) -> Bool)? = nil) throws -> ChildResult {
        try Child(arguments, environment: environment, killWhen: killWhen).wait(timeout: timeout)
    }

    /// Runs a child and kills it `delay` seconds after its first line of output (or at its end, whichever
    /// comes first).
    static func run(_ arguments: [String], environment: [String: String] = [:], killAfter delay: Double,
                    timeout: Double = 180) throws -> ChildResult {
        let child = try Child(arguments, environment: environment)
        if child.waitForLine(timeout: 30, { _ in true }) != nil {
            let deadline = Date().addingTimeInterval(delay)
            while Date() < deadline, child.process.isRunning { usleep(1_000) }
            child.killNow()
        }
        return child.wait(timeout: timeout)
    }
}
