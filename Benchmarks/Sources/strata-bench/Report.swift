import BenchCore
import BenchLMDB
import BenchSQLite
import Foundation
#if canImport(Glibc)
import Glibc
#endif

enum Report {
    static var encoder: JSONEncoder {
        let e = JSONEncoder()
        e.keyEncodingStrategy = .convertToSnakeCase
        e.outputFormatting = [.prettyPrinted, .sortedKeys]
        return e
    }

    static var decoder: JSONDecoder {
        let d = JSONDecoder()
        d.keyDecodingStrategy = .convertFromSnakeCase
        return d
    }

    // MARK: Ratios and goals

    static func row(_ rows: [ResultRow], _ scenario: Scenario, _ system: System) -> ResultRow? {
        rows.first { $0.scenario == scenario.rawValue && $0.system == system.rawValue }
    }

    /// Each Strata row's throughput divided by raw LMDB's, SQLite's and GRDB's in the same scenario: ≥ 1 is
    /// faster.
    static func addRatios(_ rows: [ResultRow]) -> [ResultRow] {
        rows.map { r in
            var r = r
            guard System(rawValue: r.system)?.isStrata == true,
                  let scenario = Scenario(rawValue: r.scenario) else { return r }
            if let l = row(rows, scenario, .lmdb) { r.ratioToLmdb = r.recordsPerSecond / l.recordsPerSecond }
            if let s = row(rows, scenario, .sqlite) { r.ratioToSqlite = r.recordsPerSecond / s.recordsPerSecond }
            if let g = row(rows, scenario, .grdb) { r.ratioToGrdb = r.recordsPerSecond / g.recordsPerSecond }
            if scenario == .cliImport, let i = row(rows, .insert, .strata) { r.ratioToStrataInsert = r.recordsPerSecond / i.recordsPerSecond }
            return r
        }
    }

