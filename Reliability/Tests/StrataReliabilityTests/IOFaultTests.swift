import Foundation
import StrataTortureKit
import Synchronization
import Testing

/// Area 3 of issue 7: I/O errors and disk full, SQLite's "fail at n" loop. Through the LD_PRELOAD shim the
/// n-th write (pwrite/writev, the meta page's O_DSYNC write included) or the n-th fdatasync of `data.mdb`
/// fails with EIO or ENOSPC — once, or from then on — for n = 1, 2, … until the operation completes
/// without meeting the fault. Each time: a typed error (`StoreError.ioError`/`.diskFull`, or
/// `MigrationError.interrupted` around one), the process alive (the whole loop runs in one child), the store
/// exactly at its last acknowledged commit, and once "space returns" reopening finishes the work with
/// every object intact. Each loop must inject at least one fault per write (or sync) its completed run made.
/// A failed meta write makes LMDB refuse the environment (`MDB_PANIC`); the store is
/// reopened, as `StoreError.needsReopen` says.
extension ReliabilitySuite {
    @Suite struct IOFaults {
        struct Loop: Sendable, CustomStringConvertible {
            var workload: String
            var plan: String
            var op: String
            var errno: String
            var forever: Bool
            var count: Int
            var batch: Int
            var extra: Int = 0
            var description: String { "\(workload)/\(plan) \(op) \(errno) \(forever ? "forever" : "once")" }
        }

        static var loops: [Loop] {
            var out: [Loop] = []
            for op in ["write", "sync"] {
                for e in ["EIO", "ENOSPC"] {
                    for forever in [false, true] {
                        out.append(Loop(workload: "migrate", plan: "rewrite", op: op, errno: e, forever: forever,
                                        count: Tier.current.pick(ci: 600, full: 1500), batch: 100))
                    }
                }
            }
            out.append(Loop(workload: "fill", plan: "v1", op: "write", errno: "ENOSPC", forever: false, count: 200, batch: 50, extra: 300))
            out.append(Loop(workload: "fill", plan: "v1", op: "sync", errno: "EIO", forever: true, count: 200, batch: 50, extra: 300))
            out.append(Loop(workload: "create", plan: "v1", op: "write", errno: "EIO", forever: true, count: 0, batch: 50, extra: 150))
            out.append(Loop(workload: "migrate", plan: "custom", op: "write", errno: "ENOSPC", forever: true, count: 300, batch: 100))
            out.append(Loop(workload: "migrate", plan: "typed", op: "sync", errno: "EIO", forever: false, count: 300, batch: 100))
            out.append(Loop(workload: "migrate", plan: "light", op: "write", errno: "EIO", forever: false, count: 300, batch: 100))
            out.append(Loop(workload: "migrate", plan: "chain", op: "write", errno: "ENOSPC", forever: false, count: 300, batch: 100))
            out.append(Loop(workload: "migrate", plan: "script", op: "sync", errno: "EIO", forever: true, count: 300, batch: 100))
            out.append(Loop(workload: "fill", plan: "v1", op: "write", errno: "EIO", forever: true, count: 200, batch: 50, extra: 300))
            if Tier.current.isFull {
                for plan in ["custom", "typed", "script", "chain", "light"] {
                    for op in ["write", "sync"] {
                        out.append(Loop(workload: "migrate", plan: plan, op: op, errno: "EIO", forever: false, count: 600, batch: 100))
                        out.append(Loop(workload: "migrate", plan: plan, op: op, errno: "ENOSPC", forever: true, count: 600, batch: 100))
                    }
                }
                out.append(Loop(workload: "create", plan: "v1", op: "sync", errno: "ENOSPC", forever: false, count: 0, batch: 50, extra: 300))
            }
            return out
        }

        @Test("EIO and ENOSPC on the n-th write or sync, n = 1, 2, … until the work completes")
        func failAtN() throws {
            try #require(Products.shimAvailable, "the fault shim libStrataFaultShim.so must be built: run swift build --build-tests first")
            let workspace = try Workspace("io")
            let results = Mutex<[(Loop, ChildResult)]>([])
            try concurrentForEach(Array(IOFaults.loops.enumerated())) { (i, loop) in
                let pristine = loop.workload == "create" ? workspace.url("none") : try PristineStores.v1(count: loop.count)
                let work = workspace.url("loop\(i)")
                let run = try Child.run(
                    ["io-loop", pristine.path, "--work", work.path, "--workload", loop.workload, "--plan", loop.plan,
                     "--op", loop.op, "--errno", loop.errno, "--forever", loop.forever ? "1" : "0",
                     "--count", "\(loop.count)", "--batch", "\(loop.batch)", "--extra", "\(loop.extra)", "--seed", "\(Tier.seed)"],
                    environment: ["LD_PRELOAD": Products.shim, "STRATA_SHIM_DIR": work.path], timeout: 900)
                results.withLock { $0.append((loop, run)) }
            }
            var faults = 0, bad = 0, untyped = 0
            var kinds: [String: Int] = [:]
            for (loop, run) in results.withLock({ $0 }) {
                #expect(run.exitCode == 0 && run.line("DONE") != nil, "\(loop): the process did not survive: \(run)")
                #expect(run.line("COMPLETE") != nil, "\(loop): the loop never completed without a fault")
                // A floor on the faults themselves: the run that completed made `calls` writes (or syncs), and
                // each of them must have failed in a trial of its own — a shim that injects nothing fails here.
                let injected = run.lines(prefix: "FAULT ").filter { $0.contains(" hits=") && !$0.contains(" hits=0 ") }.count
                let calls = run.line("COMPLETE ").flatMap { $0.split(separator: " ").first { $0.hasPrefix("calls=") } }.flatMap { Int($0.dropFirst(6)) } ?? 0
                #expect(calls >= 1, "\(loop): the completed run made no \(loop.op) the shim saw: \(run.line("COMPLETE ") ?? "-")")
                #expect(injected >= max(1, calls), "\(loop): \(injected) faults injected for \(calls) \(loop.op)s of the completed run")
                for line in run.lines(prefix: "FAULT ") {
                    let parts = line.split(separator: " ").map(String.init)
                    let fine = line.contains(" typed ") && line.contains("state=ok") && line.contains("resumed=clean")
                    if fine { faults += 1 } else { bad += 1; Issue.record("\(loop): \(line)") }
                    if line.contains(" untyped ") { untyped += 1 }
                    if parts.count > 4 { kinds[parts[4], default: 0] += 1 }
                }
            }
            Figures.add("I/O faults (\(IOFaults.loops.count) loops; \(kinds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")))") { c in
                c.ioFaults += faults
                c.recordsLost += bad
                c.untypedErrors += untyped
            }
        }
    }
}
