import BenchCore
import BenchGRDB
import BenchLMDB
import BenchSQLite
import BenchStrata
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The hidden child mode: `strata-bench __child <task as JSON>` prepares or measures one scenario of one
/// system and writes its report where the task says.
enum ChildMode {
    static let flag = "__child"

    static func main(_ arguments: [String]) -> Never {
        do {
            guard arguments.count == 3 else { throw BenchFailure("usage: strata-bench \(flag) <task JSON>") }
            let task = try JSONDecoder().decode(ChildTask.self, from: Data(arguments[2].utf8))
            let report: ChildReport?
            switch task.system {
            case .strata, .strataTyped, .strataDeclared, .strataLinked, .strataTypedLinked, .strataCodable, .strataViews, .strataRecords, .strataEncrypted: report = try StrataScenarios.run(task)
            case .lmdb: report = try RawLMDB.run(task)
            case .sqlite: report = try RawSQLite.run(task)
            case .grdb: report = try GRDBScenarios.run(task)
            }
            if let report {
                try JSONEncoder().encode(report).write(to: URL(fileURLWithPath: task.reportPath))
            }
            exit(0)
        } catch {
            note("strata-bench child failed: \(error)")
            exit(1)
        }
    }
}

/// What the parent learns from a child: how it ended and its peak resident set (`ru_maxrss`).
struct ChildOutcome {
    var status: Int32
    var maxRSSBytes: Int
    var seconds: Double
}

/// Runs this executable again as a child, waits for it with `wait4`, and returns its resource usage.
func runChild(_ task: ChildTask) throws -> ChildOutcome {
    let json = String(decoding: try JSONEncoder().encode(task), as: UTF8.self)
    let executable = selfExecutable()
    let argv: [String] = [executable, ChildMode.flag, json]
    var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) }
    cArgs.append(nil)
    defer { for p in cArgs { free(p) } }
    var pid: pid_t = 0
    let start = Clock.now()
    let rc = posix_spawn(&pid, executable, nil, nil, cArgs, environ)
    guard rc == 0 else { throw BenchFailure("posix_spawn: \(String(cString: strerror(rc)))") }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else { throw BenchFailure("wait4: \(String(cString: strerror(errno)))") }
    }
    let exited = status & 0x7F == 0
    let code = exited ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    return ChildOutcome(status: code, maxRSSBytes: Int(usage.ru_maxrss) * 1024, seconds: Clock.now() - start)
}
