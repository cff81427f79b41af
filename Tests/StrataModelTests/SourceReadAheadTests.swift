import Foundation
@testable import Strata
import StrataModels
import StrataTestSupport
import Testing

/// A custom stage's source objects decoded ahead on a second thread (``MigrationOptions/decodesAhead``, on by
/// default) change nothing a user can see: the typed and the dynamic split (linked in the instance pass or in the
/// relationship pass) make, object for object, the store the same split makes with every object decoded by the
/// writer — across many chunks of the reading thread, batches of every size, a stop and a resume in the middle, an
/// object asked for out of turn, and a damaged record, which fails the migration with the same error and leaves the
/// store as it was.
@Suite struct SourceReadAheadTests {
    typealias Split = TypedSplitTests

    static func configuration(batch: Int, decodesAhead: Bool, mapSize: Int? = nil, stop: (@Sendable () -> Bool)? = nil) -> StoreConfiguration {
        var configuration = Split.configuration(batch: batch, encrypted: false, stop: stop)
        configuration.migration.decodesAhead = decodesAhead
        if let mapSize { configuration.initialMapSize = mapSize }
        return configuration
    }

    /// Makes the store at `url` from `posts`, migrates it with `mapping` under `configuration`, and returns its
    /// dump and what the split got wrong.
    static func split(_ url: URL, _ posts: [Split.V1.Post], _ mapping: EntityMapping,
                      _ configuration: StoreConfiguration) throws -> (dump: [String], mismatches: [String]) {
        try Split.make(url, posts, configuration)
        let store = try Store.open(at: url, schema: try Schema(Split.V2.self), plan: try Split.plan(mapping), configuration: configuration)
        defer { store.close() }
        #expect(try store.verify().problems.isEmpty)
        return (try StoreDump.lines(store), try Split.mismatches(store, posts))
    }

    static let mappings: [(name: String, mapping: EntityMapping)] = [
        ("typed", Split.typed), ("dynamic", Split.dynamic),
        // Objects decoded ahead in the relationship pass too (the dynamic pass checks it is handed the post it asks
        // about; a typed post handed over for another would leave the asked one unlinked).
        ("typed, linked in the relationship pass", Split.typedLinkedInRelationshipPass),
        ("dynamic, linked in the relationship pass", SplitPolicies.closureSplitLinkingInRelationshipPass),
    ]

    /// Which passes decode ahead — what the passes do and what the cost model counts: both of a dynamic policy's, a
    /// typed mapping's instance pass and its relationship pass only with a relationship closure (without one it
    /// links as inferred, from dynamic objects), a declared mapping's relationship pass and never its streaming copy.
    @Test func thePassesThatDecodeAhead() {
        let declared = EntityMapping.extract("Section", from: "Post", linkedBy: "post", values: ["body": .attribute("content")])
        for m in [Split.dynamic, SplitPolicies.closureSplitLinkingInRelationshipPass] {
            #expect(m.decodesSourceAhead(inRelationshipPass: false) && m.decodesSourceAhead(inRelationshipPass: true))
        }
        #expect(Split.typed.decodesSourceAhead(inRelationshipPass: false) && !Split.typed.decodesSourceAhead(inRelationshipPass: true))
        #expect(Split.typedLinkedInRelationshipPass.decodesSourceAhead(inRelationshipPass: true))
        #expect(!declared.decodesSourceAhead(inRelationshipPass: false) && declared.decodesSourceAhead(inRelationshipPass: true))
        // Under options: only with `decodesAhead` on, and only where there is a second core.
        var off = MigrationOptions()
        off.decodesAhead = false
        let twoCores = ProcessInfo.processInfo.activeProcessorCount > 1
        #expect(!Split.dynamic.decodesSourceAhead(inRelationshipPass: false, options: off))
        #expect(Split.dynamic.decodesSourceAhead(inRelationshipPass: false, options: MigrationOptions()) == twoCores)
        #expect(!Split.typed.decodesSourceAhead(inRelationshipPass: true, options: MigrationOptions()))
    }