    static func goals(_ rows: [ResultRow]) -> [Goal] {
        var goals: [Goal] = []
        func ratio(_ scenario: Scenario, to other: System, atLeast bound: Double, system: System = .strata) {
            let name = "\(system.rawValue)/\(other.rawValue) ≥ \(bound) on \(scenario.rawValue)"
            guard let r = row(rows, scenario, system),
                  let v = other == .lmdb ? r.ratioToLmdb : (other == .grdb ? r.ratioToGrdb : r.ratioToSqlite) else {
                goals.append(Goal(goal: name, measured: "not measured", met: nil))
                return
            }
            goals.append(Goal(goal: name, measured: String(format: "%.2f", v), met: v >= bound))
        }
        // Issue 17: the dynamic API near the limit, migrations past the peers.
        ratio(.insert, to: .lmdb, atLeast: 0.8)
        ratio(.scan, to: .lmdb, atLeast: 0.35)
        // The rewrite path (every record rewritten during the step), now that a widening is a projection.
        ratio(.forcedRewrite, to: .lmdb, atLeast: 0.5)
        ratio(.forcedRewrite, to: .sqlite, atLeast: 3)
        ratio(.customSplit, to: .sqlite, atLeast: 1.5)
        for scenario in [Scenario.lightweightMetadata, .lightweightRewrite, .forcedRewrite, .customSplit] { ratio(scenario, to: .grdb, atLeast: 2) }
        // Issue 12: the macro models' typed API.
        ratio(.insert, to: .lmdb, atLeast: 0.8, system: .strataTyped)
        ratio(.get, to: .lmdb, atLeast: 0.7, system: .strataTyped)
        ratio(.scan, to: .lmdb, atLeast: 0.4, system: .strataTyped)
        ratio(.customSplit, to: .sqlite, atLeast: 1.5, system: .strataTyped)
        for scenario in [Scenario.insert, .scan, .get] { ratio(scenario, to: .grdb, atLeast: 2, system: .strataTyped) }
        // Issue 22: the typed stage is the fast path.
        if let t = row(rows, .customSplit, .strataTyped), let d = row(rows, .customSplit, .strata) {
            let x = t.recordsPerSecond / d.recordsPerSecond
            goals.append(Goal(goal: "custom-split: typed stage ≥ the dynamic policy", measured: String(format: "%.2f×", x), met: x >= 1))
        }
        // Issue 22: set-based stages — the declared split.
        ratio(.customSplit, to: .sqlite, atLeast: 1.5, system: .strataDeclared)
        ratio(.customSplit, to: .grdb, atLeast: 1.5, system: .strataDeclared)
        // Issue 23: typed reads and writes near the memory map.
        ratio(.scan, to: .lmdb, atLeast: 0.45, system: .strataTyped)
        ratio(.scan, to: .lmdb, atLeast: 0.7, system: .strataViews)
        ratio(.scan, to: .lmdb, atLeast: 0.45, system: .strataRecords)
        ratio(.get, to: .lmdb, atLeast: 0.8, system: .strataTyped)
        if let s = row(rows, .open, .strata), let l = row(rows, .open, .lmdb),
           let sf = s.extra["first_open_seconds"], let lf = l.extra["first_open_seconds"] {
            goals.append(Goal(goal: "first open of a process ≤ 2× lmdb's", measured: String(format: "%.2f× (%@ vs %@)", sf / lf,
                                                                                          format(seconds: sf), format(seconds: lf)),
                              met: sf / lf <= 2))
        }
        if let s = row(rows, .open, .strata), let l = row(rows, .open, .lmdb) {
            let x = s.seconds / l.seconds
            goals.append(Goal(goal: "open within 2× of lmdb", measured: String(format: "%.2f× (%@ vs %@)", x,
                                                                                  format(seconds: s.seconds), format(seconds: l.seconds)),
                              met: x <= 2))
        } else {
            goals.append(Goal(goal: "open within 2× of lmdb", measured: "not measured", met: nil))
        }
        // Issue 26: what encryption costs the typed API, and a key rotation beside the rewrite path.
        for (scenario, bound) in [(Scenario.get, 0.9), (.scan, 0.9), (.insert, 0.85)] {
            let name = "strata-encrypted ÷ strata-typed ≥ \(bound) on \(scenario.rawValue)"
            if let e = row(rows, scenario, .strataEncrypted), let t = row(rows, scenario, .strataTyped) {
                let x = e.recordsPerSecond / t.recordsPerSecond
                goals.append(Goal(goal: name, measured: String(format: "%.2f", x), met: x >= bound))
            } else {
                goals.append(Goal(goal: name, measured: "not measured", met: nil))
            }
        }
        // Opening does not depend on the API: the encrypted open beside `strata`'s (strata-typed has no open row).
        if let e = row(rows, .open, .strataEncrypted), let s = row(rows, .open, .strata) {
            let x = e.seconds / s.seconds
            goals.append(Goal(goal: "strata-encrypted open ≤ 2× strata's", measured: String(format: "%.2f× (%@ vs %@)", x,
                                                                                              format(seconds: e.seconds), format(seconds: s.seconds)),
                              met: x <= 2))
            if let ef = e.extra["first_open_seconds"], let sf = s.extra["first_open_seconds"] {
                goals.append(Goal(goal: "strata-encrypted first open ≤ 2× strata's", measured: String(format: "%.2f× (%@ vs %@)", ef / sf,
                                                                                                        format(seconds: ef), format(seconds: sf)),
                                  met: ef / sf <= 2))
            }
        } else {
            goals.append(Goal(goal: "strata-encrypted open ≤ 2× strata's", measured: "not measured", met: nil))
        }
        if let k = row(rows, .keyRotation, .strataEncrypted), let f = row(rows, .forcedRewrite, .strata) {
            let x = k.recordsPerSecond / f.recordsPerSecond
            goals.append(Goal(goal: "key-rotation throughput ≥ 0.5× strata's forced-rewrite", measured: String(format: "%.2f×", x), met: x >= 0.5))
        } else {
            goals.append(Goal(goal: "key-rotation throughput ≥ 0.5× strata's forced-rewrite", measured: "not measured", met: nil))
        }
        // Issue 13: a widening is metadata only; the sweep, old-layout scans and app writes beside the sweep.
        if let w = row(rows, .lightweightRewrite, .strata) {
            goals.append(Goal(goal: "lightweight-rewrite (a widening) opens in ≤ 10 ms", measured: format(seconds: w.seconds), met: w.seconds <= 0.010))
        } else {
            goals.append(Goal(goal: "lightweight-rewrite (a widening) opens in ≤ 10 ms", measured: "not measured", met: nil))
        }
        if let r = row(rows, .codableReshape, .strata) {
            goals.append(Goal(goal: "codable-reshape (a Codable value's keys changed) opens in ≤ 10 ms", measured: format(seconds: r.seconds),
                              met: r.seconds <= 0.010))
        }
        ratio(.sweep, to: .lmdb, atLeast: 0.5)
        if let f = row(rows, .forcedRewrite, .strata), let w = row(rows, .sweep, .strata) {
            let x = w.recordsPerSecond / f.recordsPerSecond
            goals.append(Goal(goal: "sweep throughput ≥ the rewrite's (forced-rewrite)", measured: String(format: "%.2f×", x), met: x >= 1))
        }
        for system in [System.strata, .strataTyped, .strataViews] {
            guard let r = row(rows, .scanOldLayout, system), let x = r.extra["old_to_swept"] else { continue }
            goals.append(Goal(goal: "\(system.rawValue): scan over old layouts ≥ 0.9× the same scan after the sweep",
                              measured: String(format: "%.2f×", x), met: x >= 0.9))
        }
        if let r = row(rows, .writesDuringSweep, .strata), let x = r.extra["during_to_idle"] {
            let overlap = (r.extra["old_records_left_after_writes"] ?? 0) > 0
            goals.append(Goal(goal: "app writes during the sweep ≥ 0.7× an idle store's",
                              measured: String(format: "%.2f×%@", x, overlap ? "" : " (the sweep ended before the writes)"),
                              met: overlap ? x >= 0.7 : nil))
        }
        // Issue 17: the tool at the library's speed.
        if let r = row(rows, .cliImport, .strata), let v = r.ratioToStrataInsert {
            goals.append(Goal(goal: "cli-import ≥ 0.5× the library's dynamic insert (strata insert)",
                              measured: String(format: "%.2f (%@ objects/s)", v, format(rate: r.recordsPerSecond)), met: v >= 0.5))
        } else {
            goals.append(Goal(goal: "cli-import ≥ 0.5× the library's dynamic insert (strata insert)", measured: "not measured", met: nil))
        }
        if let r = row(rows, .cliExport, .strata) {
            goals.append(Goal(goal: "cli-export ≥ 1 M objects/s", measured: "\(format(rate: r.recordsPerSecond)) objects/s",
                              met: r.recordsPerSecond >= 1_000_000))
        } else {
            goals.append(Goal(goal: "cli-export ≥ 1 M objects/s", measured: "not measured", met: nil))
        }
        // Issue 17: explainMigration's estimate within a factor of 1.5 of the measured migration.
        for scenario in [Scenario.lightweightMetadata, .lightweightRewrite, .forcedRewrite, .customSplit] {
            let name = "estimate within 1.5× of measured on \(scenario.rawValue)"
            guard let r = row(rows, scenario, .strata), let e = r.extra["estimate_seconds"] else {
                goals.append(Goal(goal: name, measured: "not measured", met: nil))
                continue
            }
            let factor = e / r.seconds
            goals.append(Goal(goal: name, measured: String(format: "%@ estimated, %@ measured (×%.2f)", format(seconds: e), format(seconds: r.seconds), factor),
                              met: factor <= 1.5 && factor >= 1 / 1.5))
        }
        // Issue 14: observation.
        if let r = row(rows, .observeLatency, .strata), let p99 = r.extra["other_process_p99_seconds"] {
            goals.append(Goal(goal: "a commit by another process reaches its observer within 50 ms (p99)",
                              measured: "\(format(seconds: p99)) (max \(format(seconds: r.extra["other_process_max_seconds"] ?? 0)))", met: p99 <= 0.050))
        }
        if let r = row(rows, .observeInsert, .strata) {
            for n in [1, 100] {
                guard let x = r.extra["with_\(n)_ratio"] else { continue }
                goals.append(Goal(goal: "insert with \(n) observer\(n == 1 ? "" : "s") of another entity ≥ 0.95× with none",
                                  measured: String(format: "%.2f×", x), met: x >= 0.95))
            }
        }
        if let r = row(rows, .observeMemory, .strata), let half = r.extra["anon_half_bytes"], let end = r.extra["anon_end_bytes"], half > 0 {
            let growth = end / half - 1
            goals.append(Goal(goal: "anonymous memory flat over the second half of the observed commits (≤ +10 %)",
                              measured: String(format: "%@ → %@ (%+.1f %%)", format(bytes: Int(half)), format(bytes: Int(end)), growth * 100),
                              met: growth <= 0.10))
        }
        if let m = row(rows, .lightweightMetadata, .strata) {
            goals.append(Goal(goal: "lightweight-metadata in milliseconds", measured: format(seconds: m.seconds), met: m.seconds < 0.1))
        } else {
            goals.append(Goal(goal: "lightweight-metadata in milliseconds", measured: "not measured", met: nil))
        }
        return goals
    }

