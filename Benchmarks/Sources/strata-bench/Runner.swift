import ArgumentParser
import BenchCore
import BenchLMDB
import BenchSQLite
import BenchStrata
import Foundation

/// One measurement, as the JSON file and the table give it: with `--runs N`, the median of its N runs.
struct ResultRow: Codable {
    var scenario: String
    var system: String
    /// Wall-clock seconds of the measured work (`open`: the mean of one open); the median of the runs.
    var seconds: Double
    /// Units of work per second (records; fetches for `get`; opens for `open`), from the median time.
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
    /// `cli-import`: the tool's throughput divided by the library's dynamic insert (`insert` · `strata`) in
    /// the same run.
    var ratioToStrataInsert: Double? = nil
    var extra: [String: Double]
    var notes: [String]
    /// How many times the measurement ran (each in its own child), the fastest and slowest run, and every
    /// run's figures in order. Optional so that files written before `--runs` still decode.
    var runs: Int?
    var secondsMin: Double?
    var secondsMax: Double?
    var recordsPerSecondMin: Double?
    var recordsPerSecondMax: Double?
    var perRun: [RunFigures]?
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
    /// Runs of each measurement (`--runs`); nil in files written before the option.
    var runs: Int?
    var seed: UInt64
    var gets: Int
    var openCycles: Int
    var batchSize: Int
    /// Records per migration batch (`--migration-batch-size`); nil: the library's batching by bytes and time.
    var migrationBatchSize: Int?
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

    @Option(help: "Comma-separated scenarios: \(Scenario.allCases.map(\.rawValue).joined(separator: ",")), or all. By default every one but \(Scenario.allCases.filter(\.isLong).map(\.rawValue).joined(separator: ", ")) (long on a slow disk: name it, or use all).")
    var scenarios: String = Scenario.defaultSet.map(\.rawValue).joined(separator: ",")

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

    @Option(help: "Records per write transaction of the insert scenarios.")
    var batchSize: Int = 10_000

    @Option(help: "Records per migration batch (default: Strata's own batching, by bytes written and time; raw LMDB commits after as many bytes).")
    var migrationBatchSize: Int?

    @Option(help: "Measure each scenario and system this many times, each in a fresh child (the systems take turns within each run); the table gives the median and the spread.")
    var runs: Int = 1

    @Option(help: "A JSON file of an earlier run (another --records) to compare open, metadata-migration time and migration memory with.")
    var compare: String?

    func validate() throws {
        guard records >= 1 else { throw ValidationError("--records must be at least 1") }
        guard gets >= 1, openCycles >= 1, batchSize >= 1, runs >= 1, (migrationBatchSize ?? 1) >= 1 else {
            throw ValidationError("--gets, --open-cycles, --batch-size, --migration-batch-size and --runs must be positive")
        }
        _ = try parsedScenarios()
        _ = try parsedSystems()
    }

    func parsedScenarios() throws -> [Scenario] {
        let names = scenarios.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if names == ["all"] { return Scenario.allCases }
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
        if scenarioList.contains(where: \.isTool) && systemList.contains(.strata) {
            // Found before anything runs: the tool's rows need the built executable.
            _ = try CLIScenarios.executable()
        }
        #if DEBUG
        note("strata-bench: this is a debug build; measure with `swift run -c release`")
        #endif
        let fm = FileManager.default
        let ownDirectory = dir == nil
        let root = dir ?? fm.temporaryDirectory.appendingPathComponent("strata-bench-\(getpid())").path
        try fm.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { if ownDirectory { try? fm.removeItem(atPath: root) } }

        let loadAtStart = Report.loadAverage()
        // Scenario by scenario; within a scenario, run by run; within a run, every system in turn, so that a
        // change in the machine's load touches every system's figures alike.
        let jobs = scenarioList.flatMap { scenario in
            (1...runs).flatMap { run in systemList.filter { $0.runs(scenario) }.map { (scenario, run, $0) } }
        }
        note("strata-bench: \(grouped(records)) records, seed \(seed), \(jobs.count) measurements"
             + (runs > 1 ? " (\(runs) runs each)" : "") + ", stores in \(root)")
        var samples: [String: [Sample]] = [:]
        var folds: [Scenario: (system: System, fold: Double)] = [:]
        var baseReady: Set<System> = []
        let lastRead = scenarioList.last(where: \.readsBaseStore)

        for (n, (scenario, run, system)) in jobs.enumerated() {
            let tag = "[\(n + 1)/\(jobs.count)] \(scenario.rawValue) · \(system.rawValue)" + (runs > 1 ? " (run \(run)/\(runs))" : "")
            let base = root + "/base-\(system.rawValue)"
            // Insert builds the base store that open, scan and get then read (each run of insert builds it
            // anew); migrations get a store each, prepared for every run.
            let path = scenario.hasOwnStore ? root + "/\(scenario.rawValue)-\(system.rawValue)" : base
            func task(_ role: ChildTask.Role) -> ChildTask {
                ChildTask(role: role, scenario: scenario, system: system, records: records, seed: seed, path: path,
                          reportPath: root + "/report.json", gets: gets, openCycles: openCycles, batchSize: batchSize,
                          migrationBatchRecords: migrationBatchSize)
            }
            if scenario == .insert || scenario.hasOwnStore {
                try? fm.removeItem(atPath: path)
            }
            let needsPreparation = scenario.preparesOwnStore || (scenario.readsBaseStore && !baseReady.contains(system))
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
            // Every system folds the same fields of the same records: a different checksum is wrong work.
            if let fold = report.extra["fold"] {
                if let first = folds[scenario], first.fold != fold {
                    throw BenchFailure("\(tag): checksum \(fold) differs from \(first.system.rawValue)'s \(first.fold)")
                }
                folds[scenario] = folds[scenario] ?? (system, fold)
            }
            samples["\(scenario.rawValue)/\(system.rawValue)", default: []].append(Sample(report: report, maxRSSBytes: outcome.maxRSSBytes))
            let rate = Double(report.operations) / max(report.seconds, 1e-12)
            note("\(tag): \(format(seconds: report.seconds)), \(format(rate: rate)) \(report.unit)/s, "
                 + "peak RSS \(format(bytes: outcome.maxRSSBytes)), peak anon \(format(bytes: report.peakAnonBytes))")
            if scenario == .insert { baseReady.insert(system) }
            if scenario.hasOwnStore {
                try? fm.removeItem(atPath: path)
                try? fm.removeItem(atPath: path + ".jsonl")
            }
            // The base store is no longer needed once the last scenario reading it has run for this system.
            if scenario == lastRead && run == runs { try? fm.removeItem(atPath: base) }
        }
        for s in System.allCases { try? fm.removeItem(atPath: root + "/base-\(s.rawValue)") }
        try? fm.removeItem(atPath: root + "/report.json")

        var rows: [ResultRow] = []
        for scenario in scenarioList {
            for system in systemList where system.runs(scenario) {
                guard let s = samples["\(scenario.rawValue)/\(system.rawValue)"], !s.isEmpty else { continue }
                rows.append(ResultRow(scenario: scenario, system: system, samples: s))
            }
        }
        rows = Report.addRatios(rows)
        let goals = Report.goals(rows)
        let machine = Report.machine(directory: root, loadAtStart: loadAtStart)
        let results = Results(records: records, runs: runs, seed: seed, gets: gets, openCycles: openCycles, batchSize: batchSize,
                              migrationBatchSize: migrationBatchSize,
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
