import Foundation
import StrataModels
import StrataTutorials

/// `strata-example replica`: the posts app's store (the primary) and a replica kept in sync with it by another
/// process, purely through the primary's change history — through a migration of the primary to v4 while the
/// replica's app is still at v3, then the replica's app updated to v4.
enum ReplicaDemo {
    static let usage = """
    usage: strata-example replica [--posts N] [--store DIR] [--keep]

      --posts N     how many posts the primary starts with (default 200)
      --store DIR   where to put the two stores (default: a temporary directory, removed afterwards)
      --keep        keep the stores afterwards
    """

    static func run(_ arguments: [String]) throws {
        var posts = 200
        var directory: URL? = nil
        var keep = false
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "--posts": i += 1; guard i < arguments.count, let n = Int(arguments[i]), n > 0 else { throw ExampleError(usage) }; posts = n
            case "--store": i += 1; guard i < arguments.count else { throw ExampleError(usage) }; directory = URL(fileURLWithPath: arguments[i]); keep = true
            case "--keep": keep = true
            default: throw ExampleError(usage)
            }
            i += 1
        }
        let dir = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("strata-replica-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { if !keep { try? FileManager.default.removeItem(at: dir) } }
        let primaryURL = dir.appendingPathComponent("primary.store")
        let replicaURL = dir.appendingPathComponent("replica.store")
        if FileManager.default.fileExists(atPath: primaryURL.path) || FileManager.default.fileExists(atPath: replicaURL.path) {
            throw ExampleError("\(dir.path) already holds the stores; choose another --store")
        }

        print("1. The posts app (v3) creates the primary with \(posts) posts; history is on.")
        var configuration = StoreConfiguration()
        configuration.history = .enabled(.default)
        configuration.historyAuthor = "app"
        var primary = try Store.open(at: primaryURL, schema: PostsApp.v3, configuration: configuration)
        try primary.write { try PostsApp.fill($0, version: "v3", count: posts) }

        print("2. The replica's app (v3) starts in another process and copies the primary.")
        var follower = try Follower(primary: primaryURL, replica: replicaURL, app: "v3")
        try follower.waitUntilCaughtUp(with: try primary.currentHistoryToken())
        print("   caught up: \(follower.lastLine)")

        print("3. The primary changes: colours, a deleted post (its sections go with it), new posts, a moved section.")
        try primary.write { ctx in
            let all = try ctx.objects(PostsApp.V3.Post.self).sorted(by: \.date).fetch()
            for var post in all.prefix(10) {
                post.hexColor = "#00FF00"
                try ctx.update(post)
            }
            if let gone = all.last?.objectID { try ctx.delete(gone, of: "Post") }
            let post = try ctx.insert(PostsApp.V3.Post(postID: UUID(), hexColor: "#123456", date: .now))
            try ctx.insert(PostsApp.V3.Section(title: "New...", body: "A new post", index: 0, post: post))
            if let first = all.first?.objectID, let section = try ctx.related(first, of: "Post", "sections").first {
                try ctx.link(section, of: "Section", "post", to: post)
            }
        }
        try follower.waitUntilCaughtUp(with: try primary.currentHistoryToken())
        print("   caught up: \(follower.lastLine)")

        print("4. The posts app is updated to v4: the primary migrates (softDelete added) and marks some posts deleted.")
        primary.close()
        primary = try Store.open(at: primaryURL, schema: PostsApp.v4, plan: PostsApp.plan, configuration: configuration)
        try primary.write { ctx in
            for var post in try ctx.objects(PostsApp.V4.Post.self).sorted(by: \.date).limit(5).fetch() {
                post.softDelete = true
                try ctx.update(post)
            }
            let post = try ctx.insert(PostsApp.V4.Post(postID: UUID(), hexColor: "#654321", date: .now, softDelete: true))
            try ctx.insert(PostsApp.V4.Section(title: "v4...", body: "Written by v4", index: 0, post: post))
        }
        try follower.waitUntilCaughtUp(with: try primary.currentHistoryToken())
        print("   the replica's app, still v3, followed the migration as far as its model goes: \(follower.lastLine)")
        follower.stop()

        print("5. The replica's app is updated to v4: its store migrates, and it replays what v3 could not apply.")
        follower = try Follower(primary: primaryURL, replica: replicaURL, app: "v4")
        try follower.waitUntilCaughtUp(with: try primary.currentHistoryToken())
        print("   caught up: \(follower.lastLine)")
        follower.stop()
        primary.close()

        let differences = try HistoryReplica.differences(primary: primaryURL, replica: replicaURL, schema: PostsApp.v4)
        let counts = try countObjects(primaryURL)
        if differences.isEmpty {
            print("6. The replica equals the primary: \(counts) — every object, every value, every link (IDs mapped).")
        } else {
            print("6. The replica differs from the primary:\n" + differences.prefix(20).map { "   " + $0 }.joined(separator: "\n"))
            throw ExampleError("\(differences.count) differences")
        }
        if keep { print("\nThe stores are kept in \(dir.path).") }
    }

    static func countObjects(_ url: URL) throws -> String {
        let store = try Store.openRecorded(at: url, configuration: { var c = StoreConfiguration(); c.readOnly = true; return c }())
        defer { store.close() }
        return try store.read { "\(try $0.count("Post")) posts, \(try $0.count("Section")) sections" }
    }
}

