import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Concurrent readers with a writer, on threads and on tasks: every read sees a consistent snapshot (the
/// invariants the writer keeps hold in every snapshot), and a snapshot does not change while its closure
/// runs, even when the writer commits meanwhile.
@Suite struct ConcurrencyTests {
    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("Account") {
                Attribute("number", .int64).unique()
                Attribute("balance", .int64)
            }
            Entity("Transfer") {
                Attribute("amount", .int64)
                Attribute("serial", .int64).indexed()
            }
        }
    }

    static let accounts = 20
    static let total: Int64 = 20 * 1000

    final class Shared: Sendable {
        let commits = Atomic<Int>(0)
        let done = Atomic<Bool>(false)
        let snapshots = Atomic<Int>(0)
        let readersDone = Atomic<Int>(0)
        let failures = Mutex<[String]>([])
        func fail(_ s: String) { failures.withLock { if $0.count < 20 { $0.append(s) } } }
    }

    static func makeStore() throws -> Store {
        let store = try Store.temporary(schema: try schema())
        try store.write { ctx in
            for n in 0..<accounts { try ctx.insert("Account", ["number": .int64(Int64(n)), "balance": 1000]) }
        }
        return store
    }

    /// One transfer between two accounts, recorded with its serial number (= transfers before it).
    static func transfer(_ ctx: WriteContext, serial: Int, rng: inout SeededGenerator) throws {
        let accounts = try ctx.objects("Account").fetch()
        var from = accounts[rng.int(accounts.count)], to = accounts[rng.int(accounts.count)]
        let amount = Int64(rng.int(50))
        from["balance"] = .int64(from["balance"].int64Value! - amount)
        try ctx.update(from)
        to = try ctx.object(to.id, of: "Account")!
        to["balance"] = .int64(to["balance"].int64Value! + amount)
        try ctx.update(to)
        try ctx.insert("Transfer", ["amount": .int64(amount), "serial": .int64(Int64(serial))])
    }

    /// The invariants of a snapshot: the money is all there, and the transfers are numbered 0..<n.
    static func check(_ ctx: ReadContext) throws -> (sum: Int64, transfers: Int)? {
        let sum = try ctx.objects("Account").fetch().reduce(Int64(0)) { $0 + $1["balance"].int64Value! }
        let n = try ctx.count("Transfer")
        let last = try ctx.objects("Transfer").where("serial", equals: .int64(Int64(n - 1))).count()
        let beyond = try ctx.objects("Transfer").where("serial", equals: .int64(Int64(n))).count()
        guard sum == total, n == 0 || last == 1, beyond == 0 else { return nil }
        return (sum, n)
    }

    @Test func threadsReadConsistentSnapshotsWhileOneWrites() throws {
        let store = try Self.makeStore()
        defer { store.close() }
        let shared = Shared()
        let writes = 200
        let writer = Thread {
            var rng = SeededGenerator(seed: 8)
            for serial in 0..<writes {
                do {
                    try store.write { try Self.transfer($0, serial: serial, rng: &rng) }
                } catch { shared.fail("write \(serial): \(error)") }
                shared.commits.add(1, ordering: .sequentiallyConsistent)
            }
            shared.done.store(true, ordering: .sequentiallyConsistent)
        }
        let readerCount = 4
        for r in 0..<readerCount {
            Thread {
                defer { shared.readersDone.add(1, ordering: .sequentiallyConsistent) }
                var round = 0
                while !shared.done.load(ordering: .sequentiallyConsistent) || round < 3 {
                    round += 1
                    do {
                        try store.read { ctx in
                            guard let first = try Self.check(ctx) else { shared.fail("reader \(r): inconsistent snapshot"); return }
                            // Let the writer commit at least once, then look again: nothing changed here.
                            let seen = shared.commits.load(ordering: .sequentiallyConsistent)
                            let deadline = Date().addingTimeInterval(2)
                            while shared.commits.load(ordering: .sequentiallyConsistent) == seen
                                && !shared.done.load(ordering: .sequentiallyConsistent) && Date() < deadline {
                                usleep(200)
                            }
                            guard let second = try Self.check(ctx), second == first else {
                                shared.fail("reader \(r): the snapshot changed within one read closure"); return
                            }
                            shared.snapshots.add(1, ordering: .relaxed)
                        }
                    } catch { shared.fail("reader \(r): \(error)") }
                }
            }.start()
        }
        writer.start()
        let deadline = Date().addingTimeInterval(120)
        while shared.readersDone.load(ordering: .sequentiallyConsistent) < readerCount && Date() < deadline { usleep(1000) }
        #expect(shared.readersDone.load(ordering: .sequentiallyConsistent) == readerCount, "readers did not finish")
        #expect(shared.failures.withLock { $0 } == [])
        #expect(shared.snapshots.load(ordering: .relaxed) >= readerCount)
        #expect(try store.read { try Self.check($0)?.transfers } == writes)
    }

    @Test func asyncReadersAndWritersInterleave() async throws {
        let store = try Self.makeStore()
        defer { store.close() }
        let shared = Shared()
        let writes = 100
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var rng = SeededGenerator(seed: 9)
                for serial in 0..<writes {
                    let seed = rng.next()
                    try await store.write { ctx in
                        var local = SeededGenerator(seed: seed)
                        try Self.transfer(ctx, serial: serial, rng: &local)
                    }
                    shared.commits.add(1, ordering: .sequentiallyConsistent)
                }
                shared.done.store(true, ordering: .sequentiallyConsistent)
            }
            for r in 0..<6 {
                group.addTask {
                    var previous = -1
                    while !shared.done.load(ordering: .sequentiallyConsistent) {
                        let snapshot = try await store.read { ctx -> Int? in
                            guard let first = try Self.check(ctx) else { return nil }
                            // Still the same snapshot after the writer had a chance to commit.
                            usleep(500)
                            guard let second = try Self.check(ctx), second == first else { return nil }
                            return first.transfers
                        }
                        guard let n = snapshot else { shared.fail("reader \(r): inconsistent or changing snapshot"); return }
                        // Reads on one task never go back in time.
                        if n < previous { shared.fail("reader \(r): saw \(n) transfers after \(previous)") }
                        previous = n
                        shared.snapshots.add(1, ordering: .relaxed)
                        await Task.yield()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(shared.failures.withLock { $0 } == [])
        #expect(shared.snapshots.load(ordering: .relaxed) > 0)
        let final = try await store.read { try Self.check($0)?.transfers }
        #expect(final == writes)
    }

    @Test func concurrentWritersAreSerialized() throws {
        let store = try Self.makeStore()
        defer { store.close() }
        let perThread = 50
        let threads = 4
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for i in 0..<perThread {
                try? store.write { ctx in
                    // Read-modify-write of one account: lost updates would show in the total.
                    var account = try #require(try ctx.objects("Account").where("number", equals: 0).first())
                    account["balance"] = .int64(account["balance"].int64Value! + 1)
                    try ctx.update(account)
                    try ctx.insert("Transfer", ["amount": 1, "serial": .int64(Int64(t * perThread + i))])
                }
            }
        }
        try store.read { ctx throws in
            let account = try #require(try ctx.objects("Account").where("number", equals: 0).first())
            #expect(account["balance"] == .int64(1000 + Int64(threads * perThread)))
            #expect(try ctx.count("Transfer") == threads * perThread)
        }
    }
}
