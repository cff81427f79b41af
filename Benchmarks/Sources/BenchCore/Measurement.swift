import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The scenarios, in the order the runner measures them.
public enum Scenario: String, CaseIterable, Codable, Sendable {
    case insert
    case open
    case scan
    case get
    /// Aggregates of `views` over every post, each in a read of its own: count, sum, min and max, then the same
    /// over the posts with `views >= AggregateQuery.threshold` (about half). Strata's query aggregates, SQLite's
    /// and GRDB's `SELECT COUNT/SUM/MIN/MAX`, raw LMDB's cursor fold.
    case aggregate
    case lightweightMetadata = "lightweight-metadata"
    /// The widening `views` Int32 → Int64: for Strata a projection (metadata only, issue 13); the peers rewrite.
    case lightweightRewrite = "lightweight-rewrite"
    /// The same widening with every record rewritten during the step (Strata's `rewritesEveryRecord()`):
    /// the rewrite path, against the same rewrites of the peers.
    case forcedRewrite = "forced-rewrite"
    /// Strata: the background sweep run to completion (`performMaintenance`) after the widening as a projection;
    /// raw LMDB: its rewrite of every record, the limit the sweep is judged against.
    case sweep
    /// Strata: a scan of the widened model over records all in the old layout (projected as read), and
    /// (reported beside it) the same scan after the sweep.
    case scanOldLayout = "scan-old-layout"
    /// Strata: app writes (inserts and updates in transactions of 1,000) while the sweep runs, and (beside
    /// it) the same writes on the swept, idle store.
    case writesDuringSweep = "writes-during-sweep"
    /// Strata: the open that migrates a Codable attribute to a new shape (a key renamed, one removed, one added
    /// with a default; both shapes declared): metadata only. Beside it, a scan over the old layout (reshaped
    /// as read) against the same scan after the sweep.
    case codableReshape = "codable-reshape"
    case customSplit = "custom-split"
    /// The `strata` tool importing the data set from the JSON Lines its export wrote, into a new store.
    case cliImport = "cli-import"
    /// The `strata` tool exporting the data set's store as JSON Lines, into a file.
    case cliExport = "cli-export"
    /// Strata: from a commit to the value an observation delivers, in this process and from another one.
    case observeLatency = "observe-latency"
    /// Strata: the insert with no observer, one and a hundred observers of another entity.
    case observeInsert = "observe-insert"
    /// Strata: anonymous memory over up to a million single-update commits on an observed store.
    case observeMemory = "observe-memory"
    /// `strata-encrypted`: an encrypted store's key rotated (`Store.rotateEncryptionKey`) and the sweep that re-seals
    /// every value under the new key run to completion (`performMaintenance`).
    case keyRotation = "key-rotation"

    /// Whether the scenario takes long on a slow disk and so runs only when named (or with `--scenarios all`):
    /// `observe-memory`'s up to a million durable commits took over 16 minutes on one disk.
    public var isLong: Bool { self == .observeMemory }
    /// The scenarios a run measures when none are named: every one but the long ones.
    public static var defaultSet: [Scenario] { allCases.filter { !$0.isLong } }

    /// Whether the scenario reads a store that an earlier step built and leaves it unchanged.
    public var readsBaseStore: Bool { self == .open || self == .scan || self == .get || self == .aggregate }
    /// Whether the scenario works on a store built for it (a migration, or the work that follows one).
    public var isMigration: Bool {
        [.lightweightMetadata, .lightweightRewrite, .forcedRewrite, .sweep, .scanOldLayout, .writesDuringSweep, .codableReshape,
         .customSplit].contains(self)
    }
    /// Whether the scenario runs the `strata` executable (on a store of its own, prepared for every run).
    public var isTool: Bool { self == .cliImport || self == .cliExport }
    /// Whether the scenario measures observation (Strata's only).
    public var isObservation: Bool { self == .observeLatency || self == .observeInsert || self == .observeMemory }
    /// Whether each run gets a store of its own, prepared for it.
    public var hasOwnStore: Bool { isMigration || isTool || isObservation || self == .keyRotation }
    /// Whether a child prepares the scenario's own store before each measurement (`observe-insert` builds its
    /// stores while it measures, as `insert` does).
    public var preparesOwnStore: Bool { hasOwnStore && self != .observeInsert }

    /// The scenario the peers (raw LMDB, SQLite, GRDB) run for this one: they have no projections, so every
    /// widening is their rewrite.
    public var peerEquivalent: Scenario {
        switch self {
        case .forcedRewrite, .sweep: .lightweightRewrite
        default: self
        }
    }
}