/// The replica's app, as a child process (`strata-example replica-follow`): follows the primary, printing a
/// line after each synchronization; ends when its standard input closes.
struct Follower {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    private(set) var lastLine = ""
    private var pending = Data()

    init(primary: URL, replica: URL, app: String) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.resolvingSymlinksInPath()
        if let path = Bundle.main.executablePath { process.executableURL = URL(fileURLWithPath: path) }
        process.arguments = ["replica-follow", "--primary", primary.path, "--replica", replica.path, "--app", app]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// Reads the follower's lines until it reports `token` as synchronized.
    mutating func waitUntilCaughtUp(with token: HistoryToken) throws {
        while true {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { throw ExampleError("the replica's process ended: \(lastLine)") }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: 0x0A) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                lastLine = line
                if line.hasPrefix("ERROR") { throw ExampleError("the replica failed: \(line)") }
                if line.hasSuffix(token.description) { return }
            }
        }
    }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

/// The child side of `Follower`.
enum ReplicaFollower {
    /// Writes a line to standard output at once (the parent waits for it).
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func run(_ arguments: [String]) async throws {
        var options: [String: String] = [:]
        var i = 0
        while i + 1 < arguments.count {
            options[arguments[i]] = arguments[i + 1]
            i += 2
        }
        guard let primary = options["--primary"], let replica = options["--replica"], let app = options["--app"],
              let index = PostsApp.versions.firstIndex(where: { $0.versionIdentifier == app }) else {
            throw ExampleError("usage: strata-example replica-follow --primary PATH --replica PATH --app v3|v4")
        }
        // The replica's app ships the versions from v3 on (its store was created at v3).
        let versions = Array(PostsApp.versions[2...index])
        let follower = try HistoryReplica(primary: URL(fileURLWithPath: primary), replica: URL(fileURLWithPath: replica), appVersions: versions)
        // Ends when the parent closes standard input.
        Thread.detachNewThread {
            while !FileHandle.standardInput.availableData.isEmpty {}
            exit(0)
        }
        while true {
            do {
                let applied = try follower.synchronize()
                let pending = try follower.awaitsNewerApp ? " (transactions of a newer model to replay once updated)" : ""
                say("replica \(app): applied \(applied) transactions\(pending); at \(try follower.token?.description ?? "-")")
                try await follower.waitForPrimaryCommits()
            } catch {
                say("ERROR \(error)")
                exit(1)
            }
        }
    }
}
