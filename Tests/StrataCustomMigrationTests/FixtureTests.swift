import Foundation
import Strata
import StrataTestKit
import StrataTutorials
import Testing

/// Every shipped version of every tutorial app, as a committed fixture store, opens with today's model and
/// plan — in one go, step by step, swept and rewritten — and holds what its generator wrote.
@Suite struct FixtureTests {
    /// Records the fixtures of versions that have none (`STRATA_RECORD_FIXTURES=1`), or records all of them
    /// again (`STRATA_RECORD_FIXTURES=all`), into the source tree; see Fixtures/README.md.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["STRATA_RECORD_FIXTURES"] != nil))
    func recordTutorialFixtures() throws {
        try TutorialFixtures.recordAll(into: TutorialFixtures.sourceDirectory,
                                       replacing: ProcessInfo.processInfo.environment["STRATA_RECORD_FIXTURES"] == "all")
    }

    @Test func everyPostsVersionOpensAtHead() throws {
        let report = try MigrationTestKit.checkFixtures(in: try TutorialFixtures.bundled().appendingPathComponent("posts"),
                                                        plan: PostsApp.plan) { fixture in
            let where_ = "posts \(fixture.version) \(fixture.way)"
            #expect(fixture.store.schema.versionIdentifier == "v4", "\(where_)")
            let contents = PostsApp.contents(count: TutorialFixtures.posts, seed: TutorialFixtures.postsSeed)
            try fixture.store.read { new throws in
                #expect(try new.count("Post") == contents.count, "\(where_)")
                #expect(try new.count("Section") == contents.count, "\(where_)")
                var posts: [UUID: DynamicObject] = [:]
                try new.objects("Post").forEach { if let id = $0["postID"].uuidValue { posts[id] = $0 } }
                for (i, input) in contents.enumerated() {
                    let post = try #require(posts[input.postID], "\(where_): post \(i) is missing")
                    #expect(post["hexColor"] == .string(input.colour), "\(where_): post \(i)")
                    #expect(post["date"] == .date(input.date), "\(where_): post \(i)")
                    #expect(post["softDelete"] == .bool(fixture.version == "v4" && TutorialFixtures.softDeleted(i)), "\(where_): post \(i)")
                    let sections = try new.relatedObjects(post, "sections")
                    #expect(sections.map { $0["body"] } == [.string(input.content)], "\(where_): post \(i)")
                    #expect(sections.map { $0["title"] } == [.string(String(input.content.prefix(4)) + "...")], "\(where_): post \(i)")
                    #expect(sections.map { $0["index"] } == [0], "\(where_): post \(i)")
                }
            }
            #expect(try fixture.store.verify().isClean, "\(where_)")
        }
        #expect(report.versions == ["v1", "v2", "v3", "v4"])
        #expect(report.checks == 4 * FixtureCheck.Way.allCases.count)
    }

    @Test func everyBooksVersionOpensAtHead() throws {
        let report = try MigrationTestKit.checkFixtures(in: try TutorialFixtures.bundled().appendingPathComponent("books"),
                                                        plan: BooksApp.plan) { fixture in
            #expect(fixture.store.schema.versionIdentifier == "v3")
            try BooksAppTests.expectV3(fixture.store, BooksApp.contents(count: TutorialFixtures.books, seed: TutorialFixtures.booksSeed))
        }
        #expect(report.versions == ["v1", "v2", "v3"])
    }

    @Test func everyNotesVersionOpensAtHead() throws {
        let report = try MigrationTestKit.checkFixtures(in: try TutorialFixtures.bundled().appendingPathComponent("notes"),
                                                        plan: NotesApp.plan) { fixture in
            let where_ = "notes \(fixture.version) \(fixture.way)"
            try fixture.store.read { new throws in
                #expect(try new.count("Note") == TutorialFixtures.notes, "\(where_)")
                #expect(try new.count("Category") == Set((0..<TutorialFixtures.notes).map { NotesApp.note($0).category }).count, "\(where_)")
                var notes: [String: DynamicObject] = [:]
                try new.objects("Note").forEach { if let title = $0["title"].stringValue { notes[title] = $0 } }
                for i in 0..<TutorialFixtures.notes {
                    let input = NotesApp.note(i)
                    let note = try #require(notes[input.title], "\(where_): \(input.title) is missing")
                    #expect(note["body"] == .string(input.body), "\(where_): \(input.title)")
                    #expect(note["pinned"] == .bool(fixture.version == "v1" ? false : input.pinned), "\(where_): \(input.title)")
                    #expect(try new.relatedObjects(note, "categories").map { $0["name"] } == [.string(input.category)], "\(where_): \(input.title)")
                }
            }
            #expect(try fixture.store.verify().isClean, "\(where_)")
        }
        #expect(report.versions == ["v1", "v2", "v3", "v4"])
    }

    /// Checking never writes the committed files: each fixture is migrated in a copy.
    @Test func checkingLeavesTheFixturesUntouched() throws {
        let posts = try TutorialFixtures.bundled().appendingPathComponent("posts")
        func snapshot() throws -> [String: Data] {
            var out: [String: Data] = [:]
            for version in try FileManager.default.contentsOfDirectory(atPath: posts.path) {
                let dir = posts.appendingPathComponent(version)
                for file in try FileManager.default.contentsOfDirectory(atPath: dir.path) {
                    out[version + "/" + file] = try Data(contentsOf: dir.appendingPathComponent(file))
                }
            }
            return out
        }
        let before = try snapshot()
        try MigrationTestKit.checkFixtures(in: posts, plan: PostsApp.plan) { _ in }
        #expect(try snapshot() == before)
    }

    /// A plan version without a fixture is reported, naming it, before anything is checked.
    @Test func aVersionWithoutAFixtureIsReported() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let posts = try TutorialFixtures.bundled().appendingPathComponent("posts")
        for version in ["v1", "v3", "v4"] {
            try FileManager.default.copyItem(at: posts.appendingPathComponent(version), to: kit.directory.appendingPathComponent(version))
        }
        var checked = 0
        #expect(throws: FixtureError.self) {
            try MigrationTestKit.checkFixtures(in: kit.directory, plan: PostsApp.plan) { _ in checked += 1 }
        }
        do { try MigrationTestKit.checkFixtures(in: kit.directory, plan: PostsApp.plan) { _ in } } catch let error as FixtureError {
            #expect(error.missingVersions == ["v2"])
        }
        #expect(checked == 0)
        let report = try MigrationTestKit.checkFixtures(in: kit.directory, plan: PostsApp.plan, allowingMissing: ["v2"]) { _ in }
        #expect(report.versions == ["v1", "v3", "v4"])
    }

    /// A fixture filed under the wrong version is reported, with the version its store records.
    @Test func aMislabelledFixtureIsReported() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let notes = try TutorialFixtures.bundled().appendingPathComponent("notes")
        for (from, to) in [("v1", "v1"), ("v3", "v2"), ("v3", "v3"), ("v4", "v4")] {
            try FileManager.default.copyItem(at: notes.appendingPathComponent(from), to: kit.directory.appendingPathComponent(to))
        }
        do {
            try MigrationTestKit.checkFixtures(in: kit.directory, plan: NotesApp.plan) { _ in }
            Issue.record("a mislabelled fixture was checked")
        } catch let error as FixtureError {
            #expect(error.mislabelled.map(\.directory) == ["v2"])
            #expect(error.mislabelled.map(\.recorded) == ["v3"])
        }
    }
}
