import Crypto
import Foundation
import StrataModels
import StrataTestKit
import StrataTestSupport
import Testing

/// The posts split as a typed stage (`.each(Old.self, creating: …)`: the old type in, the new types out) gives
/// exactly what the same split as a dynamic policy gives, object for object and identifier for identifier, on
/// seeded posts — nil contents, unicode, empty stores, batches of one, encrypted stores, an indexed section body —
/// and both resume after a stop between batches to the same store.
@Suite struct TypedSplitTests {
    enum V1: SchemaVersion {
        static let versionIdentifier = "t1"
        static let models: [any EntityModel.Type] = [Post.self]
        @Entity struct Post {
            var title: String
            var content: String?
            var views: Int32
        }
    }

    enum V2: SchemaVersion {
        static let versionIdentifier = "t2"
        static let models: [any EntityModel.Type] = [Post.self, Section.self]
        @Entity struct Post {
            var title: String
            var views: Int32
            @Related(inverse: \Section.post, deleteRule: .cascade) var sections: [ObjectID] = []
        }
        @Entity struct Section {
            var title: String
            @Field(.indexed) var body: String
            var index: Int
            var weight: Double = 1.5
            @Related(to: Post.self, inverse: "sections") var post: ObjectID?
        }
    }

    /// The split as a typed stage.
    static let typed = EntityMapping.each(V1.Post.self, creating: [V2.Section.self]) { post, context in
        let kept = try context.insert(V2.Post(title: post.title, views: post.views), keepingSourceID: true)
        guard let content = post.content else { return }
        let section = try context.insert(V2.Section(title: String(content.prefix(4)) + "...", body: content, index: 7))
        try context.link(section, \V2.Section.post, to: kept)
    }

    /// The typed split with each post linked to its section in the relationship pass, which checks that the post's
    /// content is the body of the section found by its identifier. A typed post carries its own identifier, so this
    /// cannot tell a post handed over for another one (that one is whole and consistent); the asked post would be
    /// left unlinked, which ``mismatches(_:_:)`` reports.
    static let typedLinkedInRelationshipPass = EntityMapping.each(V1.Post.self, creating: [V2.Section.self], instances: { post, context in
        try context.insert(V2.Post(title: post.title, views: post.views), keepingSourceID: true)
        guard let content = post.content else { return }
        try context.insert(V2.Section(title: String(content.prefix(4)) + "...", body: content, index: 7))
    }, relationships: { post, context in
        guard let id = post.objectID else { throw SplitPolicies.HandedOverWrongPost(post: ObjectID(rawValue: 0)) }
        let sections = try context.destinations(for: id, as: V2.Section.self)
        let bodies = try sections.map { try context.base.destinationObject($0, of: "Section")?["body"].stringValue }
        guard bodies == (post.content.map { [$0] } ?? []) else { throw SplitPolicies.HandedOverWrongPost(post: id) }
        for section in sections { try context.link(section, \V2.Section.post, to: id) }
    })

    /// The same split as a dynamic policy (by name, on `DynamicObject`s).
    static let dynamic = SplitPolicies.closureSplit

    static let texts = ["", "a", "abcd", "abcde", "héllo wörld", "e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}", "👨‍👩‍👧‍👦 family",
                        "ab\r\ncd", "日本語のテキストです", "x\u{0}y", "🇫🇷🇩🇪🇮🇹🇪🇸!", "plain ascii text that is longer"]

    /// `count` posts from `seed`, a fifth without content.
    static func posts(_ count: Int, seed: UInt64) -> [V1.Post] {
        var rng = SeededGenerator(seed: seed)
        return (0..<count).map { i in
            let roll = rng.next() % 10
            let content: String? = roll < 2 ? nil : texts[Int(rng.next() % UInt64(texts.count))] + (roll < 5 ? "" : " \(rng.next() % 50)")
            return V1.Post(title: "post \(i) " + texts[Int(rng.next() % UInt64(texts.count))], content: content,
                           views: Int32(truncatingIfNeeded: rng.next()))
        }
    }

    static func configuration(batch: Int, encrypted: Bool, stop: (@Sendable () -> Bool)? = nil) -> StoreConfiguration {
        var options = MigrationOptions()
        options.batchSize = batch
        options.shouldStop = stop
        var configuration = StoreConfiguration(migration: options)
        if encrypted { configuration.encryption = StoreEncryption(key: SymmetricKey(data: Data(repeating: 9, count: 32))) }
        return configuration
    }

    static func plan(_ mapping: EntityMapping) throws -> MigrationPlan {
        try MigrationPlan(versions: [V1.self, V2.self], stages: [.custom(from: V1.self, to: V2.self, entityMappings: [mapping])])
    }

    /// Writes `posts` into a new store at `url`, at version t1.
    static func make(_ url: URL, _ posts: [V1.Post], _ configuration: StoreConfiguration) throws {
        let store = try Store.open(at: url, schema: try Schema(V1.self), configuration: configuration)
        defer { store.close() }
        try store.write { ctx in for p in posts { try ctx.insert(p) } }
    }

