@_spi(Testing) import Strata
import Foundation
import StrataTortureKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Writes a line to standard output at once (no buffering: the parent must see every acknowledgement
/// that was printed before the process died).
func emit(_ line: String) {
    var bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress! + offset, $0.count - offset) }
        if n <= 0 {
            if n < 0 && errno == EINTR { continue }
            return
        }
        offset += n
    }
    bytes.removeAll()
}

/// The command line: `strata-torture <command> <path> [--option value]…`.
struct Options {
    var command: String
    var path: String
    var values: [String: String] = [:]
    var flags: Set<String> = []

    init(_ arguments: [String]) throws {
        guard arguments.count >= 2 else { throw TortureError("usage: strata-torture <command> <path> [--option value]…") }
        command = arguments[0]
        path = arguments[1]
        var i = 2
        while i < arguments.count {
            let a = arguments[i]
            guard a.hasPrefix("--") else { throw TortureError("unexpected argument \(a)") }
            let name = String(a.dropFirst(2))
            if i + 1 < arguments.count, !arguments[i + 1].hasPrefix("--") {
                values[name] = arguments[i + 1]
                i += 2
            } else {
                flags.insert(name)
                i += 1
            }
        }
    }

    func int(_ name: String, _ fallback: Int) -> Int { values[name].flatMap { Int($0) } ?? fallback }
    func string(_ name: String, _ fallback: String) -> String { values[name] ?? fallback }
    var url: URL { URL(fileURLWithPath: path) }
    var seed: UInt64 { UInt64(int("seed", 1)) }
    var count: Int { int("count", 2000) }
    var batch: Int { int("batch", 100) }
    var plan: String { string("plan", "v1") }
    var throwAt: Int64? { values["throw-at"].flatMap { Int64($0) } }
    var trapAt: Int64? { values["trap-at"].flatMap { Int64($0) } }
    /// `--markers will:1,did:1`: the markers custom stages must have left (instead of the plan's default).
    var markers: [String: Int]? {
        values["markers"].map { spec in
            var out: [String: Int] = [:]
            for item in spec.split(separator: ",") {
                let kv = item.split(separator: ":")
                if kv.count == 2, let n = Int(kv[1]) { out[String(kv[0])] = n }
            }
            return out
        }
    }

    /// The store configuration the options ask for.
    func configuration() -> StoreConfiguration {
        var configuration = TortureModels.configuration(plan: plan)
        if flags.contains("maintenance") { configuration.backgroundMaintenance = true }
        configuration.migration.batchSize = batch
        if let max = values["map-max"].flatMap(Int.init) { configuration.maximumMapSize = max }
        if let initial = values["map-initial"].flatMap(Int.init) { configuration.initialMapSize = initial }
        if let wait = values["map-wait"].flatMap(Double.init) { configuration.mapGrowthWaitSeconds = wait }
        if let readers = values["max-readers"].flatMap(Int.init) { configuration.maximumReaders = readers }
        if flags.contains("read-only") { configuration.readOnly = true }
        if flags.contains("no-create") { configuration.createIfMissing = false }
        if let key = values["key"] { configuration.encryption = RotationKeys.encryption(key) }
        return configuration
    }
}

/// The state of a store in one line, as acknowledgements and crash-image checks compare it.
func signature(_ url: URL) -> String {
    do {
        return signature(of: try ReliabilityProbe.snapshot(at: url))
    } catch {
        return "none"
    }
}

func signature(of s: ReliabilityProbe.Snapshot) -> String {
    let journal = s.journal.map { "\($0.taskIndex)/\($0.batches)/\($0.cursor.map(String.init) ?? "-")/\($0.completed)" } ?? "-"
    let counts = s.entityCounts.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
    return "v=\(s.modelVersion) g=\(s.generation) m=\(s.migrating ? 1 : 0) t=\(s.lastTransactionID) j=\(journal) c=\(counts) n=\(s.counter)"
}

let acknowledgements = Mutex(0)

/// Prints `ACK <n> <signature>` after every commit of this process (and, with `trace`, `POINT <name>` at
/// every fault point), through the fault injection trace.
func installAcknowledgements(_ url: URL, trace: Bool) {
    FaultInjection.tracePoints { name in
        if name == "txn.afterCommit" {
            let n = acknowledgements.withLock { n -> Int in n += 1; return n }
            emit("ACK \(n) \(signature(url))")
        } else if trace {
            emit("POINT \(name)")
        }
    }
}

/// Applies `--lmdb-fault call:code:after:times` options (repeatable through commas).
func installLMDBFaults(_ spec: String?) throws {
    guard let spec, !spec.isEmpty else { return }
    for item in spec.split(separator: ",") {
        let parts = item.split(separator: ":").map(String.init)
        guard parts.count >= 2, let call = FaultInjection.Call(rawValue: parts[0]) else { throw TortureError("bad --lmdb-fault \(item)") }
        let codes: [String: Int32] = ["MAP_FULL": -30792, "READERS_FULL": -30790, "PANIC": -30795, "TXN_FULL": -30788,
                                      "EIO": EIO, "ENOSPC": ENOSPC, "CORRUPTED": -30796, "MAP_RESIZED": -30785]
        guard let code = codes[parts[1]] ?? Int32(parts[1]) else { throw TortureError("bad code in \(item)") }
        let after = parts.count > 2 ? Int(parts[2]) ?? 0 : 0
        let times = parts.count > 3 ? Int(parts[3]) ?? 1 : 1
        FaultInjection.failLMDB(call, code: code, after: after, times: times)
    }
}

/// Reports an error and returns the exit status: 2 for Strata's typed errors, 3 for anything else.
func report(_ error: any Error) -> Int32 {
    let (typed, kind) = ErrorReport.classify(error)
    emit("ERR \(typed ? "typed" : "untyped") \(kind) \(String(describing: error).replacingOccurrences(of: "\n", with: " ").prefix(300))")
    return typed ? 2 : 3
}

func json<T: Encodable>(_ value: T) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return (try? encoder.encode(value)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
}

/// Copies a store directory's data file (and nothing else) into a new directory.
func copyStore(_ source: URL, to destination: URL) throws {
    let fm = FileManager.default
    try? fm.removeItem(at: destination)
    try fm.createDirectory(at: destination, withIntermediateDirectories: true)
    try fm.copyItem(at: source.appendingPathComponent("data.mdb"), to: destination.appendingPathComponent("data.mdb"))
}