    // MARK: Table

    static func table(_ results: Results) -> String {
        var lines: [String] = []
        lines.append("strata-bench: \(grouped(results.records)) records, seed \(results.seed), \(results.machine.build) build, "
                     + "\(results.machine.nproc) cores, \(results.machine.cpu), load average \(results.machine.loadAverageAtStart ?? "?") → "
                     + "\(results.machine.loadAverageAtEnd ?? "?")")
        lines.append("")
        let runs = results.runs ?? 1
        // With several runs, the spread (fastest–slowest run) follows the median time.
        var header = ["scenario", "system", "time", "throughput", "peak RSS", "peak anon", "× lmdb", "× sqlite", "× grdb"]
        if runs > 1 { header.insert("spread", at: 3) }
        var cells: [[String]] = []
        for r in results.results {
            let unit = r.unit == "records" ? "rec/s" : (r.unit == "opens" ? "opens/s" : "\(r.unit)/s")
            var row = [r.scenario, r.system, format(seconds: r.seconds), "\(format(rate: r.recordsPerSecond)) \(unit)",
                       format(bytes: r.peakRssBytes), format(bytes: r.peakAnonBytes),
                       format(ratio: r.ratioToLmdb), format(ratio: r.ratioToSqlite), format(ratio: r.ratioToGrdb)]
            if runs > 1 {
                row.insert(format(spread: r.secondsMin ?? r.seconds, r.secondsMax ?? r.seconds), at: 3)
            }
            cells.append(row)
        }
        lines.append(markdownTable(header, cells, rightAligned: Set(2..<header.count)))
        lines.append("")
        lines.append("time: wall clock of the measured work in a fresh process (open: mean of \(results.openCycles) cycles; "
                     + "get: \(grouped(results.gets)) fetches); × lmdb / × sqlite / × grdb: Strata's throughput ÷ theirs (≥ 1 is faster).")
        if runs > 1 {
            lines.append("\(runs) runs of every measurement, each in its own process: time, throughput and memory are the medians, "
                         + "ratios come from the median throughputs; spread: the fastest and the slowest run's time.")
        }
        lines.append("peak RSS: ru_maxrss of the measuring process (counts the file pages LMDB maps); peak anon: its highest RssAnon.")
        let notes = details(results.results)
        if !notes.isEmpty {
            lines.append("")
            lines.append(contentsOf: notes)
        }
        lines.append("")
        lines.append("Goals (this run):")
        for g in results.goals {
            let mark = g.met.map { $0 ? "met   " : "MISSED" } ?? "n/a   "
            lines.append("  \(mark)  \(g.goal): \(g.measured)")
        }
        return lines.joined(separator: "\n")
    }

