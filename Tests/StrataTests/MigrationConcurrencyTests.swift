import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// While a migration runs, another handle on the store reads the old version whole — never a mix — until the
/// switch, and `StoreError.modelChanged` afterwards; its writes fail with `migrationInProgress` (or
/// `modelChanged` once the model has changed); opening the store meanwhile says a migration is in progress.
@Suite struct MigrationConcurrencyTests {
    static let entries = 600

    /// What a reader of the v1 handle saw.
    enum Seen: Equatable { case oldVersion, modelChanged, wrong(String) }

    /// Reads the whole v1 store through `store` and compares it with `expected` (code → title).
    static func look(_ store: Store, expected: [String: String]) -> Seen {
        do {
            return try store.read { try look(in: $0, expected: expected) }
        } catch let error as StoreError where error.code == .modelChanged {
            return .modelChanged
        } catch {
            return .wrong("\(error)")
        }
    }

    /// Reads the whole v1 store in one snapshot and compares it with `expected`.
    static func look(in ctx: ReadContext, expected: [String: String]) throws -> Seen {
        var seen = 0
        var wrong: String? = nil
        try ctx.objects("Entry").forEach { e in
            seen += 1
            if wrong == nil, expected[e["code"].stringValue ?? ""] != e["title"].stringValue { wrong = "entry \(e.id): \(e)" }
        }
        if let wrong { return .wrong(wrong) }
        guard seen == expected.count, try ctx.count("Label") == 24, try ctx.count("Folder") == 15 else {
            return .wrong("\(seen) entries")
        }
        return .oldVersion
    }

    static func makeStore(_ url: URL) throws -> [String: String] {
        let oracle = Oracle(schema: try JournalChain.v1())
        let store = try Store.open(at: url, schema: try JournalChain.v1())
        defer { store.close() }
        try JournalChain.fill(store, version: "v1", entries: entries, seed: 21, oracle: oracle)
        var expected: [String: String] = [:]
        for id in oracle.ids(of: "Entry") {
            let values = oracle.objects[id]!.values
            expected[values["code"]!.stringValue!] = values["title"]!.stringValue!
        }
        return expected
    }

    @Test func readersAndWritersOfAnotherHandleDuringTheMigration() throws {
        let dir = try TemporaryDirectory("migrating-handles")
        let expected = try Self.makeStore(dir.store)
        let old = try Store.open(at: dir.store, schema: try JournalChain.v1())
        defer { old.close() }
        let log = Mutex<[(MigrationProgress.Phase, Int, Seen, String)]>([])
        var options = MigrationOptions()
        options.batchSize = 40
        // Steps that rewrite (one layout per entity) and build their indexes: batches other handles overlap.
        options.maximumLayoutsPerEntity = 1
        options.buildsIndexesInBackground = false
        options.progress = { p in
            // On the migrating thread, between two batches.
            let seen = Self.look(old, expected: expected)
            let write: String
            do {
                _ = try old.write { try $0.insert("Label", ["text": "intruder"]) }
                write = "accepted"
            } catch let error as StoreError {
                switch error.code {
                case .migrationInProgress: write = "migrationInProgress"
                case .modelChanged: write = "modelChanged"
                default: write = "\(error)"
                }
            } catch { write = "\(error)" }
            log.withLock { $0.append((p.phase, p.stepIndex, seen, write)) }
        }
        // Opening the store while it migrates (from inside the migration) is refused too.
        let openedMeanwhile = Mutex<[String]>([])
        let previous = options.progress
        options.progress = { p in
            previous?(p)
            if p.stepIndex == 1 && p.phase == .instances {
                do {
                    let s = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan())
                    s.close()
                    openedMeanwhile.withLock { $0.append("opened") }
                } catch let error as StoreError where error.code == .migrationInProgress {
                    openedMeanwhile.withLock { $0.append("migrationInProgress") }
                } catch {
                    openedMeanwhile.withLock { $0.append("\(error)") }
                }
            }
        }
        try Store.migrate(at: dir.store, plan: try JournalChain.plan(), configuration: StoreConfiguration(migration: options))

