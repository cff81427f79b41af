import Foundation
import Strata
import StrataTestKit
import StrataTutorials
import Testing

/// The replica recipe (`HistoryReplica`, what `strata-example replica` runs across two processes), in one process:
/// a replica kept equal to the posts app's store through its change history alone — a full copy, then changes,
/// then a migration of the primary while the replica's app is still at v3, then the replica's app at v4.
@Suite struct HistoryReplicaTests {
    static var historyOn: StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.history = .enabled(.default)
        return configuration
    }

    @Test func aReplicaFollowsThePrimaryThroughItsMigrationAndItsOwnUpdate() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let primaryURL = kit.directory.appendingPathComponent("primary")
        let replicaURL = kit.directory.appendingPathComponent("replica")
        var primary = try Store.open(at: primaryURL, schema: PostsApp.v3, configuration: Self.historyOn)
        try primary.write { try PostsApp.fill($0, version: "v3", count: 50) }

        var replica = try HistoryReplica(primary: primaryURL, replica: replicaURL, appVersions: [PostsApp.v3])
        try replica.synchronize()
        #expect(try replica.token == (try primary.currentHistoryToken()))
        #expect(try HistoryReplica.differences(primary: primaryURL, replica: replicaURL, schema: PostsApp.v3).isEmpty)

        // Updates, a cascade, new objects, a link moved — in several transactions; the replica is behind.
        let moved = try primary.write { ctx -> ObjectID in
            let posts = try ctx.objects(PostsApp.V3.Post.self).sorted(by: \.date).fetch()
            for var post in posts.prefix(5) {
                post.hexColor = "#ABCDEF"
                try ctx.update(post)
            }
            try ctx.delete(try #require(posts.last?.objectID), of: "Post")
            return try #require(posts.first?.objectID)
        }
        _ = moved
        try primary.write { ctx in
            let post = try ctx.insert(PostsApp.V3.Post(postID: UUID(), hexColor: "#111111", date: .now))
            try ctx.insert(PostsApp.V3.Section(title: "n...", body: "new", index: 1, post: post))
            let first = try #require(try ctx.objects(PostsApp.V3.Post.self).sorted(by: \.date).first()?.objectID)
            let section = try #require(try ctx.related(first, of: "Post", "sections").first)
            try ctx.link(section, of: "Section", "post", to: post)
        }
        #expect(try replica.synchronize() == 2)
        #expect(try HistoryReplica.differences(primary: primaryURL, replica: replicaURL, schema: PostsApp.v3).isEmpty)
        // Applying again changes nothing.
        #expect(try replica.synchronize() == 0)

        // The primary migrates to v4 and uses softDelete; the replica's app is still at v3.
        primary.close()
        primary = try Store.open(at: primaryURL, schema: PostsApp.v4, plan: PostsApp.plan)
        try primary.write { ctx in
            for var post in try ctx.objects(PostsApp.V4.Post.self).sorted(by: \.date).limit(3).fetch() {
                post.softDelete = true
                try ctx.update(post)
            }
            let post = try ctx.insert(PostsApp.V4.Post(postID: UUID(), hexColor: "#222222", date: .now, softDelete: true))
            try ctx.insert(PostsApp.V4.Section(title: "v4...", body: "v4", index: 0, post: post))
        }
        #expect(try replica.synchronize() == 2, "the migration and a commit")
        #expect(try replica.awaitsNewerApp)
        // As far as v3 goes, the replica equals the primary.
        #expect(try HistoryReplica.differences(primary: primaryURL, replica: replicaURL, schema: PostsApp.v3).isEmpty)
        replica.close()

        // The replica's app is updated: its store migrates to v4 and it replays what v3 could not apply.
        replica = try HistoryReplica(primary: primaryURL, replica: replicaURL, appVersions: [PostsApp.v3, PostsApp.v4])
        defer { replica.close() }
        try replica.synchronize()
        #expect(try !replica.awaitsNewerApp)
        #expect(try replica.token == (try primary.currentHistoryToken()))
        let differences = try HistoryReplica.differences(primary: primaryURL, replica: replicaURL, schema: PostsApp.v4)
        #expect(differences.isEmpty, "\(differences.prefix(10))")
        let softDeleted = try primary.read { try $0.objects(PostsApp.V4.Post.self).filter(\.softDelete == true).count() }
        #expect(softDeleted == 4)
        primary.close()
    }

    @Test func anExpiredTokenMakesTheReplicaCopyAgain() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let primaryURL = kit.directory.appendingPathComponent("primary")
        let replicaURL = kit.directory.appendingPathComponent("replica")
        let primary = try Store.open(at: primaryURL, schema: PostsApp.v3, configuration: Self.historyOn)
        defer { primary.close() }
        try primary.write { try PostsApp.fill($0, version: "v3", count: 10) }
        let replica = try HistoryReplica(primary: primaryURL, replica: replicaURL, appVersions: [PostsApp.v3])
        defer { replica.close() }
        try replica.synchronize()
        try primary.write { try PostsApp.fill($0, version: "v3", count: 5, seed: 9) }
        try primary.write { ctx in try ctx.delete(try #require(try ctx.objects("Post").first()).id, of: "Post") }
        // Everything the replica has not applied is deleted from the history.
        try primary.deleteHistory(before: try primary.currentHistoryToken())
        try replica.synchronize()
        #expect(try replica.token == (try primary.currentHistoryToken()))
        #expect(try HistoryReplica.differences(primary: primaryURL, replica: replicaURL, schema: PostsApp.v3).isEmpty)
    }
}
