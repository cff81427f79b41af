import BenchCore
import Foundation
import Strata
#if canImport(Glibc)
import Glibc
#endif

/// Issue 14's rows: how long a commit takes to reach an observer (in this process and from another one),
/// what observers cost the writer, and whether an observed store's memory stays flat over many commits.
enum ObservationScenarios {
    /// How many stamped commits each latency measurement makes (in this process, then from another one).
    static let latencyCommits = 1_000
    /// The post whose `content` the latency writers stamp.
    static let stampedPost = ObjectID(rawValue: 1)

    static func configuration() -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.createIfMissing = false
        configuration.backgroundMaintenance = false
        return configuration
    }

    // MARK: Latency

    /// What the latency observer has seen: the delay of each stamped value, signalled one by one.
    final class Deliveries: @unchecked Sendable {
        private let lock = NSLock()
        private var latencies: [Double] = []
        private var firstValue = false
        let signal = DispatchSemaphore(value: 0)

        func deliver(_ content: String?, at now: Double) {
            lock.lock()
            if let content, content.hasPrefix("stamp:"), let stamp = Double(content.dropFirst(6)) {
                latencies.append(now - stamp)
            } else if !firstValue {
                firstValue = true
            } else {
                lock.unlock()
                return
            }
            lock.unlock()
            signal.signal()
        }

        var all: [Double] {
            lock.lock()
            defer { lock.unlock() }
            return latencies
        }
    }

    /// A query observation of the stamped post's `content`, consumed by a task until it is cancelled.
    static func observeStamps(_ store: Store, into deliveries: Deliveries) -> Task<Void, Never> {
        let values = store.observe { ctx in try ctx.object(stampedPost, of: "Post")?["content"].stringValue }
        return Task.detached {
            do {
                for try await content in values { deliveries.deliver(content, at: Clock.now()) }
            } catch {
                note("observe-latency: the observation ended: \(error)")
            }
        }
    }

    /// One commit that stamps the post with the monotonic clock (shared by every process of the machine).
    static func commitStamp(_ store: Store) throws {
        try store.write { ctx in
            guard var post = try ctx.object(stampedPost, of: "Post") else { throw BenchFailure("no post 1") }
            post["content"] = .string("stamp:\(Clock.now())")
            try ctx.update(post)
        }
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))]
    }

    /// Stamped commits by a thread of this process, then by another process, each waiting for its value to
    /// arrive before the next (so no value coalesces): the row's time is the in-process median, and the
    /// extras give the medians, 99th percentiles and maxima of both.
    static func measureLatency(_ task: ChildTask, url: URL) throws -> ChildReport {
        let store = try Store.open(at: url, schema: try PostModel.v1(), configuration: configuration())
        defer { store.close() }
        let deliveries = Deliveries()
        let observer = observeStamps(store, into: deliveries)
        defer { observer.cancel() }
        guard deliveries.signal.wait(timeout: .now() + 10) == .success else { throw BenchFailure("no first value") }

        var local: [Double] = []
        var remote: [Double] = []
        let report = try measured(path: task.path) {
            let start = Clock.now()
            for n in 0..<latencyCommits {
                try commitStamp(store)
                guard deliveries.signal.wait(timeout: .now() + 5) == .success else {
                    throw BenchFailure("in-process commit \(n + 1) was not delivered within 5 s")
                }
            }
            local = deliveries.all
            try commitFromAnotherProcess(task, deliveries: deliveries)
            remote = Array(deliveries.all.dropFirst(local.count))
            return (Clock.now() - start, 2 * latencyCommits, "commits", [:], [])
        }
        guard local.count == latencyCommits, remote.count == latencyCommits else {
            throw BenchFailure("\(local.count) + \(remote.count) values delivered for \(latencyCommits) + \(latencyCommits) commits")
        }
        let l = local.sorted(), r = remote.sorted()
        var result = report
        result.seconds = percentile(l, 0.5)
        result.operations = 1
        result.unit = "deliveries"
        result.extra = [
            "in_process_median_seconds": percentile(l, 0.5), "in_process_p99_seconds": percentile(l, 0.99),
            "in_process_max_seconds": l.last ?? 0,
            "other_process_median_seconds": percentile(r, 0.5), "other_process_p99_seconds": percentile(r, 0.99),
            "other_process_max_seconds": r.last ?? 0,
        ]
        return result
    }

    /// Starts this executable again as the writer (``runObservedWriter(_:)``), and after each value it
    /// delivers writes one byte to the writer's standard input: the writer's cue for its next commit.
    static func commitFromAnotherProcess(_ task: ChildTask, deliveries: Deliveries) throws {
        var writerTask = task
        writerTask.role = .observedWriter
        let process = Process()
        process.executableURL = URL(fileURLWithPath: selfExecutable())
        process.arguments = ["__child", String(decoding: try JSONEncoder().encode(writerTask), as: UTF8.self)]
        let cue = Pipe()
        process.standardInput = cue
        try process.run()
        defer {
            try? cue.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        for n in 0..<latencyCommits {
            guard deliveries.signal.wait(timeout: .now() + 5) == .success else {
                process.terminate()
                throw BenchFailure("commit \(n + 1) of the other process was not delivered within 5 s")
            }
            try cue.fileHandleForWriting.write(contentsOf: [1])
        }
    }

    /// The other process of ``measureLatency(_:url:)``: a stamped commit, then a wait for its cue (one byte
    /// on standard input), `latencyCommits` times.
    static func runObservedWriter(_ task: ChildTask) throws {
        let store = try Store.open(at: URL(fileURLWithPath: task.path), schema: try PostModel.v1(), configuration: configuration())
        defer { store.close() }
        var byte: UInt8 = 0
        for n in 0..<latencyCommits {
            try commitStamp(store)
            guard read(0, &byte, 1) == 1 else {
                if n == latencyCommits - 1 { return }
                throw BenchFailure("the observer stopped cueing after \(n + 1) commits")
            }
        }
    }

    // MARK: Insert beside observers

    /// The posts model with a second entity, `Note`, that the observers watch and the inserts never touch.
    static func schemaWithNotes() throws -> Schema {
        try Schema("v1-notes", entities: try PostModel.v1().entities + [Entity("Note") { Attribute("text", .string) }])
    }

    /// How often the `Note` observers of ``insert(_:observers:directory:)`` woke after their first value.
    final class WakeCount: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.lock(); count += 1; lock.unlock() }
        var value: Int { lock.lock(); defer { lock.unlock() }; return count }
    }

    /// The data set inserted into a new store while `observers` query observations watch `Note`: seconds of
    /// the inserts alone (the observers start, and deliver their first value, before the clock does).
    static func insert(_ task: ChildTask, observers: Int, directory: String) throws -> Double {
        try? FileManager.default.removeItem(atPath: directory)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try Store.open(at: URL(fileURLWithPath: directory), schema: try schemaWithNotes())
        defer { store.close() }
        let started = DispatchSemaphore(value: 0)
        let woken = WakeCount()
        let tasks = (0..<observers).map { _ in
            let values = store.observe { try $0.count("Note") }
            return Task.detached {
                var first = true
                for try await _ in values {
                    if first { started.signal(); first = false } else { woken.add() }
                }
            }
        }
        defer { for t in tasks { t.cancel() } }
        for _ in 0..<observers {
            guard started.wait(timeout: .now() + 30) == .success else { throw BenchFailure("an observer did not start") }
        }
        let data = task.dataSet
        var clock = Stopwatch()
        for range in data.batches(of: task.batchSize) {
            let records = data.batch(range)
            clock.start()
            try store.write { ctx in
                for r in records {
                    _ = try ctx.insert("Post", orderedValues: [.uuid(r.uuid), .date(r.dateValue), .string(r.color),
                                                              .string(r.content), .int32(Int32(r.views))])
                }
            }
            clock.stop()
        }
        guard try store.read({ try $0.count("Post") }) == task.records else { throw BenchFailure("posts missing after the insert") }
        guard woken.value == 0 else { throw BenchFailure("Note observers woke \(woken.value) times for commits of posts") }
        return clock.seconds
    }

    /// The insert of the data set with no observer, one and a hundred observers of another entity, then none
    /// again: the row's time is the mean of the two runs without, and `with_1_ratio`, `with_100_ratio` the
    /// throughput with observers ÷ without.
    static func measureInsert(_ task: ChildTask) throws -> ChildReport {
        var figures: [Int: [Double]] = [:]
        let report = try measured(path: task.path) {
            for observers in [0, 1, 100, 0] {
                figures[observers, default: []].append(try insert(task, observers: observers, directory: task.path + "-\(observers)"))
            }
            let none = (figures[0] ?? []).reduce(0, +) / 2
            return (none, task.records, "records", [:], [])
        }
        var result = report
        result.extra["with_1_seconds"] = figures[1]?.first ?? 0
        result.extra["with_100_seconds"] = figures[100]?.first ?? 0
        result.extra["with_1_ratio"] = report.seconds / max(figures[1]?.first ?? 0, 1e-12)
        result.extra["with_100_ratio"] = report.seconds / max(figures[100]?.first ?? 0, 1e-12)
        return result
    }

    // MARK: Memory over many commits

    /// How many commits the memory row makes: the data set's size, at most a million.
    static func memoryCommits(_ task: ChildTask) -> Int { min(task.records, 1_000_000) }

    /// One update per commit, `memoryCommits` times, while a query observation and a change-set observation
    /// watch the posts: anonymous memory after 1 %, half and all of the commits (`anon_start_bytes`,
    /// `anon_half_bytes`, `anon_end_bytes`), and a check that the observers saw the last commit.
    static func measureMemory(_ task: ChildTask, url: URL) throws -> ChildReport {
        let store = try Store.open(at: url, schema: try PostModel.v1(), configuration: configuration())
        defer { store.close() }
        // A query observation that keeps nothing of its values: the memory measured is the store's.
        let started = DispatchSemaphore(value: 0)
        let values = store.observe { ctx in try ctx.object(stampedPost, of: "Post")?["views"] }
        let observer = Task.detached {
            var first = true
            for try await _ in values where first {
                first = false
                started.signal()
            }
        }
        defer { observer.cancel() }
        guard started.wait(timeout: .now() + 10) == .success else { throw BenchFailure("no first value") }
        let lastUpdated = LastUpdated()
        let changes = try store.changes(of: "Post")
        let changeTask = Task.detached {
            for try await set in changes { lastUpdated.note(set) }
        }
        defer { changeTask.cancel() }
        // The change-set observation starts with its iteration: commit until it has seen one.
        for _ in 0..<500 where lastUpdated.value == 0 {
            try commitStamp(store)
            Thread.sleep(forTimeInterval: 0.01)
        }
        guard lastUpdated.value != 0 else { throw BenchFailure("the change-set observation did not start") }

        let commits = memoryCommits(task)
        var marks: [String: Double] = [:]
        let report = try measured(path: task.path) {
            let start = Clock.now()
            for n in 0..<commits {
                let id = ObjectID(rawValue: UInt64(1 + n % task.records))
                try store.write { ctx in
                    guard var post = try ctx.object(id, of: "Post") else { throw BenchFailure("no post \(id.rawValue)") }
                    post["views"] = .int32(Int32(truncatingIfNeeded: n))
                    try ctx.update(post)
                }
                if n + 1 == max(1, commits / 100) { marks["anon_start_bytes"] = Double(AnonMemoryProbe.current()) }
                if n + 1 == commits / 2 { marks["anon_half_bytes"] = Double(AnonMemoryProbe.current()) }
            }
            marks["anon_end_bytes"] = Double(AnonMemoryProbe.current())
            return (Clock.now() - start, commits, "commits", [:], [])
        }
        // A last commit inserts a post: once the change-set observation lists it, it has been through every
        // commit before.
        let marker = try store.write { ctx in
            try ctx.insert("Post", orderedValues: [.uuid(UUID()), .date(Date()), .string("marker"), .string("marker"), .int32(0)])
        }
        for _ in 0..<3_000 where !lastUpdated.inserted(marker.rawValue) { Thread.sleep(forTimeInterval: 0.01) }
        guard lastUpdated.inserted(marker.rawValue) else { throw BenchFailure("the change-set observation did not reach the last commit") }
        var result = report
        result.extra.merge(marks) { $1 }
        result.extra["incomplete_change_sets"] = Double(lastUpdated.incompleteSets)
        return result
    }

    /// What the change-set observer of ``measureMemory(_:url:)`` saw: whether any update arrived, the
    /// inserted IDs, and how many sets said "reload" (the observer fell more than 1,024 commits behind).
    final class LastUpdated: @unchecked Sendable {
        private let lock = NSLock()
        private var last: UInt64 = 0
        private var insertedIDs: Set<UInt64> = []
        private(set) var incompleteSets = 0

        func note(_ set: ChangeSet) {
            lock.lock()
            defer { lock.unlock() }
            if let id = set.updated.last?.rawValue { last = id }
            for id in set.inserted { insertedIDs.insert(id.rawValue) }
            if !set.isComplete { incompleteSets += 1 }
        }

        var value: UInt64 {
            lock.lock()
            defer { lock.unlock() }
            return last
        }

        func inserted(_ id: UInt64) -> Bool {
            lock.lock()
            defer { lock.unlock() }
            return insertedIDs.contains(id)
        }
    }
}
