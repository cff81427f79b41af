import Foundation
@testable import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Progress of a migration, through the callback and through `Migrator.progress`: per step and per entity,
/// records done and total, after every batch, ending with each step's completion; `Migrator.stop()`
/// stops between batches and a later run resumes.
@Suite struct MigrationProgressTests {
    static let entries = 400
    static let batch = 50

    /// A v1 store of `entries` entries; returns the oracle of what was written.
    @discardableResult
    static func makeStore(_ url: URL) throws -> Oracle {
        let store = try Store.open(at: url, schema: try JournalChain.v1())
        defer { store.close() }
        let oracle = Oracle(schema: store.schema)
        try JournalChain.fill(store, version: "v1", entries: entries, seed: 77, oracle: oracle)
        return oracle
    }

    /// The chain's widenings rewrite Entry (one layout per entity) and its new index is built by the steps, so
    /// that every kind of batched work reports its progress.
    static func options(_ recorder: ProgressRecorder? = nil) -> MigrationOptions {
        var options = MigrationOptions()
        options.batchSize = batch
        options.maximumLayoutsPerEntity = 1
        options.buildsIndexesInBackground = false
        return recorder?.options(options) ?? options
    }

    /// Checks a sequence of reports of the v1 → v5 migration of ``makeStore(_:)``.
    static func checkReports(_ reports: [MigrationProgress], sourceLocation: SourceLocation = #_sourceLocation) {
        let steps = ["v1→v2", "v2→v3", "v3→v4", "v4→v5"]
        #expect(!reports.isEmpty, sourceLocation: sourceLocation)
        for p in reports {
            #expect(p.stepCount == 4, sourceLocation: sourceLocation)
            #expect(steps.indices.contains(p.stepIndex), sourceLocation: sourceLocation)
            #expect("\(p.sourceVersion)→\(p.destinationVersion)" == steps[p.stepIndex], "\(p)", sourceLocation: sourceLocation)
            #expect((0...1).contains(p.fractionCompleted), sourceLocation: sourceLocation)
            #expect(p.completed <= max(p.total, p.completed == 0 ? 0 : p.total), "\(p)", sourceLocation: sourceLocation)
            #expect(!p.description.isEmpty, sourceLocation: sourceLocation)
        }
        // Steps in order, each completed once.
        let completed = reports.filter { $0.phase == .completed }.map { "\($0.sourceVersion)→\($0.destinationVersion)" }
        #expect(completed == steps, sourceLocation: sourceLocation)
        #expect(reports.map(\.stepIndex) == reports.map(\.stepIndex).sorted(), "steps interleave", sourceLocation: sourceLocation)
        // The rewrites of Entry (v2 → v3, v3 → v4, v4 → v5) report every batch, up to the total.
        for step in 1...3 {
            let rewrite = reports.filter { $0.stepIndex == step && $0.phase == .instances && $0.entity == "Entry" }
            #expect(rewrite.count >= entries / batch, "step \(steps[step]): \(rewrite.count) reports", sourceLocation: sourceLocation)
            #expect(rewrite.allSatisfy { $0.total == entries }, sourceLocation: sourceLocation)
            #expect(rewrite.map(\.completed) == rewrite.map(\.completed).sorted(), sourceLocation: sourceLocation)
            #expect(rewrite.last?.completed == entries, sourceLocation: sourceLocation)
        }
        // Index builds report per entity too: Entry.headline at v2, Tag.text (made unique) at v4.
        #expect(reports.contains { $0.stepIndex == 0 && $0.phase == .indexing && $0.entity == "Entry" && $0.completed == entries },
                sourceLocation: sourceLocation)
        #expect(reports.contains { $0.stepIndex == 2 && $0.phase == .indexing && $0.entity == "Tag" }, sourceLocation: sourceLocation)
        #expect(reports.contains { $0.phase == .switching }, sourceLocation: sourceLocation)
    }

    @Test func callbackReportsEveryBatchStepAndEntity() throws {
        let dir = try TemporaryDirectory("progress-callback")
        try Self.makeStore(dir.store)
        let recorder = ProgressRecorder()
        let store = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan(),
                                   configuration: StoreConfiguration(migration: Self.options(recorder)))
        store.close()
        Self.checkReports(recorder.all)
    }

    /// Batches end by bytes written and by time, not by a count of records: with the defaults a small store's
    /// rewrite is one batch; a small byte limit, or no time at all, cuts it into many — every batch reported,
    /// and the store the same at the end.
    @Test func batchesEndByBytesOrByTime() throws {
        func rewriteReports(_ configure: (inout MigrationOptions) -> Void) throws -> [MigrationProgress] {
            let dir = try TemporaryDirectory("progress-batches")
            try Self.makeStore(dir.store)
            let recorder = ProgressRecorder()
            var options = MigrationOptions()
            options.maximumLayoutsPerEntity = 1
            options.buildsIndexesInBackground = false
            configure(&options)
            let store = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan(),
                                       configuration: StoreConfiguration(migration: recorder.options(options)))
            defer { store.close() }
            #expect(try store.read { try $0.count("Entry") } == Self.entries)
            #expect(try store.verify().isClean)
            // The v2 → v3 rewrite of Entry: one report per batch.
            return recorder.all.filter { $0.stepIndex == 1 && $0.phase == .instances && $0.entity == "Entry" }
        }
        let defaults = try rewriteReports { _ in }
        #expect(defaults.count == 1, "\(defaults.count) batches")
        let byBytes = try rewriteReports { $0.batchByteLimit = 2 << 10 }
        #expect(byBytes.count >= 5, "\(byBytes.count) batches")
        #expect(byBytes.last?.completed == Self.entries)
        let byTime = try rewriteReports { $0.batchDuration = 0 }
        #expect(byTime.count == (Self.entries + BatchLimits.clockInterval - 1) / BatchLimits.clockInterval,
                "\(byTime.count) batches")
    }

    @Test func migratorStreamsProgressAndFinishes() async throws {
        let dir = try TemporaryDirectory("progress-migrator")
        try Self.makeStore(dir.store)
        let recorder = ProgressRecorder()
        let migrator = Migrator(url: dir.store, plan: try JournalChain.plan(),
                                configuration: StoreConfiguration(migration: Self.options(recorder)))
        let collector = Task { () -> [MigrationProgress] in
            var out: [MigrationProgress] = []
            for await p in migrator.progress { out.append(p) }
            return out
        }
        let steps = try await migrator.run()
        #expect(steps == 4)
        let streamed = await collector.value  // the stream finishes when run returns
        Self.checkReports(streamed)
        // The stream and the callback saw the same reports.
        #expect(streamed == recorder.all)
        let store = try Store.open(at: dir.store, schema: try JournalChain.v5())
        #expect(try await store.read { try $0.count("Entry") } == Self.entries)
        store.close()
    }

    @Test func stoppedMigrationResumes() async throws {
        let dir = try TemporaryDirectory("progress-stop")
        let oracle = try Self.makeStore(dir.store)
        // Ask the migrator to stop as soon as the first rewrite batch of the second step has committed.
        let current = Mutex<Migrator?>(nil)
        var options = Self.options()
        options.progress = { p in if p.phase == .instances && p.stepIndex == 1 { current.withLock { $0?.stop() } } }
        let stopping = Migrator(url: dir.store, plan: try JournalChain.plan(), configuration: StoreConfiguration(migration: options))
        current.withLock { $0 = stopping }
        do {
            _ = try await stopping.run()
            Issue.record("the migration did not stop")
        } catch let error as MigrationError where error.code == .stopped {
            #expect(error.sourceVersion == "v2" && error.destinationVersion == "v3")
            #expect(error.storeState == .migrating(source: "v2", destination: "v3"))
        }
        let migrator = Migrator(url: dir.store, plan: try JournalChain.plan(), configuration: StoreConfiguration(migration: Self.options()))
        // The store is still usable at the version it had reached (v2: every object as the first step left
        // it), with a migration recorded in progress …
        try JournalChain.applyStep(from: "v1", to: oracle)
        let info = try Store.openRecorded(at: dir.store)
        #expect(try info.info().migration != nil)
        #expect(info.schema.versionIdentifier == "v2")
        #expect(try oracle.mismatches(in: info) == [])
        info.close()
        // … and a later run finishes it: every object has the values the fill gave it, carried through each
        // step's changes.
        _ = try await migrator.run()
        for version in ["v2", "v3", "v4"] { try JournalChain.applyStep(from: version, to: oracle) }
        let store = try Store.open(at: dir.store, schema: try JournalChain.v5(), plan: try JournalChain.plan())
        defer { store.close() }
        #expect(try oracle.mismatches(in: store) == [])
        #expect(try store.info().history == JournalChain.versions)
        #expect(try store.verify().problems == [])
    }
}
