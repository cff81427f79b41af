import BenchCore
import Foundation
import Strata
#if canImport(Glibc)
import Glibc
#endif

/// The `strata` command-line tool as a user runs it: the built executable, started by the measuring child
/// as a process of its own and timed from its start to its exit (opening the store, reading or writing the
/// JSON Lines file, every transaction, closing). The data set is the one `insert` loads.
///
/// - `cli-import`: `strata import STORE FILE --batch-size N` into a new, empty store of the posts model, FILE
///   being what `strata export` wrote of the data set (made while preparing: the store loaded as `insert`
///   loads it, exported by the tool, then replaced by an empty store).
/// - `cli-export`: `strata export STORE > FILE` of the store `insert` builds, into a file next to it.
public enum CLIScenarios {
    /// The `strata` executable: `STRATA_CLI`, or the one SwiftPM built beside `strata-bench`.
    public static func executable() throws -> String {
        if let path = ProcessInfo.processInfo.environment["STRATA_CLI"] { return path }
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let me = n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        let sibling = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("strata").path
        guard FileManager.default.isExecutableFile(atPath: sibling) else {
            throw BenchFailure("the strata executable is not at \(sibling): build it (`swift build -c release --package-path Benchmarks --product strata`) or set STRATA_CLI")
        }
        return sibling
    }

    static func file(_ task: ChildTask) -> String { task.path + ".jsonl" }

    public static func run(_ task: ChildTask) throws -> ChildReport? {
        let url = URL(fileURLWithPath: task.path)
        switch (task.role, task.scenario) {
        case (.observedWriter, _):
            throw BenchFailure("\(task.scenario.rawValue) has no writer for an observer")
        case (.prepare, .cliImport):
            let source = task.path + "-source"
            try? FileManager.default.removeItem(atPath: source)
            try StrataScenarios.load(task, url: URL(fileURLWithPath: source), system: .strata)
            let export = try runTool(["export", source], stdout: file(task))
            guard export.status == 0 else { throw BenchFailure("strata export failed (exit \(export.status)): \(export.stderr)") }
            try FileManager.default.removeItem(atPath: source)
            try Store.open(at: url, schema: try PostModel.v1()).close()
            return nil
        case (.prepare, _):
            try StrataScenarios.load(task, url: url, system: .strata)
            return nil
        case (.measure, .cliImport):
            var tool = ToolRun(status: 0, seconds: 0, maxRSSBytes: 0, stderr: "")
            let report = try measured(path: task.path) {
                tool = try runTool(["import", task.path, file(task), "--batch-size", String(task.batchSize)], stdout: "/dev/null")
                return (tool.seconds, task.records, "records", ["tool_peak_rss_bytes": Double(tool.maxRSSBytes)], [])
            }
            guard tool.status == 0 else { throw BenchFailure("strata import failed (exit \(tool.status)): \(tool.stderr)") }
            try? FileManager.default.removeItem(atPath: file(task))
            try StrataScenarios.verifyPosts(task, url: url, schema: try PostModel.v1())
            return report
        case (.measure, _):
            var tool = ToolRun(status: 0, seconds: 0, maxRSSBytes: 0, stderr: "")
            let report = try measured(path: task.path) {
                tool = try runTool(["export", task.path], stdout: file(task))
                return (tool.seconds, task.records, "records", ["tool_peak_rss_bytes": Double(tool.maxRSSBytes)], [])
            }
            guard tool.status == 0 else { throw BenchFailure("strata export failed (exit \(tool.status)): \(tool.stderr)") }
            try verifyExport(task)
            try? FileManager.default.removeItem(atPath: file(task))
            return report
        }
    }

    /// One line per post, in ID order, each the post's object line.
    static func verifyExport(_ task: ChildTask) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: file(task)))
        let lines = data.split(separator: UInt8(ascii: "\n"))
        guard lines.count == task.records else { throw BenchFailure("the export has \(lines.count) lines, expected \(task.records)") }
        for i in Set([1, task.records]) {
            let line = String(decoding: lines[i - 1], as: UTF8.self)
            let r = task.dataSet.record(i)
            guard line.hasPrefix("{\"entity\":\"Post\",\"id\":\(i),\"attributes\":{\"postID\":\"\(r.uuid.uuidString)\""),
                  line.contains("\"views\":\(r.views)}") else {
                throw BenchFailure("line \(i) of the export is not post \(i): \(line.prefix(200))")
            }
        }
    }

    struct ToolRun {
        var status: Int32
        var seconds: Double
        var maxRSSBytes: Int
        var stderr: String
    }

    /// Runs `strata arguments…` with standard output into `stdout`, and waits for it.
    static func runTool(_ arguments: [String], stdout: String) throws -> ToolRun {
        let executable = try executable()
        let errPath = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-tool-\(getpid()).err").path
        defer { unlink(errPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        let argv = [executable] + arguments
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
        cArgs.append(nil)
        defer { for p in cArgs { free(p) } }
        var pid: pid_t = 0
        let start = Clock.now()
        let rc = posix_spawn(&pid, executable, &actions, nil, cArgs, environ)
        guard rc == 0 else { throw BenchFailure("posix_spawn \(executable): \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 {
            guard errno == EINTR else { throw BenchFailure("wait4: \(String(cString: strerror(errno)))") }
        }
        let seconds = Clock.now() - start
        let exited = status & 0x7F == 0
        let code = exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return ToolRun(status: code, seconds: seconds, maxRSSBytes: Int(usage.ru_maxrss) * 1024, stderr: stderr)
    }
}
