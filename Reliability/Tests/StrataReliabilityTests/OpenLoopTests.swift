import Foundation
import Strata
import StrataTestKit
import StrataTortureKit
import Testing

/// Issue 27, "no false alarm of damage": a process opening a store while another ran a custom stage over it
/// was told the store was damaged and to restore it from a backup — the store was fine. Telling a user to
/// restore a healthy store is as bad as losing data.
///
/// Each round puts a fresh v1 store in place and names it to every loop on their standard input; then one
/// child migrates it (a custom stage over every object, a forced rewrite, or a metadata-only step that leaves
/// the sweep to do), runs the maintenance to the end (the sweep, the index builds, the retired databases
/// emptied) and rewrites every record into its current layout — while three children open it with the v1, c2
/// and v3 models in turn, read its item count and three items (checked against the oracle at the version they
/// opened) and close it, in tight loops, and one child inserts items with 32 KiB blobs into it (the file grows
/// by tens of MiB a round, past the map, which other processes then adopt) and now and then undoes an import in
/// one transaction (which leaves data.mdb shorter than LMDB's last page number, by pages freed unwritten).
///
/// Every open is tallied. Refusals the loops expect (they never migrate and never wait for another
/// process's migration): `migrationRequired` (the store is behind the model), `migrationInProgress` (another
/// process migrates and the model is not the store's), `storeNewerThanModel` (the store is ahead and the change
/// is not additive, or on another branch of versions: c2 on a v3 store and back), `modelChanged` (migrated
/// between the open and the read; also the inserting process's writes), and for the inserting process's writes
/// during a migration, `migrationInProgress`. Anything else fails the test; `corrupted` must never come.
extension ReliabilitySuite {
    @Suite struct OpenLoop {
        /// The error kinds a loop may meet on a healthy store, and why (see the type's comment).
        static let expectedRefusals: Set<String> = [
            "StoreError.migrationRequired", "StoreError.migrationInProgress", "StoreError.storeNewerThanModel",
            "StoreError.modelChanged",
        ]

        typealias Tally = OpenLoopTally

