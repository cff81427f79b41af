import BenchCore
import Foundation
import Strata

/// The posts model at the versions the scenarios need. Attributes are required and unindexed, as the
/// raw baselines have no secondary index either.
public enum PostModel {
    /// v1: what every scenario starts from.
    public static func v1() throws -> Schema {
        try Schema("v1") {
            Entity("Post") {
                Attribute("postID", .uuid)
                Attribute("date", .date)
                Attribute("color", .string)
                Attribute("content", .string)
                Attribute("views", .int32)
            }
        }
    }

    /// Metadata only: `color` renamed `hexColor`, `softDelete` added with a default, `views` removed.
    public static func renamed() throws -> Schema {
        try Schema("v2-metadata") {
            Entity("Post") {
                Attribute("postID", .uuid)
                Attribute("date", .date)
                Attribute("hexColor", .string).renamed(from: "color")
                Attribute("content", .string)
                Attribute("softDelete", .bool).defaultValue(false)
            }
        }
    }

    /// A rewrite of every record: `views` widened from Int32 to Int64.
    public static func widened() throws -> Schema {
        try Schema("v2-rewrite") {
            Entity("Post") {
                Attribute("postID", .uuid)
                Attribute("date", .date)
                Attribute("color", .string)
                Attribute("content", .string)
                Attribute("views", .int64)
            }
        }
    }

    /// The split: `content` moves into a `Section` per post (title = first 4 characters + "...").
    public static func split() throws -> Schema {
        try Schema("v2-split") {
            Entity("Post") {
                Attribute("postID", .uuid)
                Attribute("date", .date)
                Attribute("color", .string)
                Attribute("views", .int32)
                Relationship("sections", to: "Section", inverse: "post", toMany: true, deleteRule: .cascade)
            }
            Entity("Section") {
                Attribute("title", .string)
                Attribute("body", .string)
                Attribute("index", .int64)
                Relationship("post", to: "Post", inverse: "sections")
            }
        }
    }

    /// The custom stage of the split, written as the tutorial's posts migration does.
    public static func splitStage() -> MigrationStage {
        MigrationStage.custom(
            from: "v1", to: "v2-split",
            entityMappings: [
                // The post keeps its identity (the inferred object, without `content`); its section is made
                // and linked in the same call, as an NSEntityMigrationPolicy may relate the objects it creates.
                .transform("Post", destinations: ["Section"], instances: { post, ctx in
                    let section = try insertPostAndSection(post, ctx)
                    try ctx.link(post.id, of: "Post", "sections", to: section)
                }),
            ])
    }

    /// The split's instance work for one post: the post as inferred (without `content`, its identifier kept) and a
    /// new section; returns the section.
    @inline(__always) @discardableResult
    static func insertPostAndSection(_ post: DynamicObject, _ ctx: InstanceMigrationContext) throws -> ObjectID {
        try ctx.insert(try ctx.inferredObject(for: post))
        let content = post["content"].stringValue ?? ""
        var section = try ctx.makeObject("Section")
        section["title"] = .string(DataSet.sectionTitle(content))
        section["body"] = .string(content)
        section["index"] = .int64(0)
        return try ctx.insert(section, keepingSourceID: false)
    }
}

extension PostModel {
    /// The split of ``splitStage()`` with the link made in the mapping's relationship pass, after every post and
    /// section exists: the section is found by its source post (`destinations(for:entity:)`), as a Core Data
    /// policy finds it with `destinationInstances(forEntityMappingName:sourceInstances:)`.
    public static func splitStageLinkingInRelationshipPass() -> MigrationStage {
        MigrationStage.custom(
            from: "v1", to: "v2-split",
            entityMappings: [
                .transform("Post", destinations: ["Section"], instances: { post, ctx in
                    try insertPostAndSection(post, ctx)
                }, relationships: { post, ctx in
                    for section in try ctx.destinations(for: post.id, entity: "Section") {
                        try ctx.link(post.id, of: "Post", "sections", to: section)
                    }
                }),
            ])
    }

