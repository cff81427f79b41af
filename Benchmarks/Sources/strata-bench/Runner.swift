import ArgumentParser
import BenchCore
import BenchLMDB
import BenchSQLite
import Foundation

/// One measurement, as the JSON file and the table give it.
struct ResultRow: Codable {
    var scenario: String
    var system: String
    /// Wall-clock seconds of the measured work (`open`: the mean of one open).
    var seconds: Double
    /// Units of work per second (records; fetches for `get`; opens for `open`).
    var recordsPerSecond: Double
    /// `ru_maxrss` of the measuring child: includes the store's file pages LMDB mapped (shared page cache).
    var peakRssBytes: Int
    /// The child's highest anonymous memory (`RssAnon`) while it worked, and its value just before.
    var peakAnonBytes: Int
    var baselineAnonBytes: Int
    var operations: Int
    var unit: String
    var fileBytes: Int
    /// Strata rows: Strata's throughput divided by raw LMDB's, SQLite's and GRDB's in the same run.
    var ratioToLmdb: Double?
    var ratioToSqlite: Double?
    var ratioToGrdb: Double?
    var extra: [String: Double]
    var notes: [String]
}

struct Machine: Codable {
    var nproc: Int
    var cpu: String
    var memoryBytes: UInt64
    var os: String
    var kernel: String
    var disk: String
    var lmdb: String
    var sqlite: String
    var build: String
    var date: String
    /// `/proc/loadavg` when the run started and ended (the machine may be shared).
    var loadAverageAtStart: String?
    var loadAverageAtEnd: String?
}

struct Goal: Codable {
    var goal: String
    var measured: String
    var met: Bool?
}

struct Results: Codable {
    var records: Int
    var seed: UInt64
    var gets: Int
    var openCycles: Int
    var batchSize: Int
    var machine: Machine
    var results: [ResultRow]
    var goals: [Goal]
}