    /// What each part of a migration cost, the first open, drop times.
    static func details(_ rows: [ResultRow]) -> [String] {
        var out: [String] = []
        for r in rows {
            var parts: [String] = []
            if let v = r.extra["first_open_seconds"] { parts.append("first open \(format(seconds: v))") }
            if let sum = r.extra["sum_seconds"], let max = r.extra["max_seconds"], let average = r.extra["average_seconds"] {
                parts.append("aggregates over every post: sum(\\.views) \(format(seconds: sum)), max \(format(seconds: max)), average \(format(seconds: average))")
            }
            if let v = r.extra["swept_seconds"] { parts.append("after the sweep \(format(seconds: v)) (old layouts at \(String(format: "%.2f", r.extra["old_to_swept"] ?? 0))× its speed)") }
            if let old = r.extra["old_scan_seconds"], let swept = r.extra["swept_scan_seconds"] {
                parts.append("every spot's bytes read through the reshape \(format(seconds: old)), the same bytes after the sweep \(format(seconds: swept))")
            }
            if let v = r.extra["idle_seconds"] {
                parts.append("idle store \(format(seconds: v)) (during the sweep at \(String(format: "%.2f", r.extra["during_to_idle"] ?? 0))× its speed; "
                             + "\(grouped(Int(r.extra["old_records_left_after_writes"] ?? 0))) records still to sweep when the writes ended)")
            }
            for key in ["sections_seconds", "copy_seconds", "swap_seconds", "rename_seconds", "add_seconds", "drop_seconds",
                        "commit_close_seconds", "checks_commit_close_seconds", "open_seconds"] {
                if let v = r.extra[key] {
                    parts.append("\(key.replacingOccurrences(of: "_seconds", with: "").replacingOccurrences(of: "_", with: "+")) \(format(seconds: v))")
                }
            }
            if let e = r.extra["estimate_seconds"] {
                parts.append(String(format: "estimate %@ (×%.2f of the measured time), %@ to write", format(seconds: e), e / r.seconds,
                                    format(decimalBytes: r.extra["estimate_bytes"] ?? 0)))
            }
            if let m = r.extra["in_process_median_seconds"] {
                parts.append("in this process median \(format(seconds: m)), p99 \(format(seconds: r.extra["in_process_p99_seconds"] ?? 0)); "
                             + "from another process median \(format(seconds: r.extra["other_process_median_seconds"] ?? 0)), "
                             + "p99 \(format(seconds: r.extra["other_process_p99_seconds"] ?? 0)), max \(format(seconds: r.extra["other_process_max_seconds"] ?? 0))")
            }
            if let one = r.extra["with_1_ratio"], let hundred = r.extra["with_100_ratio"] {
                parts.append(String(format: "with 1 observer of another entity %.2f×, with 100 %.2f× the throughput with none", one, hundred))
            }
            if let start = r.extra["anon_start_bytes"], let half = r.extra["anon_half_bytes"], let end = r.extra["anon_end_bytes"] {
                parts.append("anon after 1 % of the commits \(format(bytes: Int(start))), half \(format(bytes: Int(half))), all \(format(bytes: Int(end)))"
                             + "; \(Int(r.extra["incomplete_change_sets"] ?? 0)) change sets said reload")
            }
            if let v = r.ratioToStrataInsert { parts.append(String(format: "%.2f× the library's dynamic insert", v)) }
            if let v = r.extra["tool_peak_rss_bytes"] { parts.append("the tool's peak RSS \(format(bytes: Int(v)))") }
            parts.append(contentsOf: r.notes)
            if !parts.isEmpty { out.append("- \(r.scenario) · \(r.system): " + parts.joined(separator: ", ")) }
        }
        return out
    }

