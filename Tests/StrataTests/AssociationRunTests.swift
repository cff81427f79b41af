import Foundation
import Synchronization
import Testing
import StrataTestSupport
@testable import Strata

/// `destinations(for:)` answers from associations kept as runs (consecutive posts each making one section with
/// consecutive identifiers) and from single entries (a second section from one post), in the instance pass
/// (runs still open in the batch, and stored by earlier batches) and the relationship pass, across batches
/// and a stopped and resumed migration. The oracle is the test's own inputs: post `n` makes `sectionCount(n)`
/// sections titled `"n.0"`, `"n.1"`, ….
@Suite struct AssociationRunTests {
    static func v1() throws -> Schema {
        try Schema("v1") { Entity("Post") { Attribute("n", .int64); Attribute("content", .string) } }
    }

    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Post") {
                Attribute("n", .int64)
                Attribute("content", .string)
                Relationship("sections", to: "Section", inverse: "post", toMany: true, deleteRule: .cascade)
            }
            Entity("Section") {
                Attribute("title", .string)
                Relationship("post", to: "Post", inverse: "sections")
            }
        }
    }

    /// Most posts make one section (runs), every fifth two (a run broken by a single entry), every seventh none.
    static func sectionCount(_ n: Int) -> Int { n % 7 == 3 ? 0 : (n % 5 == 0 ? 2 : 1) }

    /// What the stage's closures saw that differs from the oracle.
    final class Recorder: Sendable {
        let posts = Mutex<[Int: ObjectID]>([:])
        let mismatches = Mutex<[String]>([])
        func note(_ s: String) { mismatches.withLock { $0.append(s) } }
    }

    /// The titles of the sections `ids` names, as the destination store holds them.
    static func titles(_ ids: [ObjectID], _ ctx: MigrationContext) throws -> [String] {
        try ids.map { try ctx.destinationObject($0, of: "Section")?["title"].stringValue ?? "missing \($0)" }.sorted()
    }

    static func expectedTitles(_ n: Int) -> [String] { (0..<sectionCount(n)).map { "\(n).\($0)" } }

    static func stage(_ recorder: Recorder) -> MigrationStage {
        MigrationStage.custom(from: "v1", to: "v2", entityMappings: [
            .transform("Post", destinations: ["Section"], instances: { post, ctx in
                let n = Int(post["n"].int64Value ?? -1)
                try ctx.insertInferred(for: post)
                for j in 0..<sectionCount(n) { try ctx.insert("Section", ["title": .string("\(n).\(j)")]) }
                recorder.posts.withLock { $0[n] = post.id }
                // Earlier posts: the one before (usually in this batch's open run) and one batches back (stored).
                for earlier in [n - 1, n - 40] {
                    guard let id = recorder.posts.withLock({ $0[earlier] }) else { continue }
                    let found = try titles(try ctx.destinations(for: id, entity: "Section"), ctx)
                    if found != expectedTitles(earlier) { recorder.note("instance pass at \(n): post \(earlier) made \(found)") }
                }
            }, relationships: { post, ctx in
                let n = Int(post["n"].int64Value ?? -1)
                let sections = try ctx.destinations(for: post.id, entity: "Section")
                if try titles(sections, ctx) != expectedTitles(n) { recorder.note("relationship pass: post \(n) made \(try titles(sections, ctx))") }
                // Without an entity: the post that kept the source's identifier first, then its sections.
                let all = try ctx.destinations(for: post.id)
                if all != [post.id] + sections { recorder.note("post \(n): every destination \(all), expected \([post.id] + sections)") }
                for s in sections { try ctx.link(post.id, of: "Post", "sections", to: s) }
            }),
        ])
    }

    static let postCount = 300

    static func makeStore(_ url: URL) throws {
        let store = try Store.open(at: url, schema: try v1())
        defer { store.close() }
        try store.write { ctx in
            for n in 0..<postCount { try ctx.insert("Post", ["n": .int64(Int64(n)), "content": .string("post \(n)")]) }
        }
    }

    /// Every post's sections, read back through the links the relationship pass made from `destinations(for:)`.
    static func expectSections(_ store: Store) throws {
        try store.read { ctx in
            var count = 0
            for post in try ctx.objects("Post").fetch() {
                let n = Int(post["n"].int64Value ?? -1)
                let titles = try ctx.relatedObjects(post, "sections").map { $0["title"].stringValue ?? "" }.sorted()
                #expect(titles == expectedTitles(n), "post \(n)")
                count += 1
            }
            #expect(count == postCount)
            #expect(try ctx.count("Section") == (0..<postCount).reduce(0) { $0 + sectionCount($1) })
        }
    }

    @Test(arguments: [1, 7, 1000])
    func destinationsFromRunsAndSingleEntries(batchSize: Int) throws {
        let dir = try TemporaryDirectory("association-runs")
        try Self.makeStore(dir.store)
        let recorder = Recorder()
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2()], stages: [Self.stage(recorder)])
        let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: plan, configuration: DeclaredFixtures.configuration(batchSize: batchSize))
        defer { store.close() }
        #expect(recorder.mismatches.withLock { $0.prefix(4) } == [])
        try Self.expectSections(store)
    }

    @Test func aStoppedStageResumesWithTheRunsItCommitted() throws {
        let dir = try TemporaryDirectory("association-runs-resumed")
        try Self.makeStore(dir.store)
        let recorder = Recorder()
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2()], stages: [Self.stage(recorder)])
        let batches = Counter()
        #expect(throws: MigrationError.self) {
            _ = try Store.open(at: dir.store, schema: try Self.v2(), plan: plan,
                               configuration: DeclaredFixtures.configuration(batchSize: 11, stop: { batches.increment() > 9 }))
        }
        let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: plan, configuration: DeclaredFixtures.configuration(batchSize: 11))
        defer { store.close() }
        #expect(recorder.mismatches.withLock { $0.prefix(4) } == [])
        try Self.expectSections(store)
    }

    @Test func aRunCoversConsecutiveSourcesOnly() throws {
        var run = AssociationRun(tag: 3, source: 10, destination: 500, count: 1)
        #expect(run.isContinued(by: 11, 501))
        #expect(!run.isContinued(by: 11, 502))
        #expect(!run.isContinued(by: 12, 501))
        #expect(!run.isContinued(by: 10, 501))
        run.count = 4
        #expect(run.destination(for: 9) == nil)
        #expect(run.destination(for: 10) == 500)
        #expect(run.destination(for: 13) == 503)
        #expect(run.destination(for: 14) == nil)
        let key = AssociationRun.key(tag: run.tag, source: run.source)
        let decoded = try key.withUnsafeBytes { k in try run.value.withUnsafeBytes { v in try AssociationRun.decode(key: k, value: v) } }
        #expect(decoded == run)
        // A damaged run (no objects, or one running past the last identifier) is a typed failure, not a trap.
        for (destination, count) in [(UInt64(500), UInt32(0)), (UInt64.max - 2, UInt32(4))] {
            let damaged = AssociationRun(tag: 3, source: 10, destination: destination, count: count)
            #expect(throws: DecodeFailure.self) {
                _ = try key.withUnsafeBytes { k in try damaged.value.withUnsafeBytes { v in try AssociationRun.decode(key: k, value: v) } }
            }
        }
    }
}