    /// What the split must make of `posts`, read through the new types: every post kept, one section per post with
    /// content, linked both ways.
    static func mismatches(_ store: Store, _ posts: [V1.Post]) throws -> [String] {
        try store.read { ctx in
            var out: [String] = []
            let stored = try ctx.objects(V2.Post.self).fetch().sorted { $0.objectID!.rawValue < $1.objectID!.rawValue }
            if stored.count != posts.count { out.append("\(stored.count) posts, expected \(posts.count)") }
            for (post, input) in zip(stored, posts) {
                if post.title != input.title || post.views != input.views { out.append("post \(post.objectID!): \(post)") }
                guard let content = input.content else {
                    if !post.sections.isEmpty { out.append("post \(post.objectID!) without content has sections") }
                    continue
                }
                guard post.sections.count == 1, let s = try ctx.fetch(V2.Section.self, id: post.sections[0]) else {
                    out.append("post \(post.objectID!): \(post.sections.count) sections"); continue
                }
                if s.body != content || s.title != String(content.prefix(4)) + "..." || s.index != 7 || s.weight != 1.5 || s.post != post.objectID {
                    out.append("section of post \(post.objectID!): \(s)")
                }
            }
            let sections = try ctx.count(V2.Section.self)
            if sections != posts.filter({ $0.content != nil }).count { out.append("\(sections) sections") }
            return out
        }
    }

    static let cases: [(count: Int, seed: UInt64, batch: Int)] = [(0, 1, 10), (1, 2, 1), (97, 3, 3), (400, 4, 1), (400, 5, 1000)]

    @Test(arguments: cases.indices, [false, true])
    func theTypedSplitEqualsTheDynamicSplit(_ c: Int, encrypted: Bool) throws {
        let (count, seed, batch) = Self.cases[c]
        let posts = Self.posts(count, seed: seed)
        let dir = try TemporaryDirectory("typed-split")
        let configuration = Self.configuration(batch: batch, encrypted: encrypted)
        var dumps: [[String]] = []
        for (name, mapping) in [("dynamic", Self.dynamic), ("typed", Self.typed)] {
            let url = dir.path(name)
            try Self.make(url, posts, configuration)
            let store = try Store.open(at: url, schema: try Schema(V2.self), plan: try Self.plan(mapping), configuration: configuration)
            defer { store.close() }
            #expect(try Self.mismatches(store, posts) == [], "\(name)")
            #expect(try store.verify().problems.isEmpty, "\(name)")
            dumps.append(try StoreDump.lines(store))
            // The index on the new entity answers for every body.
            try store.read { ctx in
                for p in posts.prefix(12) {
                    guard let content = p.content else { continue }
                    let found = try ctx.objects(V2.Section.self).filter(\.body == content).count()
                    #expect(found == posts.filter { $0.content == content }.count, "\(name): \(content)")
                }
            }
        }
        #expect(dumps[0] == dumps[1])
        // The records the typed stage wrote are sealed like every record of an encrypted store.
        let needle = Array("plain ascii text that is longer".utf8)
        if posts.contains(where: { $0.content?.hasPrefix("plain ascii") == true }) {
            let found = StoreFileBytes.offsets(of: needle, in: try StoreFileBytes.dataFile(of: dir.path("typed")))
            #expect(found.isEmpty == encrypted, "\(found.count) plaintext copies")
        }
    }

    /// Stopped after a few committed batches, each form resumes where it stopped and ends with the store an
    /// uninterrupted run makes.
    @Test(arguments: [false, true])
    func aStoppedTypedSplitResumesToTheSameStore(encrypted: Bool) throws {
        let posts = Self.posts(150, seed: 21)
        let dir = try TemporaryDirectory("typed-split-resume")
        var dumps: [[String]] = []
        for (name, mapping) in [("dynamic", Self.dynamic), ("typed", Self.typed)] {
            let url = dir.path(name)
            try Self.make(url, posts, Self.configuration(batch: 8, encrypted: encrypted))
            let calls = Counter()
            let stopping = Self.configuration(batch: 8, encrypted: encrypted, stop: { calls.increment() > 4 })
            #expect(throws: MigrationError.self) {
                _ = try Store.open(at: url, schema: try Schema(V2.self), plan: try Self.plan(mapping), configuration: stopping)
            }
            let store = try Store.open(at: url, schema: try Schema(V2.self), plan: try Self.plan(mapping),
                                       configuration: Self.configuration(batch: 8, encrypted: encrypted))
            defer { store.close() }
            #expect(try Self.mismatches(store, posts) == [], "\(name)")
            #expect(try store.verify().problems.isEmpty, "\(name)")
            dumps.append(try StoreDump.lines(store))
        }
        #expect(dumps[0] == dumps[1])
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func increment() -> Int { lock.lock(); defer { lock.unlock() }; n += 1; return n }
    }
}
