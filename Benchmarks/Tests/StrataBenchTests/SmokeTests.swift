import Foundation
import Testing

/// Runs `strata-bench` at a small size (every scenario, every system, two runs each) and checks that its JSON
/// is well formed and complete: one result per scenario × system with both runs and their spread, every
/// number positive. No timed assertion.
@Suite struct StrataBenchSmokeTests {
    /// The `strata-bench` executable SwiftPM built beside this test bundle.
    static func executable() throws -> URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("strata-bench")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        let bundle = Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("strata-bench")
        if FileManager.default.isExecutableFile(atPath: bundle.path) { return bundle }
        throw SmokeFailure("strata-bench not found near \(CommandLine.arguments[0])")
    }

    struct SmokeFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// A run that names no scenario measures every one but the long ones (`observe-memory`'s million durable
    /// commits), which run only when named or with `--scenarios all`.
    @Test func theDefaultRunLeavesOutTheLongScenarios() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-default-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let json = work.appendingPathComponent("results.json")
        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = ["--records", "200", "--gets", "200", "--open-cycles", "5", "--batch-size", "100", "--systems", "strata",
                             "--json", json.path, "--dir", work.appendingPathComponent("stores").path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let results = try #require(root["results"] as? [[String: Any]])
        let scenarios = Set(results.compactMap { $0["scenario"] as? String })
        #expect(!scenarios.contains("observe-memory"))
        #expect(scenarios.isSuperset(of: ["insert", "open", "scan", "get", "aggregate", "custom-split", "observe-latency", "observe-insert"]))
    }

    @Test func smallRunProducesCompleteJSON() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-smoke-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let json = work.appendingPathComponent("results.json")

        let process = Process()
        process.executableURL = try Self.executable()
        process.arguments = ["--records", "2000", "--gets", "2000", "--open-cycles", "20", "--batch-size", "500", "--runs", "2",
                             "--scenarios", "all", "--json", json.path, "--dir", work.appendingPathComponent("stores").path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let table = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(table.contains("| scenario"))
        #expect(table.contains("× grdb"))
        #expect(table.contains(" spread |"))
        #expect(table.contains("Goals (this run):"))

        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: json))
        let root = try #require(object as? [String: Any])
        #expect(root["records"] as? Int == 2000)
        #expect(root["runs"] as? Int == 2)
        let machine = try #require(root["machine"] as? [String: Any])
        #expect((machine["nproc"] as? Int ?? 0) > 0)
        #expect(!(machine["lmdb"] as? String ?? "").isEmpty)
        #expect(!(machine["sqlite"] as? String ?? "").isEmpty)
        let results = try #require(root["results"] as? [[String: Any]])

        let scenarios = ["insert", "open", "scan", "get", "aggregate", "lightweight-metadata", "lightweight-rewrite", "forced-rewrite", "custom-split"]
        var expected: Set<String> = []
        for s in scenarios {
            for system in ["strata", "lmdb", "sqlite", "grdb"] { expected.insert("\(s)/\(system)") }
        }
        for s in ["insert", "scan", "get"] { expected.insert("\(s)/strata-typed"); expected.insert("\(s)/strata-codable") }
        expected.insert("custom-split/strata-typed")
        expected.insert("custom-split/strata-declared")   // issue 22's declared mapping (a streaming copy)
        expected.insert("custom-split/strata-linked")     // the policy linking in its relationship pass (round 17)
        expected.insert("custom-split/strata-typed-linked")  // the typed stage linking in its relationship pass (round 18)
        expected.insert("scan/strata-views")
        expected.insert("scan/strata-records")
        // Issue 13's rows: the sweep beside raw LMDB's rewrite; old-layout scans and writes during the sweep, Strata's only.
        for key in ["sweep/strata", "sweep/lmdb", "scan-old-layout/strata", "scan-old-layout/strata-typed", "scan-old-layout/strata-views",
                    "writes-during-sweep/strata", "codable-reshape/strata"] { expected.insert(key) }
        // The `strata` tool's rows (its executable, built beside strata-bench).
        expected.insert("cli-import/strata")
        expected.insert("cli-export/strata")
        // Issue 14's rows: observation, Strata's only.
        for key in ["observe-latency/strata", "observe-insert/strata", "observe-memory/strata"] { expected.insert(key) }
        // Issue 26's rows: the typed API on an encrypted store, and its key rotation (that system's only).
        for key in ["insert", "open", "scan", "get", "key-rotation"] { expected.insert("\(key)/strata-encrypted") }
        var seen: Set<String> = []
        for r in results {
            let scenario = try #require(r["scenario"] as? String)
            let system = try #require(r["system"] as? String)
            let key = "\(scenario)/\(system)"
            #expect(seen.insert(key).inserted, "duplicate result \(key)")
            for field in ["seconds", "records_per_second", "peak_rss_bytes", "peak_anon_bytes", "seconds_min", "seconds_max",
                          "records_per_second_min", "records_per_second_max"] {
                let value = (r[field] as? NSNumber)?.doubleValue ?? -1
                #expect(value > 0, "\(key): \(field) = \(value)")
            }
            #expect(r["runs"] as? Int == 2, "\(key): runs")
            let perRun = r["per_run"] as? [[String: Any]] ?? []
            #expect(perRun.count == 2, "\(key): per_run has \(perRun.count) entries")
            for run in perRun {
                #expect(((run["seconds"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): a run's seconds")
            }
            // The median lies within the spread.
            let seconds = (r["seconds"] as? NSNumber)?.doubleValue ?? -1
            let low = (r["seconds_min"] as? NSNumber)?.doubleValue ?? .infinity
            let high = (r["seconds_max"] as? NSNumber)?.doubleValue ?? -1
            #expect(low <= seconds && seconds <= high, "\(key): median \(seconds) outside \(low)–\(high)")
            let extra = r["extra"] as? [String: Any] ?? [:]
            if scenario == "scan-old-layout" {
                #expect(((extra["swept_seconds"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): swept_seconds")
            }
            if scenario == "codable-reshape" {
                #expect(((extra["old_to_swept"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): old_to_swept")
            }
            if scenario == "writes-during-sweep" {
                #expect(((extra["idle_seconds"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): idle_seconds")
            }
            if scenario == "observe-latency" {
                for field in ["in_process_median_seconds", "in_process_p99_seconds", "other_process_median_seconds", "other_process_p99_seconds"] {
                    #expect(((extra[field] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): \(field)")
                }
            }
            if scenario == "observe-insert" {
                for field in ["with_1_ratio", "with_100_ratio"] {
                    #expect(((extra[field] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): \(field)")
                }
            }
            if scenario == "observe-memory" {
                for field in ["anon_start_bytes", "anon_half_bytes", "anon_end_bytes"] {
                    #expect(((extra[field] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): \(field)")
                }
            }
            if scenario.hasPrefix("cli-") {
                // The tool's rows: no peer; the import is compared with the library's insert.
                if scenario == "cli-import" {
                    #expect(((r["ratio_to_strata_insert"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): ratio_to_strata_insert")
                }
                #expect(((extra["tool_peak_rss_bytes"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): tool_peak_rss_bytes")
            } else if scenario == "sweep" && system == "strata" {
                #expect(((r["ratio_to_lmdb"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): ratio_to_lmdb")
            } else if scenario == "key-rotation" {
                #expect(((extra["resealed"] as? NSNumber)?.doubleValue ?? 0) >= 2000, "\(key): resealed")
                #expect(((extra["begin_seconds"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): begin_seconds")
            } else if system.hasPrefix("strata") && !["scan-old-layout", "writes-during-sweep", "codable-reshape"].contains(scenario) && !scenario.hasPrefix("observe-") {
                #expect(((r["ratio_to_lmdb"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): ratio_to_lmdb")
                #expect(((r["ratio_to_sqlite"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): ratio_to_sqlite")
                #expect(((r["ratio_to_grdb"] as? NSNumber)?.doubleValue ?? 0) > 0, "\(key): ratio_to_grdb")
            }
        }
        // Migrations carry explainMigration's estimate beside the measured time.
        for r in results where ["lightweight-metadata", "lightweight-rewrite", "custom-split"].contains(r["scenario"] as? String ?? "")
            && (r["system"] as? String ?? "").hasPrefix("strata") {
            let extra = r["extra"] as? [String: Any] ?? [:]
            for field in ["estimate_seconds", "estimate_bytes", "estimate_ratio"] {
                #expect(((extra[field] as? NSNumber)?.doubleValue ?? 0) > 0, "\(r["scenario"] ?? "")/\(r["system"] ?? ""): \(field)")
            }
        }
        #expect(seen == expected, "missing: \(expected.subtracting(seen).sorted()), extra: \(seen.subtracting(expected).sorted())")
        let goals = try #require(root["goals"] as? [[String: Any]])
        #expect(goals.count >= 7)
        let goalNames = goals.compactMap { $0["goal"] as? String }
        for name in ["cli-import ≥ 0.5× the library's dynamic insert (strata insert)", "cli-export ≥ 1 M objects/s",
                     "estimate within 1.5× of measured on lightweight-rewrite",
                     "codable-reshape (a Codable value's keys changed) opens in ≤ 10 ms",
                     "a commit by another process reaches its observer within 50 ms (p99)",
                     "insert with 100 observers of another entity ≥ 0.95× with none",
                     "anonymous memory flat over the second half of the observed commits (≤ +10 %)",
                     "strata-encrypted ÷ strata-typed ≥ 0.9 on get", "strata-encrypted ÷ strata-typed ≥ 0.9 on scan",
                     "strata-encrypted ÷ strata-typed ≥ 0.85 on insert", "strata-encrypted open ≤ 2× strata's",
                     "strata-encrypted first open ≤ 2× strata's", "key-rotation throughput ≥ 0.5× strata's forced-rewrite",
                     "strata-declared/sqlite ≥ 1.5 on custom-split"] {
            #expect(goalNames.contains(name), "goal \(name) missing: \(goalNames)")
        }
    }
}