    /// The split as a declared mapping: `content` → `Section.body`, the title its first 4 characters + "..."
    /// (`DataSet.sectionTitle`), `index` 0 — executed as a streaming copy of records.
    public static func declaredSplitStage() -> MigrationStage {
        MigrationStage.custom(from: "v1", to: "v2-split", entityMappings: [
            .extract("Section", from: "Post", linkedBy: "post", values: [
                "body": .attribute("content"), "title": .prefix(of: "content", length: 4, appending: "..."), "index": .constant(0),
            ]),
        ])
    }
}

/// A post through the `Codable` typed API (`Persistable`).
public struct Post: Persistable, Equatable {
    public static let entityName = "Post"
    public var id: ObjectID?
    public var postID: UUID
    public var date: Date
    public var color: String
    public var content: String
    public var views: Int32

    public init(_ r: PostRecord) {
        postID = r.uuid
        date = r.dateValue
        color = r.color
        content = r.content
        views = r.views
    }
}

/// Strata's side of every scenario, through the dynamic API (`strata`), the macro models' typed API
/// (`strata-typed`), the `Codable` typed API (`strata-codable`), record views (`strata-views`), or the typed API on
/// an encrypted store (`strata-encrypted`, EncryptionScenarios.swift).
public enum StrataScenarios {
    public static func run(_ task: ChildTask) throws -> ChildReport? {
        let url = URL(fileURLWithPath: task.path)
        switch (task.role, task.scenario) {
        case (_, .cliImport), (_, .cliExport):
            return try CLIScenarios.run(task)
        case (.observedWriter, _):
            try ObservationScenarios.runObservedWriter(task)
            return nil
        case (.prepare, .observeInsert):
            return nil
        case (.measure, .observeLatency): return try ObservationScenarios.measureLatency(task, url: url)
        case (.measure, .observeInsert): return try ObservationScenarios.measureInsert(task)
        case (.measure, .observeMemory): return try ObservationScenarios.measureMemory(task, url: url)
        case (.prepare, .insert):
            return nil
        case (.prepare, .codableReshape):
            try ReshapeScenario.prepare(task, url: url)
            return nil
        case (.prepare, .sweep), (.prepare, .scanOldLayout), (.prepare, .writesDuringSweep):
            try load(task, url: url, system: .strata)
            try ZeroDowntimeScenarios.widenAsProjection(task, url: url)
            return nil
        case (.prepare, _):
            try load(task, url: url, system: task.system)
            return nil
        case (.measure, .insert):
            let report = try measured(path: task.path) {
                let seconds = try load(task, url: url, system: task.system)
                return (seconds, task.records, "records", [:], [])
            }
            try verifyPosts(task, url: url, schema: try PostModel.v1())
            return report
        case (.measure, .open): return try measureOpen(task, url: url)
        case (.measure, .scan): return try measureScan(task, url: url)
        case (.measure, .get): return try measureGet(task, url: url)
        case (.measure, .aggregate): return try measureAggregate(task, url: url)
        case (.measure, .lightweightMetadata), (.measure, .lightweightRewrite), (.measure, .forcedRewrite), (.measure, .customSplit):
            return try measureMigration(task, url: url)
        case (.measure, .sweep): return try ZeroDowntimeScenarios.measureSweep(task, url: url)
        case (.measure, .scanOldLayout): return try ZeroDowntimeScenarios.measureScanOldLayout(task, url: url)
        case (.measure, .writesDuringSweep): return try ZeroDowntimeScenarios.measureWritesDuringSweep(task, url: url)
        case (.measure, .codableReshape): return try ReshapeScenario.measure(task, url: url)
        case (.measure, .keyRotation): return try EncryptionScenarios.measureKeyRotation(task, url: url)
        }
    }

    // MARK: Insert

