import Foundation
import StrataTortureKit
import Testing

/// One kill trial: a child migrates a copy of a pristine store and dies (at a fault point, or by a SIGKILL
/// from the parent after a delay); a fresh child then opens the store, which must be exactly at the last
/// acknowledged commit (or the next one for a kill between a commit and its acknowledgement), finish the
/// migration and find every object equal to the oracle.
struct KillTrial {
    var plan: String
    var count: Int
    var batch: Int
    var seed: UInt64 = Tier.seed
    /// The resuming child checks every object against the oracle but skips `verify()` (for big stores).
    var skipVerify = false

    struct Outcome {
        var killed: Bool
        /// Killed while the migration was under way: the last commit it acknowledged was not the end state.
        var midWork = false
        var problems: [String] = []
        var result: CheckResult?
        var acknowledged = 0
        var ledgerExtra = 0
        var ok: Bool { problems.isEmpty }
    }

    func arguments(_ store: URL) -> [String] {
        ["migrate", store.path, "--plan", plan, "--count", "\(count)", "--batch", "\(batch)", "--seed", "\(seed)"]
    }

    /// Runs the trial on `store` (a fresh copy). `fault` is a `STRATA_FAULT` spec with a kill action;
    /// `killAfter` a delay for the parent's SIGKILL instead.
    func run(store: URL, fault: String? = nil, killAfter: Double? = nil, ledger: URL? = nil) throws -> Outcome {
        var environment: [String: String] = [:]
        if let ledger { environment["STRATA_TORTURE_LEDGER"] = ledger.path }
        var faulted = environment
        if let fault { faulted["STRATA_FAULT"] = fault }
        let before = try Data(contentsOf: store.appendingPathComponent("data.mdb"))
        let first: ChildResult
        if let killAfter {
            first = try Child.run(arguments(store), environment: faulted, killAfter: killAfter)
        } else {
            first = try Child.run(arguments(store), environment: faulted)
        }
        var outcome = Outcome(killed: first.signal == 9)
        let acks = acknowledgements(first)
        outcome.acknowledged = acks.count
        outcome.midWork = outcome.killed && !migrationFinished(acks.last?.1 ?? "none", plan: plan)
        if first.signal == nil && first.exitCode != 0 {
            outcome.problems.append("the first child failed: \(first)")
            return outcome
        }
        if let signal = first.signal, signal != 9 {
            outcome.problems.append("the first child died by signal \(signal): \(first)")
        }
        let last = acks.last?.1 ?? "none"
        // Killed before the migration wrote anything: the data file is byte-identical.
        if fault?.hasPrefix("journal.beforeBegin:0:") == true,
           try Data(contentsOf: store.appendingPathComponent("data.mdb")) != before {
            outcome.problems.append("killed before the journal was written, but data.mdb changed")
        }

        let second = try Child.run(arguments(store) + (skipVerify ? ["--no-verify"] : []), environment: environment)
        let found = acknowledgements(second).first?.1 ?? "?"
        if outcome.killed {
            // Exactly the last acknowledged state, or (killed between a commit and its ACK) the one after.
            if found != last {
                let f = transactionID(found), l = transactionID(last)
                if killAfter == nil || f == nil || l == nil || f! != l! + 1 {
                    outcome.problems.append("reopened at \(found), last acknowledged \(last)")
                }
            }
        }
        guard second.exitCode == 0, let result = checkResult(second) else {
            outcome.problems.append("the resuming child failed: \(second)")
            return outcome
        }
        outcome.result = result
        if !result.isClean { outcome.problems.append("after resuming: \(result)") }
        if let ledger, plan == "custom" || plan == "typed" || plan == "script" {
            // A committed batch is never redone: at most one batch of transforms repeated per kill.
            let counts = Ledger.counts(at: ledger.path)
            let objects = counts.filter { $0.key.hasPrefix("i") || $0.key.hasPrefix("s") }
            let extra = objects.values.reduce(0, +) - objects.count
            outcome.ledgerExtra = extra
            if objects.count != count { outcome.problems.append("\(objects.count) objects transformed, expected \(count)") }
            if extra > batch { outcome.problems.append("\(extra) transforms repeated, more than one batch (\(batch))") }
            // A script whose transaction committed never runs again; one killed before its commit runs again.
            let willCommitted = last.contains(" m=1 ") && (journalProgress(last)?.task ?? 0) >= 1 || !last.contains("v=v1 ")
            let didCommitted = !last.contains("v=v1 ") && last.contains(" m=0 ")
            let will = counts["will"] ?? 0, did = counts["did"] ?? 0
            if will < 1 || will > (willCommitted ? 1 : 2) { outcome.problems.append("willMigrate ran \(will) times (committed before the kill: \(willCommitted))") }
            if did < 1 || did > (didCommitted ? 1 : 2) { outcome.problems.append("didMigrate ran \(did) times (committed before the kill: \(didCommitted))") }
        }
        return outcome
    }
}

/// The model version a plan's migration ends at.
func targetVersion(plan: String) -> String {
    switch plan {
    case "light": "v2"
    case "custom", "typed": "c2"
    case "script": "s2"
    case "declared": "d2"
    case "v1": "v1"
    default: "v3"
    }
}

/// Whether a store state (a signature) is the end of the plan's migration: the target version, no journal.
func migrationFinished(_ signature: String, plan: String) -> Bool {
    signature.contains("v=\(targetVersion(plan: plan)) ") && signature.contains(" m=0 ") && signature.contains(" j=- ")
}

/// Adds a set of kill outcomes to the figures and fails the test on any problem.
func record(_ test: String, _ outcomes: [KillTrial.Outcome]) {
    let killed = outcomes.filter { $0.killed && $0.ok }.count
    Figures.add(test) { c in
        c.kills += killed
        for o in outcomes {
            if let r = o.result {
                c.recordsLost += r.lost + r.unreadable
                c.silentWrongValues += r.wrongValues
            }
        }
    }
    for o in outcomes where !o.ok { Issue.record("\(test): \(o.problems.joined(separator: "; "))") }
}
