import Foundation
import StrataTortureKit
import Synchronization
import Testing

/// Area 2 of issue 7: simulated power loss. The child runs under the LD_PRELOAD shim in snapshot mode: at
/// every sync point of `data.mdb` (each fdatasync, each O_DSYNC meta write, each directory fsync) the shim
/// writes crash images — what is durable, plus every pending write applied, dropped or torn at 512 B, and
/// pending renames kept or lost — as SQLite's crash VFS does. Each image must open at the last acknowledged
/// commit or the next one, and resume to a store whose every object matches the oracle. Store creation is
/// covered too: an image taken before `Store.open` returned holds no store or a complete one, never a
/// half-created store mistaken for an empty one.
extension ReliabilitySuite {
    @Suite struct PowerLoss {
        struct Workload: Sendable, CustomStringConvertible {
            var name: String
            var plan: String  // "create" or a migration plan
            var count: Int
            var batch: Int
            /// The background sweep instead of a migration: the store is migrated by `plan` (metadata only)
            /// before the shim runs, and the sweep's rewrite of every old-layout record is what loses power.
            var sweep = false
            var description: String { name }
        }

        /// Store sizes: the full tier's stores are three times bigger (three times as many batches and sync points).
        static let scale = Tier.current.pick(ci: 1, full: 3)
        static let workloads: [Workload] = [
            Workload(name: "store creation and fill", plan: "create", count: 500 * scale, batch: 50),
            Workload(name: "rewrite migration", plan: "rewrite", count: 600 * scale, batch: 100),
            Workload(name: "chain v1→v2→v3", plan: "chain", count: 400 * scale, batch: 100),
            Workload(name: "custom stage", plan: "custom", count: 400 * scale, batch: 100),
            Workload(name: "typed stage", plan: "typed", count: 400 * scale, batch: 100),
            Workload(name: "script stage", plan: "script", count: 400 * scale, batch: 100),
            Workload(name: "background sweep after a metadata-only migration", plan: "instant", count: 600 * scale, batch: 100, sweep: true),
        ]