/// The systems: Strata's dynamic and typed APIs, raw LMDB (the limit), SQLite and GRDB (the peers).
public enum System: String, CaseIterable, Codable, Sendable {
    case strata
    /// The typed API of macro models (`@Entity`): fields read and written by slot; the split as a typed stage.
    case strataTyped = "strata-typed"
    /// The split as a declared mapping (`EntityMapping.extract`): a streaming copy of records, no per-object closure.
    case strataDeclared = "strata-declared"
    /// The split as the dynamic policy of `strata`, with each post linked to its section in the mapping's
    /// relationship pass — the section found by its source object — as a Core Data policy links in
    /// `createRelationships(forDestination:in:manager:)`: every post is read twice.
    case strataLinked = "strata-linked"
    /// The typed stage of `strata-typed` with each post linked to its section in the mapping's relationship pass,
    /// the section found by its source object (`destinations(for:as:)`): the typed form of `strata-linked`.
    case strataTypedLinked = "strata-typed-linked"
    /// The typed API through `Codable` (`Persistable`), kept as its own row while it exists.
    case strataCodable = "strata-codable"
    /// Scans through `ReadContext.forEachView(of:)`: the dynamic API's zero-copy record views.
    case strataViews = "strata-views"
    /// Scans through `ModelQuery.forEachRecord(_:)`: macro models' borrowed records (fields decoded on access,
    /// texts read in place); the scan's child also times the `sum`/`max`/`average` aggregates.
    case strataRecords = "strata-records"
    /// The macro models' typed API (as `strata-typed`) on an encrypted store (`StoreConfiguration.encryption`, a
    /// fixed test key): AES-GCM on every value, keyed hashes for index keys. Runs `key-rotation` alone.
    case strataEncrypted = "strata-encrypted"
    case lmdb
    case sqlite
    /// GRDB 7 as an app uses it: `Codable` records, a `DatabaseQueue`, a `DatabaseMigrator`.
    case grdb

    /// Whether the system runs `scenario` (the typed API is measured where issue 2 asks for it; views
    /// serve scans).
    public func runs(_ scenario: Scenario) -> Bool {
        switch self {
        case _ where scenario.isObservation: self == .strata
        case _ where scenario == .keyRotation: self == .strataEncrypted
        case .strataEncrypted: [.insert, .open, .scan, .get].contains(scenario)
        case .strataTyped: [.insert, .scan, .get, .scanOldLayout, .customSplit].contains(scenario)
        case .strataDeclared, .strataLinked, .strataTypedLinked: scenario == .customSplit
        case .strataCodable: [.insert, .scan, .get].contains(scenario)
        case .strataViews: scenario == .scan || scenario == .scanOldLayout
        case .strataRecords: scenario == .scan
        case .strata: true
        case .lmdb: ![.scanOldLayout, .writesDuringSweep, .codableReshape].contains(scenario) && !scenario.isTool
        case .sqlite, .grdb: ![.sweep, .scanOldLayout, .writesDuringSweep, .codableReshape].contains(scenario) && !scenario.isTool
        }
    }

    public var isStrata: Bool {
        self == .strata || self == .strataTyped || self == .strataDeclared || self == .strataLinked || self == .strataTypedLinked || self == .strataCodable || self == .strataViews || self == .strataRecords || self == .strataEncrypted
    }
}

/// What one child process is asked to do.
public struct ChildTask: Codable, Sendable {
    public enum Role: String, Codable, Sendable {
        /// Builds the store the measurement needs (not timed).
        case prepare
        /// Does the measured work, and only that.
        case measure
        /// Commits for an observer in another process (`observe-latency`), cued through standard input.
        case observedWriter
    }

    public var role: Role
    public var scenario: Scenario
    public var system: System
    public var records: Int
    public var seed: UInt64
    /// The store's directory (or, for SQLite, the directory holding the database file).
    public var path: String
    /// Where the child writes its ``ChildReport`` as JSON.
    public var reportPath: String
    public var gets: Int
    public var openCycles: Int
    public var batchSize: Int
    /// Records per migration batch, or `nil` for the library's default: Strata's batches end by bytes written
    /// and time (``migrationBatchBytes``), and raw LMDB's copy commits after the same number of bytes.
    public var migrationBatchRecords: Int?

    /// What a migration batch of raw LMDB writes before it commits when ``migrationBatchRecords`` is `nil`:
    /// Strata's default (`MigrationOptions.batchByteLimit`), counted the same way (key, value and 16 bytes of
    /// LMDB's per-entry overhead), so both pay for the same number of durable commits.
    public static let migrationBatchBytes = 32 << 20

    public init(role: Role, scenario: Scenario, system: System, records: Int, seed: UInt64, path: String,
                reportPath: String, gets: Int, openCycles: Int, batchSize: Int, migrationBatchRecords: Int? = nil) {
        self.role = role
        self.scenario = scenario
        self.system = system
        self.records = records
        self.seed = seed
        self.path = path
        self.reportPath = reportPath
        self.gets = gets
        self.openCycles = openCycles
        self.batchSize = batchSize
        self.migrationBatchRecords = migrationBatchRecords
    }

