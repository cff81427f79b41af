import ArgumentParser
import Foundation
import Strata
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Exits the process (the C library's exit, which the names of ParsableCommand would shadow).
func terminate(_ status: Int32) -> Never { exit(status) }

/// write(2), under a name that methods called `write` do not shadow.
func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int { write(fd, buffer, count) }

// MARK: Failures

/// A failure the tool reports on standard error as one line, with its exit status.
struct CLIFailure: Error {
    /// What happened and what to do, on one line.
    var message: String
    /// 1: the command failed or found problems; 2: bad usage.
    var status: Int32 = 1

    init(_ message: String, status: Int32 = 1) {
        self.message = message
        self.status = status
    }

    /// Exit silently with `status` (the command has already said everything).
    static func quiet(_ status: Int32) -> CLIFailure { CLIFailure("", status: status) }
}

/// Messages for the library's errors, worded for the command line.
enum ErrorText {
    static func describe(_ error: any Error, store: String? = nil, modelFile: String? = nil) -> String {
        switch error {
        case let failure as CLIFailure:
            return failure.message
        case let error as StoreError:
            return describe(error, store: store)
        case let error as MigrationError:
            return describe(error)
        case let error as SchemaValidationError:
            let what = modelFile.map { "\($0) is not a valid Strata schema" } ?? "the schema is not valid"
            return "\(what): " + error.problems.map { "\($0)" }.joined(separator: "; ") + "; fix the file (see `strata schema STORE` for the form)"
        default:
            return oneLine(String(describing: error))
        }
    }

    static func describe(_ error: StoreError, store: String?) -> String {
        switch error {
        case .notFound(let path):
            return "no store exists at \(path); check the path, or make one with `strata create \(store ?? path) --schema MODEL.json`"
        case .notAStore(let path, let reason):
            return "\(path) is not a Strata store (\(reason)); check the path"
        case .corrupted(let path, let reason):
            return "the store at \(path) is damaged (\(reason)); nothing was written to it. Restore it from a backup"
        case .unsupportedFormat(let path, let found, let supported):
            return "the store at \(path) has format \(found), newer than the \(supported) this strata reads; nothing was written to it. Use a newer strata tool"
        case .storeNewerThanModel(let storeVersion, let app):
            return "the store is at model \(storeVersion), newer than the given model \(app); nothing was written to it. Give the model file of \(storeVersion) or a later version"
        case .schemaMismatch(let version):
            return "the store records model \(version) with other version hashes than the given \(version): the model file was changed after stores were written with it. Give the changed model a new versionIdentifier"
        case .migrationInProgress(let pid):
            return "another process\(pid.map { " (pid \($0))" } ?? "") is migrating the store; wait until it is done (`strata info \(store ?? "STORE")` shows its progress)"
        case .corruptedRecord(let entity, let id, let reason):
            return "the stored \(entity) \(id) is damaged (\(reason)) and cannot be read; `strata verify \(store ?? "STORE")` lists every damaged record"
        case .permissionDenied(let path):
            return "permission denied for \(path); run strata as a user who may read and write the store's directory"
        default:
            return oneLine(error.description)
        }
    }

    static func describe(_ error: MigrationError) -> String {
        switch error {
        case .cannotInfer(let s, let d, let diagnostics):
            return "the migration \(s) → \(d) cannot be inferred, nothing was changed: " + diagnostics.map { "\($0)" }.joined(separator: "; ")
        case .interrupted(let s, let d, let phase, let entity, let underlying):
            var text = oneLine(underlying.description)
            while text.hasSuffix(".") { text.removeLast() }
            return "the migration \(s) → \(d) stopped during \(phase)\(entity.map { " of \($0)" } ?? ""): \(text); the store still reads as \(s), and its committed batches are kept"
        case .dataCheckFailed(let s, let d, let diagnostics):
            return "the stored data does not allow the migration \(s) → \(d); the store is unchanged at \(s): " + diagnostics.map { "\($0)" }.joined(separator: "; ")
        default:
            return oneLine(error.description)
        }
    }

    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }.joined(separator: " ")
    }
}

// MARK: Output

/// Standard output and standard error, written with write(2): nothing is buffered between them.
enum Console {
    /// Writes all of `bytes` to a file descriptor.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var offset = 0
        while offset < bytes.count {
            let n = systemWrite(fd, base + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += n
        }
    }

