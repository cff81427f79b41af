@_spi(Testing) import Strata
import Foundation
import StrataTestKit
import StrataTortureKit
import Testing

/// Area 6 of issue 7: damaged records and pages. LMDB checks nothing inside its pages; Strata's records carry
/// a CRC-32C over entity tag, object ID and bytes. 1,000 records get 1–8 flipped bits: each read of a
/// damaged record is a typed `corruptedRecord` error, `verify()` lists exactly the damaged ones, every other
/// object reads back equal to the oracle. 500 more trials damage LMDB's own structure (bits in random
/// pages, page headers, meta fields): each store is opened and read in a sacrificial child; the parent
/// never crashes, and the outcome of every trial is tallied. A hang, a trap of Strata's own, a child that
/// fails, or a wrong value read back without a typed error fails the test; children that LMDB 0.9 kills
/// reading a damaged page (SIGSEGV, SIGBUS) are counted and bounded (at most 10 % of the trials).
extension ReliabilitySuite {
    @Suite struct Corruption {
        @Test("1,000 damaged records: typed errors, verify lists exactly them, the rest intact")
        func damagedRecords() throws {
            try #require(Products.available)
            let workspace = try Workspace("records")
            let count = 600
            let pristine = try PristineStores.v1(count: count)
            let locations = try ReliabilityProbe.recordLocations(at: pristine, entity: "Item")
            try #require(locations.count == count)
            let total = Tier.current.pick(ci: 1_000, full: 5_000)
            let perStore = 5
            var random = SeededGenerator(seed: Tier.seed &+ 66)
            var entries: [String] = []
            for s in 0..<(total / perStore) {
                var chosen: [ReliabilityProbe.RecordLocation] = []
                while chosen.count < perStore {
                    let l = locations[Int(random.next() % UInt64(locations.count))]
                    if !chosen.contains(where: { $0.id == l.id }) { chosen.append(l) }
                }
                let dir = workspace.url("r\(s)")
                try Damage.copy(pristine, to: dir) { bytes in
                    for l in chosen {
                        let bits = 1 + Int(random.next() % 8)
                        var flipped = Set<Int>()
                        while flipped.count < bits { flipped.insert(Int(random.next() % UInt64(l.length * 8))) }
                        for b in flipped { Damage.flip(&bytes, bit: l.offset * 8 + b) }
                    }
                }
                entries.append("\(dir.path) \(chosen.map { String($0.id) }.joined(separator: ","))")
            }
            let outcomes = try Damage.openMany(entries, workspace: workspace, name: "records", count: count)
            var detected = 0, silent = 0, inexact = 0, otherDamage = 0
            for (i, line) in outcomes.enumerated() {
                let f = Damage.fields(line)
                guard line.hasPrefix("OPENED") else { Issue.record("store \(i): \(line)"); continue }
                detected += f["detected"] ?? 0
                silent += f["silent"] ?? 0
                if f["exact"] != 1 { inexact += 1; Issue.record("store \(i): verify did not list exactly the damaged records: \(line)") }
                if f["wrong"] != 0 || f["unreadable"] != perStore || f["otherProblems"] != 0 {
                    otherDamage += 1
                    Issue.record("store \(i): \(line)")
                }
            }
            #expect(detected == total, "\(detected) of \(total) damaged records gave a typed error")
            #expect(silent == 0)
            Figures.add("\(total) damaged records (\(perStore) per store): \(detected) typed errors, verify exact in \(outcomes.count - inexact) stores") { c in
                c.corruptions += detected
                c.silentWrongValues += silent
            }
        }