    public var dataSet: DataSet { DataSet(seed: seed, count: records) }

    /// The task a peer runs for this one (see ``Scenario/peerEquivalent``).
    public var asPeer: ChildTask {
        var task = self
        task.scenario = scenario.peerEquivalent
        return task
    }
}

/// What a measured child reports about its work.
public struct ChildReport: Codable, Sendable {
    /// Wall-clock seconds of the measured work (for `open`, the mean of one cycle).
    public var seconds: Double
    /// How many units of work the seconds cover (records, fetches, or 1 for a mean per open).
    public var operations: Int
    /// The unit of ``operations`` (records, fetches, opens).
    public var unit: String
    /// The highest anonymous memory (`RssAnon`) the child had while it worked, and what it had just before.
    public var peakAnonBytes: Int
    public var baselineAnonBytes: Int
    /// Size of the store's files after the work.
    public var fileBytes: Int
    /// Anything else worth reporting (a migration's parts, the first open, a check sum).
    public var extra: [String: Double]
    public var notes: [String]

    public init(seconds: Double, operations: Int, unit: String, peakAnonBytes: Int, baselineAnonBytes: Int,
                fileBytes: Int, extra: [String: Double] = [:], notes: [String] = []) {
        self.seconds = seconds
        self.operations = operations
        self.unit = unit
        self.peakAnonBytes = peakAnonBytes
        self.baselineAnonBytes = baselineAnonBytes
        self.fileBytes = fileBytes
        self.extra = extra
        self.notes = notes
    }
}

/// A failed check inside a scenario: the benchmark stops rather than report a figure for wrong work.
public struct BenchFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Monotonic wall-clock time.
public enum Clock {
    @inline(__always)
    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Runs `body` and returns its result and the seconds it took.
    public static func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = now()
        let result = try body()
        return (result, now() - start)
    }
}

/// Accumulates the time of the measured parts of a loop (the data set's generation stays outside).
public struct Stopwatch {
    public private(set) var seconds = 0.0
    private var started = 0.0
    public init() {}
    @inline(__always) public mutating func start() { started = Clock.now() }
    @inline(__always) public mutating func stop() { seconds += Clock.now() - started }
}

/// Samples this process's anonymous resident memory (`RssAnon` in /proc/self/status) every few
/// milliseconds on a thread of its own, keeping the highest value. LMDB's resident set counts the pages of
/// the file it maps (shared page cache), which grows with the store; anonymous memory is what the process
/// itself allocated (heap, stacks, LMDB's dirty pages), the figure that shows whether memory stays flat.
public final class AnonMemoryProbe: @unchecked Sendable {
    private let lock = NSLock()
    private var peak = 0
    private var running = true
    private var thread: Thread?
    public private(set) var baseline = 0

    public init(intervalMilliseconds: Int = 10) {
        baseline = Self.current()
        peak = baseline
        let interval = Double(intervalMilliseconds) / 1000
        let thread = Thread { [self] in
            while true {
                let v = Self.current()
                lock.lock()
                if v > peak { peak = v }
                let go = running
                lock.unlock()
                if !go { break }
                Thread.sleep(forTimeInterval: interval)
            }
        }
        thread.stackSize = 256 << 10
        self.thread = thread
        thread.start()
    }

    /// Stops sampling (after one last sample) and returns the peak.
    public func stop() -> Int {
        let v = Self.current()
        lock.lock()
        if v > peak { peak = v }
        running = false
        let p = peak
        lock.unlock()
        return p
    }

    /// The current `RssAnon` in bytes (0 where /proc is missing), parsed from the bytes without allocating
    /// much: the probe runs beside the measured work and must cost it next to nothing.
    public static func current() -> Int {
        let fd = open("/proc/self/status", O_RDONLY)
        guard fd >= 0 else { return 0 }
        defer { close(fd) }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 4096) { buffer -> Int in
            let n = read(fd, buffer.baseAddress, 4096)
            guard n > 0 else { return 0 }
            let key = Array("RssAnon:".utf8)
            var i = 0
            while i + key.count < n {
                if buffer[i] == key[0] && (i == 0 || buffer[i - 1] == 10) {
                    var match = true
                    for k in 1..<key.count where buffer[i + k] != key[k] { match = false; break }
                    if match {
                        var j = i + key.count
                        var value = 0
                        while j < n && buffer[j] != 10 {
                            if buffer[j] >= 48 && buffer[j] <= 57 { value = value * 10 + Int(buffer[j] - 48) }
                            j += 1
                        }
                        return value * 1024
                    }
                }
                i += 1
            }
            return 0
        }
    }
}

