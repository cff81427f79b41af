import Foundation
import Strata
import StrataTestSupport
import Testing

/// Random model histories (adds, removes, renames, optionality, widenings, indexes, unique constraints, new
/// entities and relationships, custom stages, refused changes), each with random data written at its versions
/// and a store migrated to the last version in one go, step by step, swept or rewritten, checked object by
/// object against an oracle computed from the generator's own writes.
///
/// CI runs `ciHistories` histories; `STRATA_EVOLUTION_HISTORIES=10000` runs more (see the README's testing
/// section), `STRATA_EVOLUTION_SEED` moves the seeds, and `STRATA_EVOLUTION_ONLY=<seed>` runs one history
/// (a failure prints its seed and its shrunk form). History `i` of a run uses seed `STRATA_EVOLUTION_SEED + i`: two
/// runs whose seeds are closer than their history count share histories, so new ones need a seed moved further.
@Suite struct RandomEvolutionTests {
    static let ciHistories = 1_200

    @Test func randomHistoriesMigrateToWhatTheOracleSays() async throws {
        let environment = ProcessInfo.processInfo.environment
        let count = Int(environment["STRATA_EVOLUTION_HISTORIES"] ?? "") ?? Self.ciHistories
        let base = UInt64(environment["STRATA_EVOLUTION_SEED"] ?? "") ?? 0x5EED_0000
        let seeds: [UInt64] = environment["STRATA_EVOLUTION_ONLY"].flatMap { UInt64($0) }.map { [$0] }
            ?? (0..<UInt64(count)).map { base &+ $0 }
        let directory = try TemporaryDirectory("evolution", inMemory: true)
        let total = EvolutionTotals()
        // The histories run on threads of their own, never on Swift's cooperative pool (blocking it for a minute
        // starved the suite's observation tests, whose deliveries then missed their waits). In the suite, one
        // thread leaves the other core to the rest; a run of its own (the variable set) takes two.
        let workers = environment["STRATA_EVOLUTION_HISTORIES"] == nil ? 1 : 2
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for worker in 0..<workers {
                group.enter()
                Thread.detachNewThread {
                    var mine = EvolutionOutcome()
                    for (i, seed) in seeds.enumerated() where i % workers == worker {
                        let history = EvolutionHistory.random(seed: seed)
                        var outcome = EvolutionRunner.run(history, in: directory.url)
                        if !outcome.failures.isEmpty, mine.failures.count >= 2 {
                            outcome.failures = ["history failed (not shrunk: shrinking stops after 2 per worker):\n\(history)\n\(outcome.failures.joined(separator: "\n"))"]
                        } else if !outcome.failures.isEmpty {
                            let small = history.shrunk { !EvolutionRunner.run($0, in: directory.url).failures.isEmpty }
                            let again = EvolutionRunner.run(small, in: directory.url)
                            outcome.failures = ["history failed:\n\(history)\n\(outcome.failures.joined(separator: "\n"))\nshrunk to:\n\(small)\n\(again.failures.joined(separator: "\n"))"]
                        }
                        mine.add(outcome)
                    }
                    total.add(mine)
                    group.leave()
                }
            }
            group.notify(queue: .global()) { done.resume() }
        }
        let outcome = total.value
        print(outcome.summary)
        for failure in outcome.failures { Issue.record(Comment(rawValue: failure)) }
        #expect(outcome.skipped == 0)
        #expect(outcome.histories == seeds.count)
        if seeds.count >= 100 {
            // The generator reaches every kind of outcome: objects checked, refusals diagnosed.
            #expect(outcome.objectsChecked > 50 * seeds.count)
            #expect(outcome.diagnostics > 0)
        }
    }
}

/// The outcomes of both workers.
final class EvolutionTotals: @unchecked Sendable {
    private let lock = NSLock()
    private var total = EvolutionOutcome()
    func add(_ outcome: EvolutionOutcome) { lock.lock(); total.add(outcome); lock.unlock() }
    var value: EvolutionOutcome { lock.lock(); defer { lock.unlock() }; return total }
}