        @Test("open, read and close in tight loops from three processes while others insert, migrate and sweep: never 'corrupted'",
              .timeLimit(.minutes(60)))
        func opensUnderWritersMigrationsAndSweeps() throws {
            try #require(Products.available, "strata-torture must be built (swift build --build-tests)")
            let targetOpens = Tier.current.pick(ci: 10_000, full: 100_000)
            let minimumRounds = Tier.current.pick(ci: 24, full: 120)
            let wallLimit = Tier.current.pick(ci: 80.0, full: 1_800.0)
            // Most rounds migrate a small store (many switches, the moment the races are about); every fourth a
            // store with more items than a retired database may hold to be deleted at once, which the
            // maintenance empties in batches (LMDB then leaves data.mdb shorter than its last page, issue 28).
            let small = 3_000, large = Tier.current.pick(ci: 12_000, full: 40_000)
            let perRound = Tier.current.pick(ci: 3_000, full: 6_000)
            let workspace = try Workspace("open-loop")
            let pristine = [try PristineStores.v1(count: small), try PristineStores.v1(count: large)]
            let plans = ["custom", "rewrite", "instant"]
            let seed = "\(Tier.seed)"

            let started = Date()
            let openers = try (0..<3).map { _ in try Child(["open-loop", "-", "--count", "\(small)", "--seed", seed]) }
            let writer = try Child(["insert-loop", "-", "--count", "\(large)", "--per-round", "\(perRound)",
                                    "--blob-size", "32768", "--batch", "100", "--seed", seed])
            let loops = openers + [writer]
            func attempts() -> Int {
                openers.reduce(0) { sum, child in
                    sum + (child.lastLine(withPrefix: "PROGRESS ").flatMap { Int($0.split(separator: " ")[1]) } ?? 0)
                }
            }
            var rounds = 0
            var mutations: [String] = [], mutationFailures: [String] = []
            while true {
                let url = try workspace.copy(pristine[rounds % 4 == 3 ? 1 : 0], to: "round\(rounds)")
                for loop in loops { loop.send(url.path) }
                // Every loop moved to this round's store when the last one ended (they take the newest path at their
                // next attempt); the one before it can go.
                if rounds >= 2 { try? FileManager.default.removeItem(at: workspace.url("round\(rounds - 2)")) }
                let plan = plans[rounds % plans.count]
                let result = try Child.run(["open-loop-mutate", url.path, "--plan", plan, "--batch", "200"], timeout: 900)
                if result.exitCode == 0, let done = result.line("DONE") {
                    mutations.append("\(plan): \(done)")
                } else {
                    mutationFailures.append("round \(rounds) (\(plan)): \(result)")
                }
                rounds += 1
                let elapsed = Date().timeIntervalSince(started)
                if (rounds >= minimumRounds && attempts() >= targetOpens) || elapsed > wallLimit { break }
            }
            for loop in loops { loop.closeInput() }
            let results = loops.map { $0.wait(timeout: 120) }
            let wall = Date().timeIntervalSince(started)

            let tallies: [Tally?] = results.enumerated().map { i, result in
                guard let line = result.line("TALLY "), let tally = try? JSONDecoder().decode(Tally.self, from: Data(line.dropFirst(6).utf8)) else {
                    Issue.record("loop \(i) ended without a tally: \(result)")
                    return nil
                }
                return tally
            }
            let openerTallies = tallies.prefix(openers.count).compactMap { $0 }
            let writerTally = tallies.last ?? nil
            let attempted = openerTallies.reduce(0) { $0 + $1.attempts }
            let opened = openerTallies.reduce(0) { $0 + $1.opened }
            var refused: [String: Int] = [:], afterOpen: [String: Int] = [:], versions: [String: Int] = [:]
            for t in openerTallies {
                refused.merge(t.refused, uniquingKeysWith: +)
                afterOpen.merge(t.failedAfterOpen, uniquingKeysWith: +)
                versions.merge(t.byVersion, uniquingKeysWith: +)
            }
            let writerErrors = (writerTally?.refused ?? [:]).merging(writerTally?.failedAfterOpen ?? [:], uniquingKeysWith: +)
            let corrupted = tallies.reduce(0) { $0 + ($1?.corrupted ?? 0) }
            let messages = tallies.flatMap { $0?.corruptedMessages ?? [] }
            let wrong = tallies.reduce(0) { $0 + ($1?.wrongValues ?? 0) }
            let wrongLines = results.flatMap { $0.lines(prefix: "WRONG ") }
            let unexpected = refused.merging(afterOpen, uniquingKeysWith: +).merging(writerErrors, uniquingKeysWith: +)
                .filter { !Self.expectedRefusals.contains($0.key) && $0.key != "StoreError.corrupted" }
            let inserted = writerTally?.inserted ?? 0, undone = writerTally?.undoneImports ?? 0
            let shortOpens = openerTallies.reduce(0) { $0 + $1.shortFileOpens }
            let describe = { (d: [String: Int]) in d.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") }

            #expect(mutationFailures.isEmpty, "\(mutationFailures.prefix(2))")
            #expect(corrupted == 0, "\(corrupted) opens or reads of a healthy store said it was damaged: \(messages.prefix(3))")
            #expect(wrong == 0, "\(wrong) wrong values: \(wrongLines.prefix(3))")
            #expect(unexpected.isEmpty, "unexpected errors: \(describe(unexpected))")
            #expect(attempted >= targetOpens, "\(attempted) open attempts in \(Int(wall)) s, below \(targetOpens)")
            print("open loop | rounds: \(rounds); mutations: \(mutations)")
            Figures.add("open loop: \(attempted) open attempts by 3 processes (\(opened) opened: \(describe(versions)); \(shortOpens) of a data file shorter than LMDB's last page) over \(rounds) rounds of migrate + sweep + rewrite + \(inserted) inserts + \(undone) undone imports, in \(Int(wall)) s; refused: \(describe(refused)); failed after opening: \(describe(afterOpen)); the inserting process's refusals: \(describe(writerErrors)); false 'corrupted': \(corrupted)") { c in
                c.silentWrongValues += wrong
                c.falseDamageReports += corrupted
            }
        }
    }
}