struct StrataBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata-bench",
        abstract: "Strata beside raw LMDB (the limit), SQLite and GRDB (the peers): insert, open, scan, get and migrations.",
        discussion: """
            Each measurement runs in a fresh child process on a store built for it by another child; the table \
            goes to standard output, progress to standard error. Build in release mode: \
            swift run -c release --package-path Benchmarks strata-bench --records 1000000
            """)

    @Option(help: "Records in the data set.")
    var records: Int = 1_000_000

    @Option(help: "Write the results as JSON to this file.")
    var json: String?

    @Option(help: "Comma-separated scenarios: \(Scenario.allCases.map(\.rawValue).joined(separator: ",")).")
    var scenarios: String = Scenario.allCases.map(\.rawValue).joined(separator: ",")

    @Option(help: "Comma-separated systems: \(System.allCases.map(\.rawValue).joined(separator: ",")) (strata-typed runs insert, scan and get).")
    var systems: String = System.allCases.map(\.rawValue).joined(separator: ",")

    @Option(help: "Seed of the data set.")
    var seed: UInt64 = 42

    @Option(help: "Directory for the stores (default: a new directory in the temporary directory, removed at the end).")
    var dir: String?

    @Option(help: "Random fetches by ID in the get scenario.")
    var gets: Int = 1_000_000

    @Option(help: "Open cycles averaged in the open scenario.")
    var openCycles: Int = 1000

    @Option(help: "Records per write transaction (inserts and migration batches).")
    var batchSize: Int = 10_000

    @Option(help: "A JSON file of an earlier run (another --records) to compare open, metadata-migration time and migration memory with.")
    var compare: String?

    func validate() throws {
        guard records >= 1 else { throw ValidationError("--records must be at least 1") }
        guard gets >= 1, openCycles >= 1, batchSize >= 1 else { throw ValidationError("--gets, --open-cycles and --batch-size must be positive") }
        _ = try parsedScenarios()
        _ = try parsedSystems()
    }

    func parsedScenarios() throws -> [Scenario] {
        let names = scenarios.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let chosen = try names.map { name -> Scenario in
            guard let s = Scenario(rawValue: name) else { throw ValidationError("unknown scenario \(name)") }
            return s
        }
        return Scenario.allCases.filter(chosen.contains)
    }

    func parsedSystems() throws -> [System] {
        let names = systems.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let chosen = try names.map { name -> System in
            guard let s = System(rawValue: name) else { throw ValidationError("unknown system \(name)") }
            return s
        }
        return System.allCases.filter(chosen.contains)
    }

    func run() throws {
        let scenarioList = try parsedScenarios()
        let systemList = try parsedSystems()
        #if DEBUG
        note("strata-bench: this is a debug build; measure with `swift run -c release`")
        #endif
        let fm = FileManager.default
        let ownDirectory = dir == nil
        let root = dir ?? fm.temporaryDirectory.appendingPathComponent("strata-bench-\(getpid())").path
        try fm.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { if ownDirectory { try? fm.removeItem(atPath: root) } }

        let loadAtStart = Report.loadAverage()
        let jobs = scenarioList.flatMap { s in systemList.filter { $0.runs(s) }.map { (s, $0) } }
        note("strata-bench: \(grouped(records)) records, seed \(seed), \(jobs.count) measurements, stores in \(root)")
        var rows: [ResultRow] = []
        var baseReady: Set<System> = []
        let lastRead = scenarioList.last(where: \.readsBaseStore)

        for (n, (scenario, system)) in jobs.enumerated() {
            let tag = "[\(n + 1)/\(jobs.count)] \(scenario.rawValue) · \(system.rawValue)"
            let base = root + "/base-\(system.rawValue)"
            // Insert builds the base store that open, scan and get then read; migrations get a store each.
            let path = scenario.isMigration ? root + "/\(scenario.rawValue)-\(system.rawValue)" : base
            func task(_ role: ChildTask.Role) -> ChildTask {
                ChildTask(role: role, scenario: scenario, system: system, records: records, seed: seed, path: path,
                          reportPath: root + "/report.json", gets: gets, openCycles: openCycles, batchSize: batchSize)
            }
            if scenario == .insert || scenario.isMigration {
                try? fm.removeItem(atPath: path)
            }
            let needsPreparation = scenario.isMigration || (scenario.readsBaseStore && !baseReady.contains(system))
            if needsPreparation {
                note("\(tag): preparing \(grouped(records)) records")
                try? fm.removeItem(atPath: path)
                let outcome = try runChild(task(.prepare))
                guard outcome.status == 0 else { throw BenchFailure("\(tag): preparation failed (exit \(outcome.status))") }
                note("\(tag): prepared in \(format(seconds: outcome.seconds))")
                if scenario.readsBaseStore { baseReady.insert(system) }
            }
            note("\(tag): measuring")
            try? fm.removeItem(atPath: root + "/report.json")
            let outcome = try runChild(task(.measure))
            guard outcome.status == 0 else { throw BenchFailure("\(tag): measurement failed (exit \(outcome.status))") }
            let report = try JSONDecoder().decode(ChildReport.self, from: Data(contentsOf: URL(fileURLWithPath: root + "/report.json")))
            let row = ResultRow(
                scenario: scenario.rawValue, system: system.rawValue, seconds: report.seconds,
                recordsPerSecond: Double(report.operations) / max(report.seconds, 1e-12),
                peakRssBytes: outcome.maxRSSBytes, peakAnonBytes: report.peakAnonBytes,
                baselineAnonBytes: report.baselineAnonBytes, operations: report.operations, unit: report.unit,
                fileBytes: report.fileBytes, ratioToLmdb: nil, ratioToSqlite: nil, ratioToGrdb: nil, extra: report.extra, notes: report.notes)
            rows.append(row)
            note("\(tag): \(format(seconds: row.seconds)), \(format(rate: row.recordsPerSecond)) \(row.unit)/s, "
                 + "peak RSS \(format(bytes: row.peakRssBytes)), peak anon \(format(bytes: row.peakAnonBytes))")
            if scenario == .insert { baseReady.insert(system) }
            if scenario.isMigration { try? fm.removeItem(atPath: path) }
            // The base store is no longer needed once the last scenario reading it has run for this system.
            if scenario == lastRead { try? fm.removeItem(atPath: base) }
        }
        for s in System.allCases { try? fm.removeItem(atPath: root + "/base-\(s.rawValue)") }
        try? fm.removeItem(atPath: root + "/report.json")

        rows = Report.addRatios(rows)
        let goals = Report.goals(rows)
        let machine = Report.machine(directory: root, loadAtStart: loadAtStart)
        let results = Results(records: records, seed: seed, gets: gets, openCycles: openCycles, batchSize: batchSize,
                              machine: machine, results: rows, goals: goals)
        print(Report.table(results))
        if let compare {
            let earlier = try Report.decoder.decode(Results.self, from: Data(contentsOf: URL(fileURLWithPath: compare)))
            print(Report.comparison(results, earlier))
        }
        if let json {
            try Report.encoder.encode(results).write(to: URL(fileURLWithPath: json))
            note("strata-bench: results written to \(json)")
        }
    }
}
