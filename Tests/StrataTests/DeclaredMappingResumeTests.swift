import Foundation
import Strata
import StrataTestSupport
import Testing

/// A declared split stopped after any batch leaves the store at its source version, and the next open resumes it:
/// the result is the store an uninterrupted migration makes, identifier for identifier, and what the inputs say.
@Suite struct DeclaredMappingResumeTests {
    @Test(arguments: [1, 2, 5, 13, 27])
    func aStoppedSplitResumesToTheUninterruptedResult(stopAfter: Int) throws {
        let posts = DeclaredFixtures.posts(250, seed: 21)
        let dir = try TemporaryDirectory("declared-resume")
        let plan = try DeclaredFixtures.splitPlan(DeclaredFixtures.declaredSplit)
        let v2 = try DeclaredFixtures.postsV2()
        // The uninterrupted run.
        try DeclaredFixtures.makePosts(dir.path("whole"), posts)
        let whole = try Store.open(at: dir.path("whole"), schema: v2, plan: plan, configuration: DeclaredFixtures.configuration(batchSize: 9))
        let expected = try StoreDump.lines(whole)
        whole.close()
        // Stopped after `stopAfter` batches (the step's first commits included), then resumed.
        try DeclaredFixtures.makePosts(dir.store, posts)
        let batches = Counter()
        do {
            _ = try Store.open(at: dir.store, schema: v2, plan: plan,
                               configuration: DeclaredFixtures.configuration(batchSize: 9) { batches.increment() > stopAfter })
            Issue.record("the migration did not stop")
        } catch let error as MigrationError {
            #expect(error.code == .stopped)
        }
        // Until it resumes, the store reads at its source version, whole.
        let old = try Store.open(at: dir.store, schema: try DeclaredFixtures.postsV1(),
                                 configuration: { var c = StoreConfiguration(); c.readOnly = true; return c }())
        #expect(try old.read { try $0.count("Post") } == posts.count)
        old.close()
        let resumed = try Store.open(at: dir.store, schema: v2, plan: plan, configuration: DeclaredFixtures.configuration(batchSize: 9))
        defer { resumed.close() }
        #expect(try DeclaredFixtures.splitMismatches(resumed, posts) == [])
        #expect(try StoreDump.lines(resumed) == expected)
        #expect(try resumed.verify().problems.isEmpty)
    }
}
