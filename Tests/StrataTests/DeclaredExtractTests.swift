import Foundation
import Strata
import StrataTestSupport
import Testing

/// A declared extract (attribute → new related entity) gives exactly what the equivalent closure policy gives,
/// object for object and identifier for identifier, on seeded random posts — nil contents, unicode, empty stores,
/// many tiny batches, encrypted stores, an index on the new entity — and what the test's inputs say it should.
@Suite struct DeclaredExtractTests {
    static let cases: [(count: Int, seed: UInt64, batch: Int)] = [(0, 1, 10), (1, 2, 1), (97, 3, 3), (400, 4, 7), (400, 5, 1000)]

    @Test(arguments: cases.indices, [false, true])
    func theDeclaredSplitEqualsTheClosureSplit(_ c: Int, encrypted: Bool) throws {
        let (count, seed, batch) = Self.cases[c]
        let posts = DeclaredFixtures.posts(count, seed: seed)
        let dir = try TemporaryDirectory("declared-extract")
        let configuration = DeclaredFixtures.configuration(batchSize: batch, encrypted: encrypted)
        var dumps: [[String]] = []
        for (name, mapping) in [("closure", DeclaredFixtures.closureSplit), ("declared", DeclaredFixtures.declaredSplit)] {
            let url = dir.path(name)
            try DeclaredFixtures.makePosts(url, posts, configuration: configuration)
            let store = try Store.open(at: url, schema: try DeclaredFixtures.postsV2(), plan: try DeclaredFixtures.splitPlan(mapping),
                                       configuration: configuration)
            defer { store.close() }
            #expect(try DeclaredFixtures.splitMismatches(store, posts) == [], "\(name)")
            dumps.append(try StoreDump.lines(store))
            // The index on the new entity answers for every body.
            try store.read { ctx in
                for p in posts.prefix(20) {
                    guard let content = p.content else { continue }
                    let found = try ctx.objects("Section").where("body", equals: .string(content)).ids()
                    #expect(found.count == posts.filter { $0.content == content }.count, "\(content)")
                }
            }
        }
        #expect(dumps[0] == dumps[1])
        #expect(dumps[1].count == count + posts.filter { $0.content != nil }.count)
        // The sections the copy wrote are sealed like every record of an encrypted store: their text is not in the file.
        let needle = Array("plain ascii text that is longer".utf8)
        if posts.contains(where: { $0.content?.hasPrefix("plain ascii") == true }) {
            let found = StoreFileBytes.offsets(of: needle, in: try StoreFileBytes.dataFile(of: dir.path("declared")))
            #expect(found.isEmpty == encrypted, "\(found.count) plaintext copies")
        }
    }

