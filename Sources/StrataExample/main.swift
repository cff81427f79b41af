// The posts app's whole migration story in one run: a store written by an old version of the app is
// opened by the version shipping model v4, which migrates it at open — through v2 (a rename) and v3 (a
// custom stage splitting content into sections) — with progress, then shows the result.
import Foundation
import StrataModels
import StrataTutorials

struct Options {
    var from = "v1"
    var posts = 10_000
    var store: URL? = nil
    var keep = false

    static let usage = """
    usage: strata-example [--from v1|v2|v3] [--posts N] [--store PATH] [--keep]
           strata-example replica [--posts N] [--store DIR] [--keep]   (a replica that follows the change history)

      --from v1|v2|v3   the version of the app that created the store (default v1)
      --posts N         how many posts it holds (default 10000)
      --store PATH      where to put the store (default: a temporary directory, removed afterwards)
      --keep            keep the store afterwards (inspect it with `swift run strata info PATH`)
    """

    static func parse(_ arguments: [String]) -> Options? {
        var o = Options()
        var i = 0
        while i < arguments.count {
            let a = arguments[i]
            func value() -> String? { i += 1; return i < arguments.count ? arguments[i] : nil }
            switch a {
            case "--from": guard let v = value(), ["v1", "v2", "v3"].contains(v) else { return nil }; o.from = v
            case "--posts": guard let v = value(), let n = Int(v), n > 0 else { return nil }; o.posts = n
            case "--store": guard let v = value() else { return nil }; o.store = URL(fileURLWithPath: v); o.keep = true
            case "--keep": o.keep = true
            case "-h", "--help": print(usage); exit(0)
            default: return nil
            }
            i += 1
        }
        return o
    }
}

func seconds(_ start: DispatchTime) -> String {
    String(format: "%.2f s", Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9)
}

func run(_ options: Options) throws {
    let url = options.store ?? FileManager.default.temporaryDirectory.appendingPathComponent("strata-example-\(UUID().uuidString)")
    defer { if !options.keep { try? FileManager.default.removeItem(at: url) } }
    if FileManager.default.fileExists(atPath: url.path) {
        throw ExampleError("\(url.path) already exists; choose another --store path")
    }
    guard let oldSchema = PostsApp.plan.schema(options.from) else { throw ExampleError("unknown version \(options.from)") }

    // 1. The old app creates its store and fills it.
    print("1. The app at \(options.from) creates a store at \(url.path) with \(options.posts) posts.")
    var start = DispatchTime.now()
    do {
        let store = try Store.open(at: url, schema: oldSchema)
        defer { store.close() }
        try store.write { try PostsApp.fill($0, version: options.from, count: options.posts) }
        print("   done in \(seconds(start)); the store records model \(try store.info().modelVersion).")
    }

    // 2. The app is updated to v4. Before opening, it can ask what the migration will do.
    print("\n2. The app now ships v4. What opening the store will do:\n")
    let explanation = try Store.explainMigration(at: url, schema: PostsApp.v4, plan: PostsApp.plan)
    print(explanation.description.split(separator: "\n", omittingEmptySubsequences: false).map { "   " + $0 }.joined(separator: "\n"))

    // 3. Opening migrates, in batches, reporting progress.
    print("\n3. Opening the store with v4 migrates it:")
    var options2 = MigrationOptions()
    let lastLine = ProgressPrinter()
    options2.progress = { lastLine.show($0) }
    start = DispatchTime.now()
    let store = try Store.open(at: url, schema: PostsApp.v4, plan: PostsApp.plan, configuration: StoreConfiguration(migration: options2))
    defer { store.close() }
    print("   migrated in \(seconds(start)).")

    // 4. The result.
    print("\n4. The store, as v4 sees it:")
    try store.read { context in
        print("   \(try context.count(PostsApp.V4.Post.self)) posts, \(try context.count(PostsApp.V4.Section.self)) sections")
        // The macro models of v4: a key-path query, and each post's first section by its identifier.
        for post in try context.objects(PostsApp.V4.Post.self).filter(\.softDelete == false).sorted(by: \.date).limit(3).fetch() {
            let section = try post.sections.first.flatMap { try context.fetch(PostsApp.V4.Section.self, id: $0) }
            print("   \(post.objectID.map { "\($0)" } ?? "-") \(post.hexColor) softDelete=\(post.softDelete) · section \(section?.title ?? "-"): \(section?.body ?? "-")")
        }
    }
    let info = try store.info()
    print("   model \(info.modelVersion), history \(info.history.joined(separator: " → ")), file \(ByteCount(info.fileSize))")
    let report = try store.verify()
    print("   verify: \(report.objectsChecked) objects, \(report.linksChecked) links, \(report.indexEntriesChecked) index entries, \(report.isClean ? "no problems" : "\(report.problems.count) problems")")
    if options.keep { print("\nThe store is kept at \(url.path).") }
}

final class ProgressPrinter: @unchecked Sendable {
    private let lock = NSLock()
    private var last = ""
    func show(_ p: MigrationProgress) {
        lock.lock(); defer { lock.unlock() }
        let line = "   \(p)"
        // One line per phase and entity, updated at the end of the phase.
        let key = "\(p.stepIndex)\(p.phase)\(p.entity ?? "")"
        if key != last || p.completed == p.total {
            if key == last { return }
            print(line)
            last = key
        }
    }
}

struct ExampleError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

// `strata-example replica`: a replica kept in sync through the change history (ReplicaDemo.swift).
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "replica" {
    do {
        try ReplicaDemo.run(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-example: \(error)\n".utf8))
        exit(1)
    }
}
if arguments.first == "replica-follow" {
    do {
        try await ReplicaFollower.run(Array(arguments.dropFirst()))
    } catch {
        FileHandle.standardError.write(Data("strata-example: \(error)\n".utf8))
        exit(1)
    }
}

guard let options = Options.parse(arguments) else {
    FileHandle.standardError.write(Data((Options.usage + "\n").utf8))
    exit(2)
}
do {
    try run(options)
} catch {
    FileHandle.standardError.write(Data("strata-example: \(error)\n".utf8))
    exit(1)
}
