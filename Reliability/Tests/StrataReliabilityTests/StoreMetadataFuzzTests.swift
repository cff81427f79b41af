import Foundation
import Synchronization
import Testing

/// Issue 27, "fuzzed metadata": hostile metadata in real stores. Each input is a small store (one of two bases:
/// settled after a metadata-only migration with maintenance pending and change history on; and the same left in
/// the middle of a rewrite, with its journal) in which one metadata value — the catalog, the model's JSON, the
/// identity, state, counter, version history, journal, maintenance record, change-history state, a change-log
/// entry, a history entry or history model — was replaced with raw LMDB by a damaged or hostile one (its
/// checksum recomputed, so the bytes reach the decoder; a few keep the stored one), deleted, or swapped with
/// another kind's. Then the store is opened through the public API (with the model it records, an older one, a
/// newer one, a migration plan, `openRecorded`, and while observing it as another writer's commit lands) and read
/// every way the API offers (objects, `maintenanceStatus()`, `verify()`, `info()`, the change history, a write).
///
/// Every outcome must be a success or a typed error; an open that refuses for damage must leave `data.mdb` byte for
/// byte as it was (an open refused for another reason may only have made the recovery an interrupted migration
/// asks for); an undecodable change-log entry must reach observers as "unknown changes". The inputs run in
/// `strata-torture fuzz-store-meta` children, two at a time: a trap shows as a child that died (its input index
/// is reported and the child restarted after it), a hang as a child silent for a minute (killed).
extension ReliabilitySuite {
    @Suite struct StoreMetadataFuzz {
        struct ShardResult: Sendable {
            var lines: [String] = []
            var deaths: [String] = []
        }

        /// Runs inputs `range` in children, restarting after an input that killed or hung one.
        static func runShard(_ range: Range<Int>, directory: URL) throws -> ShardResult {
            var result = ShardResult()
            var start = range.lowerBound
            while start < range.upperBound {
                let child = try Child(["fuzz-store-meta", directory.path, "--seed", "\(Tier.seed)", "--start", "\(start)",
                                       "--end", "\(range.upperBound)"])
                var begun = start - 1
                var what = ""
                var done = false
                var hung = false
                while true {
                    // Base stores are made on the first start (a second or two); an input takes milliseconds, an
                    // observed one at most 20 s.
                    guard let line = child.nextLine(timeout: 60) else {
                        if !child.outputEnded { hung = true; child.killNow() }
                        break
                    }
                    if line.hasPrefix("BEGIN ") {
                        let parts = line.split(separator: " ", maxSplits: 2)
                        if parts.count >= 2, let i = Int(parts[1]) { begun = i; what = parts.count > 2 ? String(parts[2]) : "" }
                    }
                    if line == "DONE" { done = true }
                    result.lines.append(line)
                }
                let run = child.wait(timeout: 60)
                if done { break }
                // The runtime's own line (e.g. "Fatal error: Not enough bits to represent …"), else the end of stderr.
                let errorLines = run.errorOutput.split(separator: "\n")
                let errors = errorLines.first { $0.contains("Fatal error") || $0.contains("runtime failure") || $0.contains("Crash") }
                    .map(String.init) ?? String(run.errorOutput.suffix(200)).replacingOccurrences(of: "\n", with: " ")
                let how = hung ? "HANG (silent for 60 s, killed)" : run.signal.map { "TRAP (signal \($0))" } ?? "EXIT \(run.exitCode ?? -1)"
                result.deaths.append("input \(begun) \(what) (seed \(Tier.seed); rerun: strata-torture fuzz-store-meta DIR --seed \(Tier.seed) --start \(begun) --end \(begun + 1)): \(how) \(errors)")
                guard begun >= start else { break }  // died before its first input: the bases could not be made
                start = begun + 1
            }
            return result
        }