/// The total size of the regular files under `path` (a store's directory or a database file).
public func diskBytes(_ path: String) -> Int {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
    if !isDirectory.boolValue {
        return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
    var total = 0
    if let e = FileManager.default.enumerator(atPath: path) {
        for case let name as String in e {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + name)
            if attributes?[.type] as? FileAttributeType == .typeRegular { total += attributes?[.size] as? Int ?? 0 }
        }
    }
    return total
}

/// Progress on standard error, at most a few lines per phase.
public final class Progress: @unchecked Sendable {
    private let label: String
    private let total: Int
    private var nextReport: Int
    private let step: Int

    public init(_ label: String, total: Int) {
        self.label = label
        self.total = total
        step = max(1, total / 4)
        nextReport = step
    }

    @inline(__always)
    public func update(_ done: Int) {
        guard done >= nextReport, total >= 200_000 else { return }
        nextReport += step
        FileHandle.standardError.write(Data("    \(label): \(grouped(done))/\(grouped(total))\n".utf8))
    }
}

/// The path of the running executable (what a child of the runner runs again).
public func selfExecutable() -> String {
    var buffer = [CChar](repeating: 0, count: 4096)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    if n > 0 { return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) }
    return CommandLine.arguments[0]
}

public func note(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// `1234567` as `1,234,567`.
public func grouped(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0 && (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return n < 0 ? "-" + out : out
}

/// Runs the measured work of a child: samples anonymous memory around it and builds the report.
public func measured(path: String, _ body: () throws -> (seconds: Double, operations: Int, unit: String,
                                                          extra: [String: Double], notes: [String])) rethrows -> ChildReport {
    let probe = AnonMemoryProbe()
    let result = try body()
    let peak = probe.stop()
    return ChildReport(seconds: result.seconds, operations: result.operations, unit: result.unit,
                       peakAnonBytes: peak, baselineAnonBytes: probe.baseline, fileBytes: diskBytes(path),
                       extra: result.extra, notes: result.notes)
}

/// The `aggregate` scenario's queries: what each system computes, and the answers a data set must give.
public enum AggregateQuery {
    /// The filter's lower bound on `views` (uniform below 1,000,000: about half the posts pass).
    public static let threshold: Int32 = 500_000

    /// The sub-measurements, in the order they run: the four aggregates over every post, then over the filtered ones.
    public static let names = ["count", "sum", "min", "max", "count_filtered", "sum_filtered", "min_filtered", "max_filtered"]

    /// The answers (count, sum, min, max; unfiltered then filtered) for `data`, by brute force; the min and max of
    /// no posts are nil.
    public static func expected(_ data: DataSet) -> [String: Int64?] {
        var all: (count: Int64, sum: Int64, min: Int64?, max: Int64?) = (0, 0, nil, nil)
        var some = all
        func add(_ v: Int64, to a: inout (count: Int64, sum: Int64, min: Int64?, max: Int64?)) {
            a = (a.count + 1, a.sum + v, Swift.min(a.min ?? v, v), Swift.max(a.max ?? v, v))
        }
        if data.count > 0 {
            for i in 1...data.count {
                let v = Int64(data.record(i).views)
                add(v, to: &all)
                if v >= Int64(threshold) { add(v, to: &some) }
            }
        }
        return ["count": all.count, "sum": all.sum, "min": all.min, "max": all.max,
                "count_filtered": some.count, "sum_filtered": some.sum, "min_filtered": some.min, "max_filtered": some.max]
    }

    /// Runs each named measurement (`body(name)` returns its answer) timed on its own, checks every answer
    /// against ``expected(_:)``, and reports the total time with each part in `extra` (`<name>_seconds`).
    public static func measure(_ task: ChildTask, _ body: (String) throws -> Int64?) throws -> ChildReport {
        let expected = expected(task.dataSet)
        var answers: [String: Int64?] = [:]
        var report = try measured(path: task.path) {
            var extra: [String: Double] = [:]
            var total = 0.0
            for name in names {
                let start = Clock.now()
                answers[name] = try body(name)
                let seconds = Clock.now() - start
                extra["\(name)_seconds"] = seconds
                total += seconds
            }
            // The rate is posts per second of the eight aggregates together (the rows compare their total times).
            return (total, Swift.max(1, task.records), "records", extra, [])
        }
        for name in names where answers[name] != expected[name] {
            let answer = answers[name].flatMap { $0 }.map(String.init) ?? "nil", wanted = expected[name].flatMap { $0 }.map(String.init) ?? "nil"
            throw BenchFailure("\(task.system.rawValue) \(name) is \(answer), expected \(wanted)")
        }
        return report
    }
}