    /// Loads the data set, `batchSize` objects per write transaction; returns the seconds from before the
    /// store is created to after it is closed, less the data set's generation.
    @discardableResult
    static func load(_ task: ChildTask, url: URL, system: System) throws -> Double {
        let data = task.dataSet
        let progress = Progress("\(system.rawValue) insert", total: task.records)
        let schema = try PostModel.v1()
        var clock = Stopwatch()
        clock.start()
        let store = try Store.open(at: url, schema: schema, configuration: EncryptionScenarios.configuration(for: system))
        clock.stop()
        for range in data.batches(of: task.batchSize) {
            let records = data.batch(range)
            clock.start()
            switch system {
            case .strataTyped, .strataEncrypted:
                try store.write { ctx in
                    for r in records { try ctx.insert(MacroPosts.V1.Post(r)) }
                }
            case .strataCodable:
                try store.write { ctx in
                    for r in records { try ctx.insert(Post(r)) }
                }
            default:
                try store.write { ctx in
                    for r in records {
                        try ctx.insert("Post", orderedValues: [.uuid(r.uuid), .date(r.dateValue), .string(r.color),
                                                               .string(r.content), .int32(r.views)])
                    }
                }
            }
            clock.stop()
            progress.update(range.upperBound)
        }
        clock.start()
        store.close()
        clock.stop()
        return clock.seconds
    }

    // MARK: Open

    static func measureOpen(_ task: ChildTask, url: URL) throws -> ChildReport {
        let schema = try PostModel.v1()
        let configuration = EncryptionScenarios.configuration(for: task.system)
        var first = 0.0
        return try measured(path: task.path) {
            let start = Clock.now()
            for cycle in 0..<task.openCycles {
                let t0 = Clock.now()
                // Opening compares the store's version hashes with the model's; it throws when they differ.
                let store = try Store.open(at: url, schema: schema, configuration: configuration)
                guard store.schema.versionIdentifier == "v1" else { throw BenchFailure("wrong version") }
                store.close()
                if cycle == 0 { first = Clock.now() - t0 }
            }
            return ((Clock.now() - start) / Double(task.openCycles), 1, "opens",
                    ["first_open_seconds": first, "cycles": Double(task.openCycles)], [])
        }
    }

    // MARK: Reads

    @inline(__always)
    static func fold(_ o: DynamicObject, into fold: inout Fold) {
        fold.add(o.id.rawValue)
        if let u = o["postID"].uuidValue { fold.add(uuid: u.uuid) }
        if let d = o["date"].dateValue { fold.add(d.timeIntervalSinceReferenceDate) }
        if let s = o["color"].stringValue { fold.add(text: s) }
        if let s = o["content"].stringValue { fold.add(text: s) }
        if case .int32(let v) = o["views"] { fold.add(v) }
    }

    /// The same fold, from a record view: texts are read in place, not copied into `String`s.
    @inline(__always)
    static func fold(_ v: ObjectView, into fold: inout Fold) throws {
        fold.add(v.id.rawValue)
        if let u = try v.uuid("postID") { fold.add(uuid: u.uuid) }
        if let d = try v.date("date") { fold.add(d.timeIntervalSinceReferenceDate) }
        _ = try v.withBytes(of: "color") { fold.add(text: $0) }
        _ = try v.withBytes(of: "content") { fold.add(text: $0) }
        if let i = try v.int64("views") { fold.add(Int32(truncatingIfNeeded: i)) }
    }

    @inline(__always)
    static func fold(_ p: MacroPosts.V1.Post, into fold: inout Fold) {
        fold.add(p.objectID?.rawValue ?? 0)
        fold.add(uuid: p.postID.uuid)
        fold.add(p.date.timeIntervalSinceReferenceDate)
        fold.add(text: p.color)
        fold.add(text: p.content)
        fold.add(p.views)
    }

    /// The same fold, from a macro model's borrowed record: texts read in place.
    @inline(__always)
    static func fold(_ r: MacroPosts.V1.Post.Record, into fold: inout Fold) throws {
        fold.add(r.objectID.rawValue)
        fold.add(uuid: try r.postID.uuid)
        fold.add(try r.date.timeIntervalSinceReferenceDate)
        try r.color.withUTF8 { fold.add(text: $0) }
        try r.content.withUTF8 { fold.add(text: $0) }
        fold.add(try r.views)
    }