        @Test("500 damaged LMDB pages: opened in children, the parent never crashes")
        func damagedStructure() throws {
            try #require(Products.available)
            let workspace = try Workspace("structure")
            let count = 600
            let pristine = try PristineStores.v1(count: count)
            let original = [UInt8](try Data(contentsOf: pristine.appendingPathComponent("data.mdb")))
            let pages = original.count / Damage.pageSize
            let trials = Tier.current.pick(ci: 500, full: 3_000)
            var random = SeededGenerator(seed: Tier.seed &+ 77)
            var entries: [String] = []
            var kinds: [String] = []
            for t in 0..<trials {
                let dir = workspace.url("s\(t)")
                let kind: String
                switch t % 10 {
                case 0, 1, 2, 3, 4, 5: kind = "bits in a page"
                case 6, 7: kind = "page header"
                case 8: kind = "meta field"
                default: kind = "bits in several pages"
                }
                var metaField = ""
                try Damage.copy(pristine, to: dir) { bytes in
                    func page() -> Int { 2 + Int(random.next() % UInt64(max(1, pages - 2))) }
                    switch kind {
                    case "bits in a page":
                        let p = page()
                        for _ in 0..<(1 + Int(random.next() % 8)) {
                            Damage.flip(&bytes, bit: (p * Damage.pageSize) * 8 + Int(random.next() % UInt64(Damage.pageSize * 8)))
                        }
                    case "page header":
                        // pgno (0–7), flags (10–11), lower (12–13), upper (14–15)
                        let p = page()
                        let offsets = [0, 1, 10, 11, 12, 13, 14, 15]
                        let o = offsets[Int(random.next() % UInt64(offsets.count))]
                        Damage.flip(&bytes, bit: (p * Damage.pageSize + o) * 8 + Int(random.next() % 8))
                    case "meta field":
                        let fields = Damage.MetaField.allCases
                        let field = fields[Int(random.next() % UInt64(fields.count))]
                        let metaIndex = Int(random.next() % 2)
                        Damage.flip(&bytes, bit: (metaIndex * Damage.pageSize + field.rawValue) * 8 + Int(random.next() % 32))
                        metaField = "\(field) of meta \(metaIndex)"
                    default:
                        for _ in 0..<8 {
                            let p = page()
                            Damage.flip(&bytes, bit: (p * Damage.pageSize) * 8 + Int(random.next() % UInt64(Damage.pageSize * 8)))
                        }
                    }
                }
                entries.append(dir.path)
                kinds.append(metaField.isEmpty ? kind : "meta field: \(metaField)")
            }
            let outcomes = try Damage.openMany(entries, workspace: workspace, name: "structure", count: count)
            var histogram: [String: Int] = [:]
            var silent = 0, untyped = 0, signals = 0, survived = 0, rolledBack = 0, failed = 0
            for (i, line) in outcomes.enumerated() {
                let f = Damage.fields(line)
                let outcome: String
                if line.hasPrefix("REFUSED") {
                    outcome = line.contains(" typed ") ? "typed error" : "untyped error"
                    if !line.contains(" typed ") { untyped += 1; Issue.record("trial \(i) (\(kinds[i])): \(line)") }
                } else if line.hasPrefix("SIGNAL "), let signal = line.split(separator: " ").dropFirst().first.flatMap({ Int32($0) }),
                          Damage.lmdbCrashSignals.contains(signal) {
                    // LMDB 0.9 reading a damaged branch or leaf page (documented in Reliability.md): counted and
                    // bounded below.
                    outcome = "child killed by signal \(signal)"
                    signals += 1
                } else if !line.hasPrefix("OPENED") {
                    // A hang, an exit without finishing, or a trap of Strata's own (SIGILL, SIGTRAP): failures.
                    outcome = "child hung, trapped or failed"
                    failed += 1
                    Issue.record("trial \(i) (\(kinds[i])): \(line)")
                } else if (f["wrong"] ?? 1) > 0 {
                    // A wrong value read back without a typed error fails, whatever else was reported.
                    outcome = "opened, wrong values read without an error"
                    silent += 1
                    Issue.record("trial \(i) (\(kinds[i])): values read back wrong without an error: \(line)")
                } else if (f["unreadable"] ?? 0) > 0 || (f["verify"] ?? 0) > 0 {
                    outcome = "opened, damage reported"
                } else if f["lost"] == 0 && f["badLinks"] == 0 && f["items"] == count {
                    outcome = "opened, no damage visible"
                } else if kinds[i].contains("transactionID") && f["items"] == 0 && f["badLinks"] == 0 {
                    // LMDB 0.9 trusts the meta page with the larger transaction ID: a damaged ID can make it
                    // open the previous commit (here: the store before it was filled), consistent but older.
                    // Undetectable without a checksum on the meta page; documented in Reliability.md.
                    outcome = "opened at the previous commit (meta transaction ID damaged)"
                    rolledBack += 1
                } else {
                    outcome = "opened, damage NOT reported"
                    silent += 1
                    Issue.record("trial \(i) (\(kinds[i])): damage read back without an error: \(line)")
                }
                if outcome.hasPrefix("typed error") || outcome.hasPrefix("child killed") || outcome.hasPrefix("opened, damage reported")
                    || outcome.hasPrefix("opened, no damage") || outcome.hasPrefix("opened at the previous") {
                    survived += 1
                }
                histogram[outcome, default: 0] += 1
            }
            // Children killed by LMDB are allowed, but bounded: about 5 % of the trials in past runs.
            #expect(signals * 10 <= trials, "\(signals) of \(trials) children were killed by a signal")
            #expect(failed == 0 && silent == 0 && untyped == 0)
            let summary = histogram.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            Figures.add("\(trials) damaged LMDB pages (\(summary))") { c in
                c.corruptions += survived
                c.silentWrongValues += silent
                c.untypedErrors += untyped
                c.childSignals += signals
                c.metaRollbacks += rolledBack
            }
        }
    }
}