        @Test("crash images at every sync point", arguments: PowerLoss.workloads)
        func images(workload: Workload) throws {
            try #require(Products.shimAvailable, "the fault shim libStrataFaultShim.so must be built: run swift build --build-tests first")
            let variants = Tier.current.pick(ci: 6, full: 12)
            let workspace = try Workspace("power-\(workload.plan)")
            let tracked = workspace.url("tracked")
            let out = workspace.url("images")
            try FileManager.default.createDirectory(at: tracked, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
            let store = tracked.appendingPathComponent("store")
            var arguments: [String]
            if workload.plan == "create" {
                arguments = ["create", store.path]
            } else if workload.sweep {
                _ = try workspace.copy(try PristineStores.v1(count: workload.count), to: "tracked/store")
                let migrated = try Child.run(["migrate", store.path, "--plan", workload.plan, "--count", "\(workload.count)", "--seed", "\(Tier.seed)"])
                try #require(migrated.exitCode == 0, "the metadata-only migration before the sweep: \(migrated)")
                arguments = ["maintain", store.path, "--op", "layouts", "--plan", workload.plan]
            } else {
                _ = try workspace.copy(try PristineStores.v1(count: workload.count), to: "tracked/store")
                arguments = ["migrate", store.path, "--plan", workload.plan]
            }
            arguments += ["--count", "\(workload.count)", "--batch", "\(workload.batch)", "--seed", "\(Tier.seed)"]
            let environment = [
                "LD_PRELOAD": Products.shim, "STRATA_SHIM_DIR": tracked.path, "STRATA_SHIM_MODE": "snapshot",
                "STRATA_SHIM_OUT": out.path, "STRATA_SHIM_VARIANTS": "\(variants)", "STRATA_SHIM_SEED": "\(Tier.seed)",
            ]
            let run = try Child.run(arguments, environment: environment, timeout: 300)
            #expect(run.exitCode == 0, "the workload under the shim failed: \(run)")
            #expect(checkResult(run)?.isClean == true, "\(run.line("RESULT") ?? "no result")")
            let log = workspace.url("log.txt")
            try run.lines.joined(separator: "\n").write(to: log, atomically: true, encoding: .utf8)
            let expected = run.lines(prefix: "IMAGE ").count
            // A floor on the crashes themselves: every commit the child acknowledged passed at least one sync
            // point, and each sync point gave images — a shim that writes none fails here.
            let syncPoints = Set(run.lines(prefix: "IMAGE ").compactMap { $0.split(separator: " ").dropFirst().first }).count
            let commits = acknowledgements(run).filter { $0.0 >= 1 }.count
            #expect(commits >= 1 && syncPoints >= commits, "\(syncPoints) sync points with images for \(commits) commits")

            // Check every image in a child; restart it after an image that killed it.
            var outcomes: [String] = []
            var signals = 0
            var start = 0
            while start < expected {
                let check = try Child.run(["check-images", out.path, "--log", log.path, "--store-rel", "store",
                                           "--work", workspace.path("check"), "--plan", workload.plan,
                                           "--count", "\(workload.count)", "--batch", "\(workload.batch)",
                                           "--seed", "\(Tier.seed)", "--start", "\(start)"] + (workload.sweep ? ["--sweep"] : []),
                                          timeout: 900)
                outcomes += check.lines(prefix: "IMG ")
                if check.line("DONE") != nil { break }
                signals += 1
                let begun = check.lines(prefix: "BEGIN ").last.flatMap { Int($0.dropFirst(6)) } ?? start
                outcomes.append("IMG \(begun) CRASH \(check)")
                start = begun + 1
            }
            let failures = outcomes.filter { !$0.contains(" OK ") }
            let ok = outcomes.count - failures.count
            for f in failures.prefix(20) { Issue.record("\(workload.name): \(f)") }
            #expect(outcomes.count == expected, "\(outcomes.count) images checked of \(expected)")
            let next = outcomes.filter { $0.contains("match=next") }.count
            let absent = outcomes.filter { $0.contains("store=absent") }.count
            Figures.add("power loss, \(workload.name): \(expected) images (\(next) at the next commit, \(absent) before the store existed)") { c in
                c.powerLossImages += ok
                c.recordsLost += failures.count
                c.childSignals += signals
            }
        }

        /// The shim's crash mode: the child really stops at sync point k (exit status 99) with the crash image
        /// written; the image checks out like the snapshot mode's.
        @Test("crash mode: the child stops at sync point k")
        func crashMode() throws {
            try #require(Products.shimAvailable, "the fault shim libStrataFaultShim.so must be built: run swift build --build-tests first")
            let workspace = try Workspace("crash-mode")
            let pristine = try PristineStores.v1(count: 600)
            var checked = 0
            for k in [1, 2, 5, 12, 20, 30] {
                let tracked = workspace.url("t\(k)"), out = workspace.url("o\(k)")
                try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
                let store = try workspace.copy(pristine, to: "t\(k)/store")
                let run = try Child.run(["migrate", store.path, "--plan", "rewrite", "--count", "600", "--batch", "100", "--seed", "\(Tier.seed)"],
                                        environment: ["LD_PRELOAD": Products.shim, "STRATA_SHIM_DIR": tracked.path, "STRATA_SHIM_MODE": "crash",
                                                      "STRATA_SHIM_OUT": out.path, "STRATA_SHIM_CRASH_AT": "\(k)", "STRATA_SHIM_VARIANTS": "3"])
                #expect(run.exitCode == 99, "k=\(k): \(run)")
                let log = workspace.url("log\(k)")
                try run.lines.joined(separator: "\n").write(to: log, atomically: true, encoding: .utf8)
                let check = try Child.run(["check-images", out.path, "--log", log.path, "--store-rel", "store", "--work", workspace.path("c\(k)"),
                                           "--plan", "rewrite", "--count", "600", "--batch", "100", "--seed", "\(Tier.seed)"])
                let images = check.lines(prefix: "IMG ")
                #expect(!images.isEmpty && images.allSatisfy { $0.contains(" OK ") }, "k=\(k): \(images)")
                checked += images.filter { $0.contains(" OK ") }.count
            }
            Figures.add("power loss, crash mode (the child stopped at 6 sync points)") { c in c.powerLossImages += checked }
        }
    }
}
