import Crypto
import Foundation
import Strata
import StrataTestSupport

/// The models, seeded data and store dumps the declared-mapping tests share: posts split into sections (the
/// benchmark's shape, with a nullable content and an indexed section body) and books whose author names become
/// authors.
enum DeclaredFixtures {
    static func postsV1() throws -> Schema {
        try Schema("p1") {
            Entity("Post") {
                Attribute("title", .string)
                Attribute("content", .string).optional()
                Attribute("views", .int32)
            }
        }
    }

    static func postsV2(uniqueBody: Bool = false) throws -> Schema {
        try Schema("p2") {
            Entity("Post") {
                Attribute("title", .string)
                Attribute("views", .int32)
                Relationship("sections", to: "Section", inverse: "post", toMany: true, deleteRule: .cascade)
            }
            Entity("Section") {
                Attribute("title", .string)
                if uniqueBody { Attribute("body", .string).unique() } else { Attribute("body", .string).indexed() }
                Attribute("index", .int64)
                Attribute("weight", .double).defaultValue(.double(1.5))
                Relationship("post", to: "Post", inverse: "sections")
            }
        }
    }

    /// The declared split: `content` → `Section.body`, a computed title, a constant index; no section without content.
    static let declaredSplit = EntityMapping.extract(
        "Section", from: "Post", linkedBy: "post",
        values: ["body": .attribute("content"), "title": .prefix(of: "content", length: 4, appending: "..."), "index": .constant(7)],
        skippingNil: "content")

    /// The same split as a closure policy.
    static let closureSplit = SplitPolicies.closureSplit

    static func splitPlan(_ mapping: EntityMapping, uniqueBody: Bool = false, history: Bool = false) throws -> MigrationPlan {
        let stage = MigrationStage.custom(from: "p1", to: "p2", entityMappings: [mapping])
        return try MigrationPlan(schemas: [try postsV1(), try postsV2(uniqueBody: uniqueBody)],
                                 stages: [history ? stage.recordingChangesInHistory() : stage])
    }

    struct PostInput: Equatable {
        var title: String
        var content: String?
        var views: Int32
    }

    /// Texts that exercise the prefix: empty, short, ASCII, combining marks, emoji families, CR LF, other scripts.
    static let texts = ["", "a", "abcd", "abcde", "héllo wörld", "e\u{301}e\u{301}e\u{301}e\u{301}e\u{301}", "👨‍👩‍👧‍👦 family",
                        "ab\r\ncd", "abc\r\nd", "abcd\u{301}x", "abc\u{1F44D}\u{1F3FD}", "日本語のテキストです", "x\u{0}y", "🇫🇷🇩🇪🇮🇹🇪🇸!", "plain ascii text that is longer"]

    /// `count` posts from `seed`: a fifth without content, repeated contents (for unique and dedupe checks).
    static func posts(_ count: Int, seed: UInt64, distinctContents: Bool = false) -> [PostInput] {
        var rng = SplitMix(seed: seed)
        return (0..<count).map { i in
            let roll = rng.next() % 10
            var content: String? = roll < 2 ? nil : texts[Int(rng.next() % UInt64(texts.count))] + (roll < 5 ? "" : " \(rng.next() % 50)")
            if distinctContents, content != nil { content = "\(i) " + content! }
            return PostInput(title: "post \(i) " + texts[Int(rng.next() % UInt64(texts.count))], content: content,
                             views: Int32(truncatingIfNeeded: rng.next()))
        }
    }

    static func makePosts(_ url: URL, _ posts: [PostInput], configuration: StoreConfiguration = StoreConfiguration()) throws {
        let store = try Store.open(at: url, schema: try postsV1(), configuration: configuration)
        defer { store.close() }
        try store.write { ctx in
            for p in posts {
                try ctx.insert("Post", ["title": .string(p.title), "content": p.content.map(Value.string) ?? .null, "views": .int32(p.views)])
            }
        }
    }

    static func configuration(batchSize: Int, encrypted: Bool = false, history: Bool = false,
                              stop: (@Sendable () -> Bool)? = nil) -> StoreConfiguration {
        var options = MigrationOptions()
        options.batchSize = batchSize
        options.shouldStop = stop
        var configuration = StoreConfiguration(migration: options)
        if encrypted { configuration.encryption = StoreEncryption(key: SymmetricKey(data: Data(repeating: 7, count: 32))) }
        if history { configuration.history = .enabled(.unlimited) }
        return configuration
    }

    /// Checks a split store against the posts it was made from (the oracle: the test's inputs): every post kept with
    /// its values, one section per post with content holding its body, title and constants, linked both ways, and
    /// no other section.
    static func splitMismatches(_ store: Store, _ posts: [PostInput]) throws -> [String] {
        try store.read { ctx in
            var out: [String] = []
            let stored = try ctx.objects("Post").fetch().sorted { $0.id.rawValue < $1.id.rawValue }
            if stored.count != posts.count { out.append("\(stored.count) posts, expected \(posts.count)") }
            var sections = 0
            for (post, input) in zip(stored, posts) {
                if post["title"] != .string(input.title) || post["views"] != .int32(input.views) { out.append("post \(post.id): \(post)") }
                let related = try ctx.relatedObjects(post, "sections")
                guard let content = input.content else {
                    if !related.isEmpty { out.append("post \(post.id) without content has sections") }
                    continue
                }
                sections += 1
                guard related.count == 1, let s = related.first else { out.append("post \(post.id): \(related.count) sections"); continue }
                if s["body"] != .string(content) || s["title"] != .string(String(content.prefix(4)) + "...")
                    || s["index"] != .int64(7) || s["weight"] != .double(1.5) {
                    out.append("section of post \(post.id): \(s)")
                }
                if try ctx.relatedObjects(s, "post").map(\.id) != [post.id] { out.append("section \(s.id) is not linked back to \(post.id)") }
            }
            let total = try ctx.count("Section")
            if total != sections { out.append("\(total) sections, expected \(sections)") }
            return out
        }
    }
}