        @Test("hostile catalogs, model JSON, journals, maintenance records and change-log entries in real stores: typed errors only, no trap, no hang, store untouched")
        func hostileMetadataInStores() throws {
            try #require(Products.available)
            let count = Tier.current.pick(ci: 10_800, full: 64_800)
            // tmpfs when there is one: every input writes a store (an fsync each on a disk).
            let shm = URL(fileURLWithPath: "/dev/shm")
            let root = FileManager.default.isWritableFile(atPath: shm.path)
                ? shm.appendingPathComponent("strata-meta-fuzz-\(UUID().uuidString.prefix(8))")
                : FileManager.default.temporaryDirectory.appendingPathComponent("strata-meta-fuzz-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(at: root) }
            let shards = 2
            let results = Mutex<[Int: ShardResult]>([:])
            let started = Date()
            try concurrentForEach(Array(0..<shards), width: shards) { shard in
                let range = (count * shard / shards)..<(count * (shard + 1) / shards)
                let r = try Self.runShard(range, directory: root.appendingPathComponent("shard-\(shard)"))
                results.withLock { $0[shard] = r }
            }
            let seconds = Date().timeIntervalSince(started)
            let all = results.withLock { $0 }.sorted { $0.key < $1.key }.map(\.value)
            let lines = all.flatMap(\.lines)
            let deaths = all.flatMap(\.deaths)
            var byKind: [String: Int] = [:], byMode: [String: Int] = [:], byOutcome: [String: Int] = [:]
            var inputs = 0, refused = 0, opened = 0, recovered = 0
            // Stores that opened and read every object, with values other than the undamaged store's: damage that
            // decodes (a layout's field type changed under a recomputed checksum) can change values, as in any
            // store whose metadata an attacker rewrites; reported, not failed.
            var differing: [String: Int] = [:]
            for line in lines where line.hasPrefix("INPUT ") {
                let fields = line.split(separator: " ", maxSplits: 2).last.map { $0.split(separator: "|", omittingEmptySubsequences: false) } ?? []
                guard fields.count >= 4 else { continue }
                inputs += 1
                byKind[String(fields[0]), default: 0] += 1
                byMode[String(fields[2].split(separator: "@").first ?? ""), default: 0] += 1
                var outcome = String(fields[3])
                let differs = " (values differ from the undamaged store's)"
                if outcome.hasSuffix(differs) {
                    outcome.removeLast(differs.count)
                    differing[String(fields[0]), default: 0] += 1
                }
                if outcome.hasPrefix("refused:") {
                    refused += 1
                    if outcome.hasSuffix("(after recovering)") { recovered += 1 }
                    byOutcome[String(outcome.split(separator: " ").first ?? ""), default: 0] += 1
                } else {
                    opened += 1
                    // Each error a read after the open ended with, by kind.
                    let errors = outcome.components(separatedBy: "then ").dropFirst().first?.split(separator: ",") ?? []
                    byOutcome[errors.isEmpty ? "opened, every read worked" : "opened, some reads refused", default: 0] += 1
                    for e in errors { byOutcome["  read refused: " + (e.split(separator: ":", maxSplits: 1).last.map(String.init) ?? ""), default: 0] += 1 }
                }
            }
            let violations = lines.filter { $0.hasPrefix("VIOLATION ") }
            #expect(deaths.isEmpty, "children that trapped or hung: \(deaths.prefix(10))")
            #expect(violations.isEmpty, "\(violations.count) violations: \(violations.prefix(10))")
            #expect(inputs + deaths.count == count, "\(inputs) inputs ran, \(deaths.count) killed their child, of \(count)")
            // The tier bites both ways: most damage is refused, and some stores still open (the reads then run).
            #expect(refused > count / 4 && opened > count / 10, "\(refused) refused, \(opened) opened")
            for kind in ["catalog", "model", "identity", "journal", "maintenance", "changeHistory", "state", "counter", "history",
                         "change log entry", "history entry", "history model", "missing record", "swapped record"] {
                #expect(byKind[kind, default: 0] >= count / 30, "only \(byKind[kind, default: 0]) inputs of kind \(kind)")
            }
            let kinds = byKind.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let modes = byMode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let outcomes = byOutcome.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: "; ")
            print("reliability | store metadata inputs by kind: \(kinds)")
            print("reliability | store metadata inputs by open: \(modes)")
            print("reliability | store metadata outcomes: \(outcomes)")
            let differ = differing.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            print("reliability | store metadata: opened and read every object, values not the undamaged store's (by kind): \(differ.isEmpty ? "none" : differ)")
            Figures.add("store metadata: \(inputs) hostile stores in \(Int(seconds)) s (\(refused) opens refused with typed errors: \(refused - recovered) with data.mdb byte-identical, \(recovered) after only the recovery an interrupted migration, a stale migrating flag or a change log from the future asks for; \(opened) opened, every later read a value or a typed error), \(deaths.count) traps or hangs") { c in
                c.malformedInputs += inputs
                c.untypedErrors += violations.filter { $0.contains("untyped") }.count
            }
        }
    }
}