    /// 3,000 posts: six chunks of the reading thread, in one batch, in batches of 700 (a batch ends inside a chunk),
    /// and in batches of 1.
    @Test(arguments: mappings.indices, [Int.max, 700, 1])
    func decodingAheadMakesTheSameStore(_ m: Int, batch: Int) throws {
        let posts = Split.posts(batch == 1 ? 1_200 : 3_000, seed: 31)
        let dir = try TemporaryDirectory("read-ahead")
        let (name, mapping) = Self.mappings[m]
        let alone = try Self.split(dir.path("alone"), posts, mapping, Self.configuration(batch: batch, decodesAhead: false))
        let ahead = try Self.split(dir.path("ahead"), posts, mapping, Self.configuration(batch: batch, decodesAhead: true))
        #expect(alone.mismatches == [], "\(name)")
        #expect(ahead.mismatches == [], "\(name)")
        #expect(ahead.dump == alone.dump, "\(name)")
    }

    /// Stopped after a few batches and run again, the reading thread starts after the first object of the resumed
    /// pass, and the store is the one an uninterrupted run without it makes.
    @Test(arguments: mappings.indices)
    func aStoppedPassResumesWithItsReaderFromWhereItStopped(_ m: Int) throws {
        let posts = Split.posts(2_500, seed: 32)
        let dir = try TemporaryDirectory("read-ahead-resume")
        let (name, mapping) = Self.mappings[m]
        let alone = try Self.split(dir.path("alone"), posts, mapping, Self.configuration(batch: 400, decodesAhead: false))
        let url = dir.path("ahead")
        try Split.make(url, posts, Self.configuration(batch: 400, decodesAhead: true))
        let calls = TypedSplitTests.Counter()
        #expect(throws: MigrationError.self) {
            _ = try Store.open(at: url, schema: try Schema(Split.V2.self), plan: try Split.plan(mapping),
                               configuration: Self.configuration(batch: 400, decodesAhead: true, stop: { calls.increment() > 3 }))
        }
        let store = try Store.open(at: url, schema: try Schema(Split.V2.self), plan: try Split.plan(mapping),
                                   configuration: Self.configuration(batch: 400, decodesAhead: true))
        defer { store.close() }
        #expect(try Split.mismatches(store, posts) == [], "\(name)")
        #expect(try StoreDump.lines(store) == alone.dump, "\(name)")
    }

    /// The calls of a mapping's closure: on which thread, for which source object.
    final class CallLog: @unchecked Sendable {
        private let lock = NSLock()
        private var calls: [(thread: ObjectIdentifier, source: UInt64)] = []
        func record(_ source: UInt64) {
            let thread = ObjectIdentifier(Thread.current)
            lock.lock(); defer { lock.unlock() }
            calls.append((thread, source))
        }
        var entries: [(thread: ObjectIdentifier, source: UInt64)] { lock.lock(); defer { lock.unlock() }; return calls }
    }

    /// What ``MigrationOptions/decodesAhead`` promises a closure: only where the decoding runs changes. The instance
    /// closures of a typed and of a dynamic mapping still run on the migrating thread (the one that opened the store),
    /// once per source object, in key order — across six chunks of the reading thread and batches that end inside
    /// them. (Running them on the reading thread, as round 23's experiment did, would break the first promise; a
    /// writer falling back to a closure the reader had begun would break the second.)
    @Test(arguments: [false, true], [Int.max, 700])
    func closuresRunOnTheMigratingThreadOncePerObjectInKeyOrder(typed: Bool, batch: Int) throws {
        let posts = Split.posts(3_000, seed: 36)
        let dir = try TemporaryDirectory("read-ahead-closures")
        let log = CallLog()
        let mapping: EntityMapping = typed
            ? .each(Split.V1.Post.self, creating: [Split.V2.Section.self]) { post, context in
                log.record(post.objectID?.rawValue ?? 0)
                try context.insert(Split.V2.Post(title: post.title, views: post.views), keepingSourceID: true)
            }
            : .transform("Post", destinations: ["Section"], instances: { post, ctx in
                log.record(post.id.rawValue)
                try ctx.insert(try ctx.inferredObject(for: post))
            })
        let configuration = Self.configuration(batch: batch, decodesAhead: true)
        try Split.make(dir.store, posts, configuration)
        let ids = try {
            let store = try Store.open(at: dir.store, schema: try Schema(Split.V1.self), configuration: configuration)
            defer { store.close() }
            return try store.read { ctx in try ctx.objects(Split.V1.Post.self).fetch().map { $0.objectID!.rawValue } }.sorted()
        }()
        let migrating = ObjectIdentifier(Thread.current)
        let store = try Store.open(at: dir.store, schema: try Schema(Split.V2.self), plan: try Split.plan(mapping), configuration: configuration)
        store.close()
        let calls = log.entries
        let elsewhere = calls.filter { $0.thread != migrating }.count
        #expect(elsewhere == 0, "\(elsewhere) of \(calls.count) calls ran on another thread than the migration's")
        let sources = calls.map(\.source)
        let firstOutOfTurn = zip(sources, ids).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(sources == ids, """
            the closure ran \(sources.count) times for \(ids.count) source objects (\(Set(sources).count) distinct); \
            the first call out of turn: \(firstOutOfTurn.map { "call \($0.offset) was for object \($0.element.0), not \($0.element.1)" } ?? "none")
            """)
    }

    /// The reader's contract, which the writer relies on: it hands over each object by identifier, in key order
    /// across its chunks, or answers nil (the writer then decodes the object itself) — never another object.
    /// Asked for an object it has handed over already (a batch run again after the map grew: the reliability
    /// suite's `MDB_MAP_FULL` cases run that for real) it answers nil and reads again after it; objects the writer
    /// went past while it was behind are skipped; a record it cannot decode, and everything after it, is the
    /// writer's to decode.
    @Test func theReaderAnswersByIdentifierOrNotAtAll() throws {
        let posts = Split.posts(3_000, seed: 35)
        let dir = try TemporaryDirectory("read-ahead-contract")
        let configuration = Split.configuration(batch: .max, encrypted: false)
        try Split.make(dir.store, posts, configuration)
        let store = try Store.open(at: dir.store, schema: try Schema(Split.V1.self), configuration: configuration)
        defer { store.close() }
        let ids = try store.read { ctx in try ctx.objects(Split.V1.Post.self).fetch().map { $0.objectID!.rawValue } }
        try #require(ids.count == 3_000 && ids == ids.sorted())
        let binding = try store.model.entity("Post")
        let undecodable = ids[2_500]
        let reader = SourceReadAhead<String>(environment: store.environment, model: store.model, dbi: binding.dbi) { context, id, bytes, slot in
            if id == undecodable { throw StoreError.closed }
            slot.initialize(to: try context.decodeModel(Split.V1.Post.self, bytes, id: id, binding: binding).title)
        }
        defer { reader.stop() }
        var wrong: [String] = []
        /// Asks for posts `range` in turn: each answer must be nil or that post. Returns how many were handed over.
        @discardableResult func ask(_ range: ClosedRange<Int>) -> Int {
            var handedOver = 0
            for i in range {
                guard let title = reader.take(ids[i])?.pointee else { continue }
                handedOver += 1
                if title != posts[i].title { wrong.append("object \(ids[i]) (post \(i))") }
            }
            return handedOver
        }
        func wait(until condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(60)
            while !condition() && Date() < deadline { usleep(1_000) }
        }
        #expect(reader.take(ids[0]) == nil, "the first object asked for is the writer's to decode")
        wait { reader.state.hasChunkReady }
        #expect(ask(1...400) == 400, "the first chunk (posts 1–512), read before they were asked for")
        #expect(reader.take(ids[100]) == nil, "an object asked for again is the writer's to decode")
        // The thread starts again after post 100; the writer goes on without waiting for it.
        ask(101...300)
        wait { reader.state.hasChunkReady }
        #expect(ask(301...612) == 312, "its first chunk (posts 101–612), past what the writer decoded itself")
        wait { !reader.state.isReading }
        #expect(ask(613...2_499) == 1_887, "every chunk it read before the record it could not decode")
        #expect(reader.take(ids[2_500]) == nil, "a record the reader cannot decode is the writer's to decode")
        #expect(reader.take(ids[2_501]) == nil, "after a record it cannot decode, the reader stops")
        #expect(wrong.isEmpty, "\(wrong.count) objects handed over wrong, the first: \(wrong.prefix(5))")
    }

    /// Every pass stops its reading thread when it ends: after a migration whose passes have more chunks than the
    /// thread reads ahead (one not stopped would wait for the writer forever), the store's environment has no
    /// reading thread left.
    @Test(arguments: mappings.indices)
    func noReadingThreadOutlivesItsPass(_ m: Int) throws {
        let posts = Split.posts(12_000, seed: 37)
        let dir = try TemporaryDirectory("read-ahead-threads")
        let (name, mapping) = Self.mappings[m]
        let configuration = Self.configuration(batch: .max, decodesAhead: true)
        try Split.make(dir.store, posts, configuration)
        let store = try Store.open(at: dir.store, schema: try Schema(Split.V2.self), plan: try Split.plan(mapping), configuration: configuration)
        defer { store.close() }
        #expect(try Split.mismatches(store, posts) == [], "\(name)")
        // A stopped thread ends on its own, just after its pass; one that was not stopped waits forever.
        let deadline = Date().addingTimeInterval(10)
        while store.environment.readAheadThreads.load(ordering: .relaxed) > 0 && Date() < deadline { usleep(1_000) }
        #expect(store.environment.readAheadThreads.load(ordering: .relaxed) == 0, "\(name): a reading thread outlived its pass")
    }

    /// With every reader slot of the process held (by the app's own read transactions), the reading thread does not
    /// wait for one: it ends at once and the writer decodes every object itself. Waiting could hang the migration —
    /// a restart waits for the thread, and the app's readers may be waiting for the migration.
    @Test func withEveryReaderSlotHeldTheReaderStepsAside() throws {
        let posts = Split.posts(1_000, seed: 36)
        let dir = try TemporaryDirectory("read-ahead-slots")
        var configuration = Split.configuration(batch: .max, encrypted: false)
        configuration.maximumReaders = 16
        try Split.make(dir.store, posts, configuration)
        let store = try Store.open(at: dir.store, schema: try Schema(Split.V1.self), configuration: configuration)
        defer { store.close() }
        let ids = try store.read { ctx in try ctx.objects(Split.V1.Post.self).fetch().map { $0.objectID!.rawValue } }
        // Every slot held: the store's reads beyond them wait (16 readers, 8 kept for other handles).
        let slots = 8
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holders = DispatchGroup()
        for _ in 0..<slots {
            DispatchQueue.global().async(group: holders) {
                _ = try? store.read { _ in
                    entered.signal()
                    release.wait()
                }
            }
        }
        for _ in 0..<slots { entered.wait() }
        let binding = try store.model.entity("Post")
        let reader = SourceReadAhead<String>(environment: store.environment, model: store.model, dbi: binding.dbi) { context, id, bytes, slot in
            slot.initialize(to: try context.decodeModel(Split.V1.Post.self, bytes, id: id, binding: binding).title)
        }
        #expect(reader.take(ids[0]) == nil, "the first object asked for is the writer's to decode")
        let deadline = Date().addingTimeInterval(10)
        while reader.state.isReading && Date() < deadline { usleep(1_000) }
        let stillWaiting = reader.state.isReading
        #expect(!stillWaiting, "the reading thread still waits for a reader slot after 10 s")
        let handedOver = ids.dropFirst().filter { reader.take($0) != nil }.count
        #expect(handedOver == 0, "with no reader slot free, nothing is read ahead")
        for _ in 0..<slots { release.signal() }
        holders.wait()
        reader.stop()
    }

    /// A source record damaged on disk, 2,000 objects into the pass (chunks after the reading thread started): the
    /// migration fails with the error the writer's own decoding gives — naming the object — and the store still
    /// opens at its old version with every other post as it was.
    @Test(arguments: mappings.indices)
    func aDamagedRecordFailsTheMigrationAsWithoutReadingAhead(_ m: Int) throws {
        let marker = "damaged-record-marker-5d1e"
        var posts = Split.posts(3_000, seed: 34)
        posts[2_000].content = "before \(marker) after"
        let dir = try TemporaryDirectory("read-ahead-damage")
        let (name, mapping) = Self.mappings[m]
        var messages: [String] = []
        for decodesAhead in [false, true] {
            let url = dir.path(decodesAhead ? "ahead" : "alone")
            let configuration = Self.configuration(batch: 500, decodesAhead: decodesAhead)
            try Split.make(url, posts, configuration)
            #expect(try StoreFileBytes.damage(marker, in: url, count: 3) == 1)
            do {
                let store = try Store.open(at: url, schema: try Schema(Split.V2.self), plan: try Split.plan(mapping), configuration: configuration)
                store.close()
                Issue.record("\(name): the migration over a damaged record succeeded")
            } catch {
                messages.append(String(describing: error))
            }
            let old = try Store.open(at: url, schema: try Schema(Split.V1.self), configuration: configuration)
            defer { old.close() }
            #expect(try old.read { try $0.count(Split.V1.Post.self) } == 3_000, "\(name)")
            let problems = try old.verify().problems
            #expect(problems.count == 1 && problems.first?.objectID == 2_001, "\(name): \(problems)")
        }
        #expect(messages.count == 2 && messages[0] == messages[1], "\(name): \(messages)")
        #expect(messages.first?.contains("2001") == true, "\(name): the error names the object: \(messages)")
    }
}
