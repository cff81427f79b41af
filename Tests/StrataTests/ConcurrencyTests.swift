import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Concurrent readers with a writer, on threads and on tasks: every read sees a consistent snapshot (the
/// invariants the writer keeps hold in every snapshot), and a snapshot does not change while its closure
/// runs, even when the writer commits meanwhile — which the tests make certain (a reader holds its snapshot
/// until the writer has committed a transfer the snapshot does not hold) and count.
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

    /// The writer's committed transfers, counted under a condition that readers wait on (no sleeping).
    final class Commits: @unchecked Sendable {
        private let condition = NSCondition()
        private var count = 0
        private var finished = false

        /// Called after each transfer's write transaction has committed.
        func committed() { condition.lock(); count += 1; condition.broadcast(); condition.unlock() }
        /// Called when the writer stops (after its last commit, or on failure).
        func finish() { condition.lock(); finished = true; condition.broadcast(); condition.unlock() }

        var value: Int { condition.lock(); defer { condition.unlock() }; return count }
        var isFinished: Bool { condition.lock(); defer { condition.unlock() }; return finished }

        /// Waits until more than `n` transfers have committed, or the writer has finished; returns the count.
        /// (A writer that cannot commit while a snapshot is held — no overlap — makes it give up after 30 s.)
        func wait(beyond n: Int) -> Int {
            condition.lock()
            defer { condition.unlock() }
            let deadline = Date().addingTimeInterval(30)
            while count <= n && !finished {
                if !condition.wait(until: deadline) { break }
            }
            return count
        }
    }

    /// A reader holding its snapshot: released once (when it holds it, or when its task ends).
    final class Hold: Sendable {
        let group = DispatchGroup()
        private let released = Atomic<Bool>(false)
        init() { group.enter() }
        func release() { if !released.exchange(true, ordering: .acquiringAndReleasing) { group.leave() } }
    }

    final class Shared: Sendable {
        let commits = Commits()
        let snapshots = Atomic<Int>(0)
        /// Snapshots that a commit certainly overlapped: the writer had committed a transfer the snapshot
        /// does not hold before the snapshot was read again.
        let overlapped = Atomic<Int>(0)
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
        let readerCount = 4
        // The writer starts once every reader holds its first snapshot.
        let holding = DispatchGroup()
        let readersDone = DispatchGroup()
        for _ in 0..<readerCount { holding.enter(); readersDone.enter() }
        let writer = Thread {
            defer { shared.commits.finish() }
            holding.wait()
            var rng = SeededGenerator(seed: 8)
            for serial in 0..<writes {
                do {
                    try store.write { try Self.transfer($0, serial: serial, rng: &rng) }
                } catch { shared.fail("write \(serial): \(error)"); return }
                shared.commits.committed()
            }
        }
        for r in 0..<readerCount {
            Thread {
                defer { readersDone.leave() }
                var round = 0
                var held = false
                // Whatever happens to the first read, the writer is not kept waiting.
                defer { if !held { holding.leave() } }
                while !shared.commits.isFinished || round < 3 {
                    round += 1
                    do {
                        try store.read { ctx in
                            if !held { held = true; holding.leave() }
                            guard let first = try Self.check(ctx) else { shared.fail("reader \(r): inconsistent snapshot"); return }
                            // Hold the snapshot until the writer has committed a transfer it does not hold
                            // (or has finished), then look again: nothing changed here.
                            let committed = shared.commits.wait(beyond: first.transfers)
                            guard let second = try Self.check(ctx), second == first else {
                                shared.fail("reader \(r): the snapshot changed within one read closure"); return
                            }
                            if committed > first.transfers { shared.overlapped.add(1, ordering: .relaxed) }
                            shared.snapshots.add(1, ordering: .relaxed)
                        }
                    } catch { shared.fail("reader \(r): \(error)") }
                }
            }.start()
        }
        writer.start()
        #expect(readersDone.wait(timeout: .now() + 120) == .success, "readers did not finish")
        #expect(shared.failures.withLock { $0 } == [])
        // Every reader's first snapshot (at least) was overlapped by a commit.
        #expect(shared.overlapped.load(ordering: .relaxed) >= readerCount)
        #expect(try store.read { try Self.check($0)?.transfers } == writes)
    }

    @Test func asyncReadersAndWritersInterleave() async throws {
        let store = try Self.makeStore()
        defer { store.close() }
        let shared = Shared()
        let writes = 100
        // Reader 0 holds its first snapshot until the writer has committed beyond it; the writer starts once
        // it holds (read closures run on the store's reader threads, so blocking one there is fine).
        let holding = Hold()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { shared.commits.finish() }
                await withCheckedContinuation { c in holding.group.notify(queue: .global()) { c.resume() } }
                var rng = SeededGenerator(seed: 9)
                for serial in 0..<writes {
                    let seed = rng.next()
                    try await store.write { ctx in
                        var local = SeededGenerator(seed: seed)
                        try Self.transfer(ctx, serial: serial, rng: &local)
                    }
                    shared.commits.committed()
                }
            }
            for r in 0..<6 {
                group.addTask {
                    // Whatever happens to the first read, the writer is not kept waiting.
                    defer { if r == 0 { holding.release() } }
                    var previous = -1
                    var first = true
                    while !shared.commits.isFinished {
                        let holds = r == 0 && first
                        first = false
                        let snapshot = try await store.read { ctx -> Int? in
                            if holds { holding.release() }
                            guard let before = try Self.check(ctx) else { return nil }
                            let committed = holds ? shared.commits.wait(beyond: before.transfers) : shared.commits.value
                            guard let after = try Self.check(ctx), after == before else { return nil }
                            // A transfer the snapshot does not hold had committed before the second look.
                            if committed > before.transfers { shared.overlapped.add(1, ordering: .relaxed) }
                            return before.transfers
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
        #expect(shared.overlapped.load(ordering: .relaxed) >= 1, "no read was overlapped by a commit")
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