    static func write(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { write(fd, UnsafeRawBufferPointer($0)) }
    }

    /// A line on standard output.
    static func out(_ text: String) {
        write(1, text.hasSuffix("\n") ? text : text + "\n")
    }

    /// A line on standard error.
    static func error(_ text: String) {
        write(2, text.hasSuffix("\n") ? text : text + "\n")
    }

    /// Writes to standard error without a newline (progress bars).
    static func errorRaw(_ text: String) {
        write(2, text)
    }

    static var stderrIsTerminal: Bool { isatty(2) != 0 }
}

/// Buffered standard output for large outputs (exports).
final class OutputBuffer {
    private var bytes: [UInt8] = []
    private let limit = 1 << 16

    init() { bytes.reserveCapacity(limit + 4096) }

    func append(_ data: [UInt8]) {
        bytes.append(contentsOf: data)
        if bytes.count >= limit { flush() }
    }

    func flush() {
        guard !bytes.isEmpty else { return }
        bytes.withUnsafeBytes { Console.write(1, $0) }
        bytes.removeAll(keepingCapacity: true)
    }
}

// MARK: Stores and models

enum StoreAccess {
    /// The URL of a store path given on the command line.
    static func url(_ path: String) -> URL {
        URL(fileURLWithPath: path).standardizedFileURL
    }

    /// Opens an existing store with the model recorded in it. Never creates a store; read-only opens never
    /// write to `data.mdb`.
    static func openRecorded(_ path: String, readOnly: Bool) throws -> Store {
        var configuration = StoreConfiguration()
        configuration.createIfMissing = false
        configuration.readOnly = readOnly
        do {
            return try Store.openRecorded(at: url(path), configuration: configuration)
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: path))
        }
    }

    /// A read-only configuration for the static migration functions that only inspect.
    static var inspecting: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.createIfMissing = false
        configuration.readOnly = true
        return configuration
    }

    /// Reads and validates a model file in the schema JSON form.
    static func loadModel(_ path: String) throws -> Schema {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw CLIFailure("cannot read the model file \(path); check the path")
        }
        do {
            return try Schema(jsonData: data)
        } catch {
            throw CLIFailure(ErrorText.describe(error, modelFile: path))
        }
    }

    /// Refuses a store with an unfinished migration, for commands that write objects.
    static func refuseUnfinishedMigration(_ store: Store, path: String) throws {
        let info: StoreInfo
        do { info = try store.info() } catch { throw CLIFailure(ErrorText.describe(error, store: path)) }
        if let m = info.migration {
            throw CLIFailure("the store has an unfinished migration \(m.sourceVersion) → \(m.destinationVersion); finish it first with `strata migrate \(path) --to MODEL.json` (the model file of \(m.destinationVersion))")
        }
    }
}

// MARK: Formatting

enum Format {
    static func count(_ n: Int) -> String {
        let digits = String(n.magnitude)
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    static func plural(_ n: Int, _ word: String, _ plural: String? = nil) -> String {
        "\(count(n)) \(n == 1 ? word : (plural ?? word + "s"))"
    }

    static func bytes(_ n: Int) -> String {
        let units = ["bytes", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(n)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) bytes" : String(format: "%.1f %@", value, units[unit])
    }

    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "?" }
        if seconds < 10 { return String(format: "%.1f s", seconds) }
        let s = Int(seconds.rounded())
        if s < 3600 { return String(format: "%d:%02d", s / 60, s % 60) }
        return String(format: "%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60)
    }

    static func date(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }

    static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }
}

/// A monotonic clock in seconds.
func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

// MARK: Ctrl-C

/// Ctrl-C (SIGINT) as a request to stop at the next safe point; a second one exits at once.
enum Interrupts {
    private static let count = Atomic<Int>(0)

    /// Whether Ctrl-C was pressed.
    static var requested: Bool { count.load(ordering: .relaxed) > 0 }

    /// Catches SIGINT until the returned source is cancelled.
    static func install(first: String, second: String) -> any DispatchSourceSignal {
        signal(SIGINT, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler {
            if count.add(1, ordering: .relaxed).newValue > 1 {
                Console.error("\nstrata: " + second)
                _exit(1)
            }
            Console.error("\nstrata: " + first)
        }
        source.resume()
        return source
    }
}