    @Test func aUniqueConstraintOnTheNewEntityIsEnforced() throws {
        let dir = try TemporaryDirectory("declared-unique")
        // Two posts with the same content: their sections' unique bodies clash, and the stage rolls back.
        let posts = [DeclaredFixtures.PostInput(title: "a", content: "same", views: 1),
                     DeclaredFixtures.PostInput(title: "b", content: "same", views: 2)]
        try DeclaredFixtures.makePosts(dir.store, posts)
        let before = StoreFileBytes.snapshot(dir.store)
        #expect(throws: MigrationError.self) {
            _ = try Store.open(at: dir.store, schema: try DeclaredFixtures.postsV2(uniqueBody: true),
                               plan: try DeclaredFixtures.splitPlan(DeclaredFixtures.declaredSplit, uniqueBody: true))
        }
        // Rolled back: the store is at its source version with its posts.
        #expect(Set(StoreFileBytes.snapshot(dir.store).keys).isSuperset(of: before.keys))
        let store = try Store.open(at: dir.store, schema: try DeclaredFixtures.postsV1())
        defer { store.close() }
        #expect(try store.read { try $0.count("Post") } == 2)
        // Distinct contents migrate.
        let other = dir.path("distinct")
        let distinct = DeclaredFixtures.posts(120, seed: 9, distinctContents: true)
        try DeclaredFixtures.makePosts(other, distinct)
        let migrated = try Store.open(at: other, schema: try DeclaredFixtures.postsV2(uniqueBody: true),
                                      plan: try DeclaredFixtures.splitPlan(DeclaredFixtures.declaredSplit, uniqueBody: true),
                                      configuration: DeclaredFixtures.configuration(batchSize: 16))
        defer { migrated.close() }
        #expect(try DeclaredFixtures.splitMismatches(migrated, distinct) == [])
    }

    @Test func aNilCopiedIntoARequiredAttributeFailsTheStageNamingTheObject() throws {
        let dir = try TemporaryDirectory("declared-required")
        let posts = [DeclaredFixtures.PostInput(title: "a", content: "x", views: 1),
                     DeclaredFixtures.PostInput(title: "b", content: nil, views: 2),
                     DeclaredFixtures.PostInput(title: "c", content: "z", views: 3)]
        try DeclaredFixtures.makePosts(dir.store, posts)
        // Without `skippingNil`, the post without content would make a section without its required body.
        let mapping = EntityMapping.extract("Section", from: "Post", linkedBy: "post",
                                            values: ["body": .attribute("content"), "title": .constant("t"), "index": .constant(1)])
        do {
            _ = try Store.open(at: dir.store, schema: try DeclaredFixtures.postsV2(), plan: try DeclaredFixtures.splitPlan(mapping))
            Issue.record("a section without its required body was accepted")
        } catch let error as MigrationError {
            #expect(error.code == .stageFailed)
            #expect(error.storeError?.code == .missingRequiredValue && error.storeError?.attribute == "body", "\(error)")
            #expect(error.entity == "Post" && error.objectID == ObjectID(rawValue: 2), "names the post: \(error)")
        }
        let store = try Store.open(at: dir.store, schema: try DeclaredFixtures.postsV1())
        defer { store.close() }
        #expect(try store.read { try $0.objects("Post").fetch().map { $0["content"] } } == ["x", .null, "z"])
    }

    @Test func progressAndTheEstimateCoverTheDeclaredPass() throws {
        let dir = try TemporaryDirectory("declared-progress")
        let posts = DeclaredFixtures.posts(300, seed: 11)
        try DeclaredFixtures.makePosts(dir.store, posts)
        let plan = try DeclaredFixtures.splitPlan(DeclaredFixtures.declaredSplit)
        let explanation = try Store.explainMigration(at: dir.store, schema: try DeclaredFixtures.postsV2(), plan: plan)
        #expect(explanation.steps.first?.isCustom == true)
        #expect(explanation.estimatedSeconds > 0 && explanation.bytesToWrite > 300 * 20)
        let recorder = ProgressRecorder()
        var configuration = DeclaredFixtures.configuration(batchSize: 50)
        configuration.migration = recorder.options(configuration.migration)
        let store = try Store.open(at: dir.store, schema: try DeclaredFixtures.postsV2(), plan: plan, configuration: configuration)
        defer { store.close() }
        let instances = recorder.all.filter { $0.phase == .instances && $0.entity == "Post" }
        #expect(instances.map(\.completed) == [50, 100, 150, 200, 250, 300])
        #expect(instances.allSatisfy { $0.total == 300 })
    }

    @Test func theHistoryListsTheCreatedSections() throws {
        let dir = try TemporaryDirectory("declared-history")
        let posts = DeclaredFixtures.posts(40, seed: 12)
        let configuration = DeclaredFixtures.configuration(batchSize: 8, history: true)
        try DeclaredFixtures.makePosts(dir.store, posts, configuration: configuration)
        let before = try Store.open(at: dir.store, schema: try DeclaredFixtures.postsV1(), configuration: configuration)
        let token = try before.currentHistoryToken()
        before.close()
        let store = try Store.open(at: dir.store, schema: try DeclaredFixtures.postsV2(),
                                   plan: try DeclaredFixtures.splitPlan(DeclaredFixtures.declaredSplit, history: true),
                                   configuration: configuration)
        defer { store.close() }
        let migration = try #require(try store.fetchHistory(after: token).transactions.first)
        #expect(migration.migration?.destinationVersion == "p2")
        let sections = try store.read { try $0.objects("Section").fetch().map(\.id) }
        #expect(Set(migration.changes(of: "Section")?.inserted ?? []) == Set(sections))
        #expect(sections.count == posts.filter { $0.content != nil }.count)
    }
}
