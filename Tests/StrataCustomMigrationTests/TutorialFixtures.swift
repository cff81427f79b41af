import Foundation
import Strata
import StrataTestKit
import StrataTutorials

/// The tutorial apps' fixtures: how each version's store was recorded, and what every one of them must hold
/// once migrated to the app's current version, computed from the tutorials' generators (never from the store).
enum TutorialFixtures {
    static let posts = 24
    static let books = 30
    static let notes = 28
    static let postsSeed: UInt64 = 7
    static let booksSeed: UInt64 = 11

    /// Where the committed fixtures are in the source tree (for recording).
    static var sourceDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    }

    /// Where the fixtures are at test time (the target's resources).
    static func bundled() throws -> URL {
        guard let url = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "Fixtures (the test target's resources)"])
        }
        return url
    }

    /// `softDelete` as the v4 fixture writes it (earlier versions have none: false after the migration).
    static func softDeleted(_ i: Int) -> Bool { i % 4 == 0 }

    /// Records every version of every tutorial app into `directory` (`posts/v1` … `notes/v4`); with
    /// `replacing` false, only the versions that have no fixture yet (the others stay as they shipped).
    static func recordAll(into directory: URL, replacing: Bool) throws {
        func recordFixture(for version: any SchemaVersion.Type, at app: URL, fill: (WriteContext) throws -> Void) throws {
            try recordFixture(for: try Schema(version), at: app, fill: fill)
        }
        func recordFixture(for version: Schema, at app: URL, fill: (WriteContext) throws -> Void) throws {
            guard replacing || !FileManager.default.fileExists(atPath: app.appendingPathComponent(version.versionIdentifier).path) else { return }
            try MigrationTestKit.recordFixture(for: version, at: app, fill: fill)
        }
        let typed: [any SchemaVersion.Type] = [PostsApp.V1.self, PostsApp.V2.self, PostsApp.V3.self]
        for version in typed {
            try recordFixture(for: version, at: directory.appendingPathComponent("posts")) {
                try PostsApp.fill($0, version: version.versionIdentifier, count: posts, seed: postsSeed)
            }
        }
        try recordFixture(for: PostsApp.V4.self, at: directory.appendingPathComponent("posts")) { context in
            for (i, p) in PostsApp.contents(count: posts, seed: postsSeed).enumerated() {
                let post = try context.insert(PostsApp.V4.Post(postID: p.postID, hexColor: p.colour, date: p.date, softDelete: softDeleted(i)))
                try context.insert(PostsApp.V4.Section(title: String(p.content.prefix(4)) + "...", body: p.content, index: 0, post: post))
            }
        }
        for schema in BooksApp.versions {
            try recordFixture(for: schema, at: directory.appendingPathComponent("books")) {
                try BooksApp.fill($0, version: schema.versionIdentifier, count: books, seed: booksSeed)
            }
        }
        for schema in NotesApp.versions {
            try recordFixture(for: schema, at: directory.appendingPathComponent("notes")) {
                try NotesApp.fill($0, version: schema.versionIdentifier, count: notes)
            }
        }
    }
}
