import Foundation
import StrataTortureKit
import Synchronization
import Testing

/// A temporary directory for one test, removed at the end.
final class Workspace: @unchecked Sendable {
    let root: URL

    init(_ name: String) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("strata-reliability-\(name)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    func url(_ relative: String) -> URL { root.appendingPathComponent(relative) }
    func path(_ relative: String) -> String { url(relative).path }

    /// A fresh copy of a pristine store (its data file only, as after a clean close).
    func copy(_ store: URL, to relative: String) throws -> URL {
        let destination = url(relative)
        try? FileManager.default.removeItem(at: destination)
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: store.appendingPathComponent("data.mdb"), to: destination.appendingPathComponent("data.mdb"))
        return destination
    }
}

/// Pristine v1 stores, made once per process by a child (`strata-torture create`) and copied by tests.
enum PristineStores {
    private static let made = Mutex<[String: URL]>([:])
    private static let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-reliability-pristine-\(getpid())")

    private static let creating = NSLock()

    static func v1(count: Int, batch: Int = 100, seed: UInt64 = Tier.seed) throws -> URL {
        creating.lock()
        defer { creating.unlock() }
        let key = "\(count)-\(seed)"
        if let url = made.withLock({ $0[key] }) { return url }
        let url = directory.appendingPathComponent(key)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let result = try Child.run(["create", url.path, "--count", "\(count)", "--batch", "\(max(batch, 1000))", "--seed", "\(seed)", "--no-check"], timeout: 600)
        guard result.exitCode == 0 else { throw TortureError("creating a pristine store failed: \(result)") }
        try? FileManager.default.removeItem(at: url.appendingPathComponent("lock.mdb"))
        if made.withLock({ $0.isEmpty }) {
            atexit { try? FileManager.default.removeItem(at: FileManager.default.temporaryDirectory.appendingPathComponent("strata-reliability-pristine-\(getpid())")) }
        }
        made.withLock { $0[key] = url }
        return url
    }
}

/// Runs `body` for each element with at most `width` running at once (children are processes: two at a
/// time keep both cores busy while each waits on its fsyncs).
func concurrentForEach<T: Sendable>(_ items: [T], width: Int = 2, _ body: @escaping @Sendable (T) throws -> Void) throws {
    let errors = Mutex<[any Error]>([])
    let next = Atomic<Int>(0)
    let group = DispatchGroup()
    for _ in 0..<max(1, min(width, items.count)) {
        group.enter()
        Thread.detachNewThread {
            defer { group.leave() }
            while true {
                let i = next.add(1, ordering: .relaxed).oldValue
                guard i < items.count else { return }
                do { try body(items[i]) } catch { errors.withLock { $0.append(error) } }
            }
        }
    }
    group.wait()
    if let first = errors.withLock({ $0.first }) { throw first }
}

/// Parses `RESULT {json}` lines.
func checkResult(_ result: ChildResult) -> CheckResult? {
    guard let line = result.line("RESULT "), let data = line.dropFirst(7).data(using: .utf8) else { return nil }
    return try? JSONDecoder().decode(CheckResult.self, from: data)
}

/// The `ACK n <signature>` lines of a child: (n, signature).
func acknowledgements(_ result: ChildResult) -> [(Int, String)] {
    result.acknowledgements.compactMap { line in
        let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
        guard parts.count >= 2, let n = Int(parts[1]) else { return nil }
        return (n, parts.count > 2 ? parts[2] : "none")
    }
}

/// The `t=<transaction id>` of a signature.
func transactionID(_ signature: String) -> Int? {
    signature.split(separator: " ").first { $0.hasPrefix("t=") }.flatMap { Int($0.dropFirst(2)) }
}

/// The `j=task/batches/cursor/completed` of a signature, as (task index, batches), or nil without a journal.
func journalProgress(_ signature: String) -> (task: Int, batches: Int)? {
    guard let j = signature.split(separator: " ").first(where: { $0.hasPrefix("j=") })?.dropFirst(2), j != "-" else { return nil }
    let parts = j.split(separator: "/")
    guard parts.count >= 2, let t = Int(parts[0]), let b = Int(parts[1]) else { return nil }
    return (t, b)
}

/// The number of records of `entity` in a signature's `c=Entity:n,…`.
func recordCount(_ signature: String, entity: String = "Item") -> Int? {
    guard let counts = signature.split(separator: " ").first(where: { $0.hasPrefix("c=") })?.dropFirst(2) else { return nil }
    for part in counts.split(separator: ",") {
        let kv = part.split(separator: ":")
        if kv.count == 2, kv[0] == entity { return Int(kv[1]) }
    }
    return nil
}