        let entries = log.withLock { $0 }
        #expect(!entries.isEmpty)
        // Before the first switch: the old version, whole; writes refused as a migration is in progress.
        let beforeSwitch = entries.prefix { !($0.1 == 0 && $0.0 == .switching) }
        #expect(!beforeSwitch.isEmpty)
        // Those reads came after batches of the migration had committed (a report follows each commit).
        #expect(beforeSwitch.filter { $0.0 == .instances || $0.0 == .indexing }.count >= 2, "\(beforeSwitch.map(\.0))")
        for e in beforeSwitch {
            #expect(e.2 == .oldVersion, "\(e.0) step \(e.1): \(e.2)")
            #expect(e.3 == "migrationInProgress", "\(e.0) step \(e.1): write \(e.3)")
        }
        // From the first switch on: the old handle is told the model changed, for reads and writes alike.
        let afterSwitch = entries.dropFirst(beforeSwitch.count)
        #expect(!afterSwitch.isEmpty)
        for e in afterSwitch {
            #expect(e.2 == .modelChanged, "\(e.0) step \(e.1): \(e.2)")
            #expect(e.3 == "modelChanged", "\(e.0) step \(e.1): write \(e.3)")
        }
        #expect(!openedMeanwhile.withLock { $0 }.isEmpty)
        #expect(openedMeanwhile.withLock { $0 }.allSatisfy { $0 == "migrationInProgress" })
        // The intruder never got in; a new handle sees the new version.
        let new = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan())
        defer { new.close() }
        #expect(try new.read { try $0.objects("Tag").where("text", equals: "intruder").count() } == 0)
        #expect(try new.read { try $0.count("Entry") } == Self.entries)
        #expect(Self.look(old, expected: expected) == .modelChanged)
    }

    @Test func readerThreadSeesOneVersionOnly() throws {
        let dir = try TemporaryDirectory("migrating-reader")
        let expected = try Self.makeStore(dir.store)
        let old = try Store.open(at: dir.store, schema: try JournalChain.v1())
        defer { old.close() }
        // One snapshot of the old handle, taken before the migration starts and held until it has finished:
        // the whole migration, every batch and the switches, overlaps it.
        let holding = DispatchSemaphore(value: 0), migrated = DispatchSemaphore(value: 0), released = DispatchSemaphore(value: 0)
        let held = Mutex<(before: Seen, after: Seen)?>(nil)
        Thread {
            defer { released.signal() }
            do {
                try old.read { ctx in
                    let before = try Self.look(in: ctx, expected: expected)
                    holding.signal()
                    // (A migration that cannot commit while a snapshot is held — no overlap — times out here.)
                    guard migrated.wait(timeout: .now() + 60) == .success else {
                        held.withLock { $0 = (before, .wrong("the migration did not finish while the snapshot was held")) }
                        return
                    }
                    let after = try Self.look(in: ctx, expected: expected)
                    held.withLock { $0 = (before, after) }
                }
            } catch {
                held.withLock { $0 = (.wrong("\(error)"), .wrong("\(error)")) }
                holding.signal()
            }
        }.start()
        // Another thread reads in a loop, each read a new snapshot.
        let done = Atomic<Bool>(false)
        let seen = Mutex<[Seen]>([])
        let finished = DispatchSemaphore(value: 0)
        Thread {
            while !done.load(ordering: .sequentiallyConsistent) {
                let s = Self.look(old, expected: expected)
                seen.withLock { $0.append(s) }
            }
            seen.withLock { $0.append(Self.look(old, expected: expected)) }
            finished.signal()
        }.start()
        holding.wait()
        // Migrate in small batches while the snapshot is held; count the commits reported meanwhile.
        let commitsWhileHeld = Atomic<Int>(0)
        var options = MigrationOptions()
        options.batchSize = 25
        options.rewritesEveryRecord()  // every step rewrites Entry in batches: many commits under the snapshot
        options.progress = { p in if p.phase != .completed { commitsWhileHeld.add(1, ordering: .relaxed) } }
        try Store.migrate(at: dir.store, plan: try JournalChain.plan(), configuration: StoreConfiguration(migration: options))
        let committedWhileHeld = commitsWhileHeld.load(ordering: .relaxed)
        migrated.signal()
        released.wait()
        done.store(true, ordering: .sequentiallyConsistent)
        finished.wait()
        // The held snapshot read the old version whole before and after every commit of the migration.
        #expect(committedWhileHeld > Self.entries / 25)
        let h = held.withLock { $0 }
        #expect(h?.before == .oldVersion && h?.after == .oldVersion, "\(String(describing: h))")
        let results = seen.withLock { $0 }
        // Old data while it runs, then only modelChanged: never anything else, never back.
        let old_ = results.prefix { $0 == .oldVersion }
        let rest = results.dropFirst(old_.count)
        #expect(!old_.isEmpty)
        #expect(!rest.isEmpty)
        #expect(rest.allSatisfy { $0 == .modelChanged }, "\(rest.filter { $0 != .modelChanged }.prefix(3))")
    }
}