    static func markdownTable(_ header: [String], _ rows: [[String]], rightAligned: Set<Int>) -> String {
        var widths = header.map(\.count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        func line(_ cells: [String]) -> String {
            "| " + cells.enumerated().map { i, c in
                let pad = String(repeating: " ", count: widths[i] - c.count)
                return rightAligned.contains(i) ? pad + c : c + pad
            }.joined(separator: " | ") + " |"
        }
        let rule = "|" + widths.enumerated().map { i, w in
            rightAligned.contains(i) ? String(repeating: "-", count: w + 1) + ":" : ":" + String(repeating: "-", count: w + 1)
        }.joined(separator: "|") + "|"
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }

    // MARK: Comparison with an earlier run

    static func comparison(_ now: Results, _ earlier: Results) -> String {
        var lines = ["", "Compared with the run at \(grouped(earlier.records)) records:"]
        for system in System.allCases {
            if let a = row(earlier.results, .open, system), let b = row(now.results, .open, system) {
                lines.append("  open · \(system.rawValue): \(format(seconds: a.seconds)) → \(format(seconds: b.seconds)) (×\(String(format: "%.2f", b.seconds / a.seconds)))")
            }
        }
        for system in System.allCases {
            if let a = row(earlier.results, .lightweightMetadata, system), let b = row(now.results, .lightweightMetadata, system) {
                lines.append("  lightweight-metadata · \(system.rawValue): \(format(seconds: a.seconds)) → \(format(seconds: b.seconds)) (×\(String(format: "%.2f", b.seconds / a.seconds)))")
            }
        }
        for scenario in [Scenario.lightweightMetadata, .lightweightRewrite, .forcedRewrite, .customSplit] {
            for system in [System.strata] {
                if let a = row(earlier.results, scenario, system), let b = row(now.results, scenario, system) {
                    let change = Double(b.peakAnonBytes) / Double(a.peakAnonBytes) - 1
                    lines.append("  peak anon during \(scenario.rawValue) · \(system.rawValue): \(format(bytes: a.peakAnonBytes)) → "
                                 + "\(format(bytes: b.peakAnonBytes)) (\(String(format: "%+.1f", change * 100)) %, goal within ±10 %: "
                                 + "\(abs(change) <= 0.10 ? "met" : "MISSED")); peak RSS \(format(bytes: a.peakRssBytes)) → \(format(bytes: b.peakRssBytes))")
                }
            }
        }
        return lines.joined(separator: "\n")
    }

    // MARK: The machine

    static func machine(directory: String, loadAtStart: String) -> Machine {
        var cpu = "unknown"
        if let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
           let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") }),
           let colon = line.firstIndex(of: ":") {
            cpu = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            func field(_ name: String) -> String? {
                info.split(separator: "\n").first { $0.hasPrefix(name) }
                    .flatMap { $0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) }
            }
            if let family = field("cpu family"), let model = field("model\t") {
                cpu += " (family \(family), model \(model))"
            }
        }
        var os = "unknown"
        if let release = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8),
           let line = release.split(separator: "\n").first(where: { $0.hasPrefix("PRETTY_NAME=") }) {
            os = line.dropFirst(12).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        var name = utsname()
        uname(&name)
        let kernel = withUnsafeBytes(of: name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        #if DEBUG
        let build = "debug"
        #else
        let build = "release"
        #endif
        let formatter = ISO8601DateFormatter()
        return Machine(nproc: ProcessInfo.processInfo.activeProcessorCount, cpu: cpu,
                       memoryBytes: ProcessInfo.processInfo.physicalMemory, os: os, kernel: kernel,
                       disk: disk(of: directory), lmdb: RawLMDB.version, sqlite: RawSQLite.version, build: build,
                       date: formatter.string(from: Date()), loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadAverage())
    }

    /// `/proc/loadavg`'s first three figures: the machine is shared, and this says how busy it was.
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    /// The file system and device holding `path` (the longest mount point that contains it).
    static func disk(of path: String) -> String {
        guard let mounts = try? String(contentsOfFile: "/proc/mounts", encoding: .utf8) else { return "unknown" }
        var best: (point: String, text: String) = ("", "unknown")
        for line in mounts.split(separator: "\n") {
            let f = line.split(separator: " ")
            guard f.count >= 3 else { continue }
            let point = String(f[1])
            if (path == point || path.hasPrefix(point.hasSuffix("/") ? point : point + "/")) && point.count >= best.point.count {
                best = (point, "\(f[2]) on \(f[0]) (mounted at \(point))")
            }
        }
        return best.text
    }
}

// MARK: Formatting

func format(seconds s: Double) -> String {
    if s < 1e-3 { return String(format: "%.0f µs", s * 1e6) }
    if s < 1 { return String(format: "%.1f ms", s * 1e3) }
    return String(format: "%.2f s", s)
}

func format(rate r: Double) -> String {
    if r >= 1e6 { return String(format: "%.2f M", r / 1e6) }
    if r >= 1e3 { return String(format: "%.0f k", r / 1e3) }
    return String(format: "%.0f", r)
}

/// `1.10–1.25 s`: the fastest and the slowest run, in the larger value's unit.
func format(spread low: Double, _ high: Double) -> String {
    let (scale, unit, digits): (Double, String, Int) =
        high < 1e-3 ? (1e6, "µs", 0) : high < 1 ? (1e3, "ms", 1) : (1, "s", 2)
    return String(format: "%.\(digits)f–%.\(digits)f \(unit)", low * scale, high * scale)
}

func format(ratio: Double?) -> String {
    ratio.map { String(format: "%.2f", $0) } ?? ""
}

func format(decimalBytes b: Double) -> String {
    if b >= 1e9 { return String(format: "%.2f GB", b / 1e9) }
    if b >= 1e6 { return String(format: "%.1f MB", b / 1e6) }
    if b >= 1e3 { return String(format: "%.1f kB", b / 1e3) }
    return String(format: "%.0f bytes", b)
}

func format(bytes b: Int) -> String {
    String(format: "%.0f MiB", Double(b) / 1_048_576)
}
