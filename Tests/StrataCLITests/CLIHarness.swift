import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `strata` executable, which sits next to the test bundle in the build directory.
enum CLI {
    static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["STRATA_CLI"] { return URL(fileURLWithPath: path) }
        let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: me).deletingLastPathComponent()
        for _ in 0..<4 {
            // The `strata` product; a package without it names the executable after its target.
            for name in ["strata", "StrataCLI"] {
                let candidate = dir.appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
            dir = dir.deletingLastPathComponent()
        }
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("strata")
    }()

    struct Result: CustomStringConvertible {
        var status: Int32
        var stdout: String
        var stderr: String
        var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) }
        var description: String { "status \(status)\n--- stdout\n\(stdout)\n--- stderr\n\(stderr)" }
    }

    /// Runs `strata args…` to completion, with `stdin` as standard input.
    @discardableResult
    static func run(_ args: [String], stdin: String? = nil, in dir: TempDir) throws -> Result {
        let running = try start(args, stdin: stdin, in: dir)
        return running.wait()
    }

    /// Starts `strata args…`; standard output and error go to files that can be read while it runs.
    static func start(_ args: [String], stdin: String? = nil, in dir: TempDir) throws -> Running {
        let id = UUID().uuidString
        let outURL = dir.url.appendingPathComponent(".out-\(id)")
        let errURL = dir.url.appendingPathComponent(".err-\(id)")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = args
        process.currentDirectoryURL = dir.url
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        if let stdin {
            let inURL = dir.url.appendingPathComponent(".in-\(id)")
            try Data(stdin.utf8).write(to: inURL)
            process.standardInput = try FileHandle(forReadingFrom: inURL)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
        return Running(process: process, outURL: outURL, errURL: errURL)
    }

    final class Running {
        let process: Process
        let outURL: URL
        let errURL: URL

        init(process: Process, outURL: URL, errURL: URL) {
            self.process = process
            self.outURL = outURL
            self.errURL = errURL
        }

        var stderrSoFar: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

        /// Waits until standard error contains `text`; false when the process ended or time ran out first.
        func waitForStderr(containing text: String, timeout: Double = 120) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                if stderrSoFar.contains(text) { return true }
                if !process.isRunning { return stderrSoFar.contains(text) }
                usleep(10_000)
            }
            return false
        }

        func signal(_ sig: Int32) { kill(process.processIdentifier, sig) }

        func wait() -> Result {
            process.waitUntilExit()
            let out = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
            let err = stderrSoFar
            try? FileManager.default.removeItem(at: outURL)
            try? FileManager.default.removeItem(at: errURL)
            let status = process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
            return Result(status: status, stdout: out, stderr: err)
        }
    }
}

/// A temporary directory, removed when released.
final class TempDir {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cli-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    @discardableResult
    func write(_ name: String, _ text: String) throws -> String {
        let p = path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: p))
        return p
    }

    func read(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path(name))) }

    /// Runs `strata args…` here.
    @discardableResult
    func strata(_ args: String..., stdin: String? = nil) throws -> CLI.Result {
        try CLI.run(args, stdin: stdin, in: self)
    }
}

/// Parses JSON text into Foundation objects.
func json(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
}