    @inline(__always)
    static func fold(_ p: Post, into fold: inout Fold) {
        fold.add(p.id?.rawValue ?? 0)
        fold.add(uuid: p.postID.uuid)
        fold.add(p.date.timeIntervalSinceReferenceDate)
        fold.add(text: p.color)
        fold.add(text: p.content)
        fold.add(p.views)
    }

    static func measureScan(_ task: ChildTask, url: URL) throws -> ChildReport {
        let schema = try PostModel.v1()
        var f = Fold()
        var n = 0
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let store = try Store.open(at: url, schema: schema, configuration: EncryptionScenarios.configuration(for: task.system))
            if task.system == .strataTyped || task.system == .strataEncrypted {
                try store.read { ctx in
                    try ctx.objects(MacroPosts.V1.Post.self).forEach { p in
                        fold(p, into: &f)
                        n += 1
                    }
                }
            } else if task.system == .strataCodable {
                try store.read { ctx in
                    try ctx.objects(Post.self).forEach { p in
                        fold(p, into: &f)
                        n += 1
                    }
                }
            } else if task.system == .strataRecords {
                try store.read { ctx in
                    try ctx.objects(MacroPosts.V1.Post.self).forEachRecord { r in
                        try fold(r, into: &f)
                        n += 1
                    }
                }
            } else if task.system == .strataViews {
                try store.read { ctx in
                    try ctx.forEachView(of: "Post") { v in
                        try fold(v, into: &f)
                        n += 1
                    }
                }
            } else {
                try store.read { ctx in
                    try ctx.objects("Post").forEach { o in
                        fold(o, into: &f)
                        n += 1
                    }
                }
            }
            store.close()
            return (Clock.now() - start, n, "records", [:], [])
        }
        guard n == task.records else { throw BenchFailure("scan read \(n) objects, expected \(task.records)") }
        report.extra["fold"] = Double(f.value % (1 << 50))
        if task.system == .strataRecords { try measureAggregates(url: url, schema: schema, into: &report) }
        return report
    }

    /// Times the query aggregates over the scanned store, after the scan (outside its time): `sum`, `max` and
    /// `average` of `views`, each over every post, in a read of its own; the sum is checked against a fold of
    /// the owned values.
    static func measureAggregates(url: URL, schema: Schema, into report: inout ChildReport) throws {
        let store = try Store.open(at: url, schema: schema)
        defer { store.close() }
        var expected: Int64 = 0
        try store.read { ctx in try ctx.objects(MacroPosts.V1.Post.self).forEach { expected += Int64($0.views) } }
        func timed<R>(_ body: (ReadContext) throws -> R) throws -> (Double, R) {
            let start = Clock.now()
            let r = try store.read(body)
            return (Clock.now() - start, r)
        }
        let (sumTime, sum) = try timed { try $0.objects(MacroPosts.V1.Post.self).sum(\.views, as: Int64.self) }
        let (maxTime, _) = try timed { try $0.objects(MacroPosts.V1.Post.self).max(\.views) }
        let (averageTime, _) = try timed { try $0.objects(MacroPosts.V1.Post.self).average(\.views) }
        guard sum == expected else { throw BenchFailure("sum(views) is \(sum), the posts' views add up to \(expected)") }
        report.extra["sum_seconds"] = sumTime
        report.extra["max_seconds"] = maxTime
        report.extra["average_seconds"] = averageTime
    }

    /// `aggregate`: the typed query aggregates over the macro model (`count`, `sum(\.views, as: Int64.self)`,
    /// `min(\.views)`, `max(\.views)`, unfiltered and with `filter(\.views >= threshold)`), each in a read of its own:
    /// records read in place, only `views` decoded. The unfiltered count is the entity's entry count.
    static func measureAggregate(_ task: ChildTask, url: URL) throws -> ChildReport {
        let store = try Store.open(at: url, schema: try PostModel.v1())
        defer { store.close() }
        typealias Post = MacroPosts.V1.Post
        return try AggregateQuery.measure(task) { name in
            try store.read { ctx -> Int64? in
                let all = try ctx.objects(Post.self)
                let query = name.hasSuffix("_filtered") ? all.filter(\.views >= AggregateQuery.threshold) : all
                switch name.split(separator: "_")[0] {
                case "count": return Int64(try query.count())
                case "sum": return try query.sum(\.views, as: Int64.self)
                case "min": return try query.min(\.views).map(Int64.init)
                default: return try query.max(\.views).map(Int64.init)
                }
            }
        }
    }

    static func measureGet(_ task: ChildTask, url: URL) throws -> ChildReport {
        let schema = try PostModel.v1()
        var f = Fold()
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let store = try Store.open(at: url, schema: schema, configuration: EncryptionScenarios.configuration(for: task.system))
            try store.read { ctx in
                try task.dataSet.randomIDs(task.gets) { id in
                    if task.system == .strataTyped || task.system == .strataEncrypted {
                        guard let p = try ctx.fetch(MacroPosts.V1.Post.self, id: ObjectID(rawValue: id)) else { throw BenchFailure("no post \(id)") }
                        fold(p, into: &f)
                    } else if task.system == .strataCodable {
                        guard let p = try ctx.fetch(Post.self, id: ObjectID(rawValue: id)) else { throw BenchFailure("no post \(id)") }
                        fold(p, into: &f)
                    } else {
                        guard let o = try ctx.object(ObjectID(rawValue: id), of: "Post") else { throw BenchFailure("no post \(id)") }
                        fold(o, into: &f)
                    }
                }
            }
            store.close()
            return (Clock.now() - start, task.gets, "fetches", [:], [])
        }
        report.extra["fold"] = Double(f.value % (1 << 50))
        return report
    }

    // MARK: Migrations

    static func measureMigration(_ task: ChildTask, url: URL) throws -> ChildReport {
        let target: Schema
        var stages: [MigrationStage] = []
        switch task.scenario {
        case .lightweightMetadata: target = try PostModel.renamed()
        case .lightweightRewrite, .forcedRewrite: target = try PostModel.widened()
        default:
            target = try PostModel.split()
            switch task.system {
            case .strataTyped: stages = [MacroPosts.splitStage()]
            case .strataDeclared: stages = [PostModel.declaredSplitStage()]
            case .strataLinked: stages = [PostModel.splitStageLinkingInRelationshipPass()]
            case .strataTypedLinked: stages = [MacroPosts.splitStageLinkingInRelationshipPass()]
            default: stages = [PostModel.splitStage()]
            }
        }
        let plan = try MigrationPlan(schemas: [try PostModel.v1(), target], stages: stages)
        var options = MigrationOptions()
        if let records = task.migrationBatchRecords { options.batchSize = records }
        if task.scenario == .forcedRewrite { options.rewritesEveryRecord() }
        let label = "\(task.system.rawValue) \(task.scenario.rawValue)"
        let records = task.records
        let reported = ReportedPhases()
        options.progress = { p in reported.report(label, p, records: records) }
        var configuration = StoreConfiguration(migration: options)
        configuration.createIfMissing = false
        // The migration alone: the background sweep that follows a projection is measured by its own rows.
        configuration.backgroundMaintenance = false
        // The library's estimate, made before the timing (it reads a sample of the store and writes nothing).
        let explanation = try Store.explainMigration(at: url, schema: target, plan: plan, configuration: configuration)
        var report = try measured(path: task.path) {
            let start = Clock.now()
            let store = try Store.open(at: url, schema: target, plan: plan, configuration: configuration)
            store.close()
            return (Clock.now() - start, task.records, "records", [:], [])
        }
        report.extra["estimate_seconds"] = explanation.estimatedSeconds
        report.extra["estimate_bytes"] = Double(explanation.bytesToWrite)
        report.extra["estimate_ratio"] = explanation.estimatedSeconds / max(report.seconds, 1e-9)
        if let c = explanation.calibration {
            // What the estimate was computed from (seconds per record, and per durable commit).
            report.extra["calibration_read_seconds"] = c.readSecondsPerRecord
            report.extra["calibration_decode_seconds"] = c.decodeSecondsPerRecord
            report.extra["calibration_encode_seconds"] = c.encodeSecondsPerRecord
            report.extra["calibration_write_seconds"] = c.writeSecondsPerRecord
            report.extra["calibration_insert_seconds"] = c.insertSecondsPerRecord
            report.extra["calibration_commit_seconds"] = c.commitSeconds
        }
        try verifyMigrated(task, url: url, target: target)
        return report
    }

    /// Prints a migration's progress at a few points of each phase.
    final class ReportedPhases: @unchecked Sendable {
        private let lock = NSLock()
        private var last: [String: Int] = [:]

        func report(_ label: String, _ p: MigrationProgress, records: Int) {
            guard records >= 200_000, p.total > 0 else { return }
            let key = "\(p.phase)-\(p.entity ?? "")"
            let quarter = 4 * p.completed / p.total
            lock.lock()
            let previous = last[key] ?? 0
            if quarter > previous { last[key] = quarter }
            lock.unlock()
            if quarter > previous {
                note("    \(label): \(p.phase) \(p.entity ?? "") \(grouped(p.completed))/\(grouped(p.total))")
            }
        }
    }

    // MARK: Checks (after the timing)

    static func verifyPosts(_ task: ChildTask, url: URL, schema: Schema) throws {
        let store = try Store.open(at: url, schema: schema, configuration: EncryptionScenarios.configuration(for: task.system))
        defer { store.close() }
        try store.read { ctx in
            let n = try ctx.count("Post")
            guard n == task.records else { throw BenchFailure("\(n) posts, expected \(task.records)") }
            for i in Set([1, task.records / 2 + 1, task.records]) {
                let r = task.dataSet.record(i)
                guard let o = try ctx.object(ObjectID(rawValue: UInt64(i)), of: "Post"), o["postID"] == .uuid(r.uuid),
                      o["content"] == .string(r.content), o["views"] == .int32(r.views) else {
                    throw BenchFailure("post \(i) does not hold record \(i)")
                }
            }
        }
    }

    static func verifyMigrated(_ task: ChildTask, url: URL, target: Schema) throws {
        let store = try Store.open(at: url, schema: target)
        defer { store.close() }
        try store.read { ctx in
            let n = try ctx.count("Post")
            guard n == task.records else { throw BenchFailure("\(n) posts after the migration, expected \(task.records)") }
            for i in Set([1, task.records]) {
                let r = task.dataSet.record(i)
                guard let o = try ctx.object(ObjectID(rawValue: UInt64(i)), of: "Post") else { throw BenchFailure("post \(i) missing") }
                switch task.scenario {
                case .lightweightMetadata:
                    guard o["hexColor"] == .string(r.color), o["softDelete"] == .bool(false), o["content"] == .string(r.content) else {
                        throw BenchFailure("post \(i) was not migrated")
                    }
                case .lightweightRewrite, .forcedRewrite:
                    guard o["views"] == .int64(Int64(r.views)), o["content"] == .string(r.content) else {
                        throw BenchFailure("post \(i) was not widened")
                    }
                default:
                    let sections = try ctx.relatedObjects(o, "sections")
                    guard sections.count == 1, sections[0]["body"] == .string(r.content),
                          sections[0]["title"] == .string(DataSet.sectionTitle(r.content)) else {
                        throw BenchFailure("post \(i) was not split")
                    }
                }
            }
            if task.scenario == .customSplit {
                let s = try ctx.count("Section")
                guard s == task.records else { throw BenchFailure("\(s) sections, expected \(task.records)") }
            }
        }
    }
}
