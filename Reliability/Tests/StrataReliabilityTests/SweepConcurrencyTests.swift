import Foundation
import Strata
import StrataTestKit
import StrataTortureKit
import Synchronization
import Testing

/// Issue 13's reliability item: an app writing and reading in one process while another process sweeps
/// (rewrites old-layout records into the current layout). The sweep reads each record inside its own write
/// transaction, so an update the app committed is never overwritten with the older value; a reader never sees
/// an object half in one layout and half in the other.
extension ReliabilitySuite {
    @Suite struct SweepConcurrency {
        struct MissingItem: Error { let serial: Int }

        @Test("another process sweeps while this one updates and reads: no lost update, no mixed object", .timeLimit(.minutes(3)))
        func writersAndReadersDuringTheSweep() throws {
            try #require(Products.available, "strata-torture must be built (swift build --build-tests)")
            let count = 600
            let workspace = try Workspace("sweep-writers")
            // A v3 store whose records are all still in v1's layout (`instant`: v1 → v3 as metadata only).
            let url = try workspace.copy(try PristineStores.v1(count: count), to: "store")
            let migrated = try Child.run(["migrate", url.path, "--plan", "instant", "--count", "\(count)", "--seed", "\(Tier.seed)"])
            try #require(migrated.exitCode == 0, "\(migrated)")
            let oracle = SeededContents(seed: Tier.seed)
            let plan = try TortureModels.plan("instant")
            let store = try Store.open(at: url, schema: plan.currentSchema, plan: plan, configuration: TortureModels.configuration(plan: "instant"))
            defer { store.close() }
            try #require(try store.maintenanceStatus().oldLayoutRecords == count)

            // The child sweeps slowly: batches of 10, 30 ms after each commit.
            let child = try Child(["maintain", url.path, "--op", "layouts", "--plan", "instant", "--count", "\(count)",
                                   "--batch", "10", "--seed", "\(Tier.seed)"],
                                  environment: ["STRATA_FAULT": "txn.afterCommit:*:sleep:30"])
            try #require(child.waitForLine(timeout: 60) { $0.hasPrefix("ACK 2 ") } != nil, "the sweep did not start")

            // This process flags items (flag is false in every v3 item), a few per transaction, and reads every
            // item between commits: each must hold its v3 values whatever layout it is in.
            var random = SeededGenerator(seed: Tier.seed &+ 131)
            var flagged = Set<Int>()
            var commitsDuringSweep = 0
            var oldRecordsSeen = 0
            var mixed: [String] = []
            while child.isRunning && flagged.count < count {
                let picks = (0..<4).map { _ in Int(random.next() % UInt64(count)) }
                try store.write { ctx in
                    for serial in picks {
                        guard var item = try ctx.objects("Item").where("serial", equals: .int64(Int64(serial))).first() else {
                            throw MissingItem(serial: serial)
                        }
                        item["flag"] = .bool(true)
                        try ctx.update(item)
                    }
                }
                flagged.formUnion(picks)
                let left = try store.maintenanceStatus().oldLayoutRecords
                if left > 0 { commitsDuringSweep += 1; oldRecordsSeen = max(oldRecordsSeen, left) }
                let seen = flagged
                try store.read { ctx in
                    for item in try ctx.objects("Item").fetch() {
                        guard let serial = item["serial"].int64Value.map(Int.init) else { mixed.append("an item without serial"); continue }
                        var want = oracle.expectedValues(serial, version: "v3")
                        if seen.contains(serial) { want["flag"] = .bool(true) }
                        for (name, value) in want where item[name] != value {
                            mixed.append("item \(serial).\(name): \(item[name]) ≠ \(value)")
                        }
                    }
                }
                if mixed.count > 20 { break }
            }
            let end = child.wait(timeout: 120)
            #expect(mixed.isEmpty, "objects read during the sweep: \(mixed.prefix(10))")
            // Overlap: this process committed while the sweep still had records to rewrite.
            #expect(commitsDuringSweep >= 5, "only \(commitsDuringSweep) commits while old records were left")
            // The child's own oracle check fails on the flags this process set (exit 4); its sweep must finish.
            #expect(end.exitCode == 0 || end.exitCode == 4, "\(end)")
            let layouts = end.line("LAYOUTS ")?.split(separator: " ")
            #expect(layouts?.count == 3 && layouts?[2] == "0", "entities left with old layouts: \(end)")

            // Every item: its v3 values, with every flag this process set — none undone by a sweep batch.
            #expect(try store.maintenanceStatus().isComplete)
            var lost = 0, wrong = 0
            try store.read { ctx in
                let items = try ctx.objects("Item").fetch()
                #expect(items.count == count)
                for item in items {
                    guard let serial = item["serial"].int64Value.map(Int.init) else { wrong += 1; continue }
                    var want = oracle.expectedValues(serial, version: "v3")
                    if flagged.contains(serial) { want["flag"] = .bool(true) }
                    if flagged.contains(serial) && item["flag"] != .bool(true) { lost += 1 }
                    else if want.contains(where: { item[$0.key] != $0.value }) { wrong += 1 }
                }
            }
            #expect(lost == 0, "\(lost) of \(flagged.count) updates lost to the sweep")
            #expect(wrong == 0, "\(wrong) items with other values")
            #expect(try store.verify().isClean)
            Figures.add("updates and reads in one process while another sweeps (\(flagged.count) items updated, \(commitsDuringSweep) commits beside the sweep)") { c in
                c.recordsLost += lost
                c.mixedReads += mixed.count
                c.silentWrongValues += wrong
            }
        }
    }
}
