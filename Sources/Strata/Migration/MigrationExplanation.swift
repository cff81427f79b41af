import Foundation

/// The whole migration a store would go through, before anything runs: every step, each entity's
/// mapping, the records each step touches, and whether a step rewrites records or changes metadata only.
/// Made by ``Store/explainMigration(at:schema:plan:configuration:)``; `strata plan` prints it.
public struct MigrationExplanation: Sendable, CustomStringConvertible {
    /// One step of the route.
    public struct Step: Sendable {
        public var source: String
        public var destination: String
        /// Whether a custom stage runs the step.
        public var isCustom: Bool
        /// The inferred mapping (nil when the step cannot be inferred; see ``diagnostics``).
        public var mapping: InferredMapping?
        /// Why the step cannot be inferred, if it cannot.
        public var diagnostics: [MigrationDiagnostic]
        /// The step's tasks, in order.
        public var tasks: [String]
        /// Whether any record is rewritten (otherwise the step changes metadata, and reads records only to
        /// check them or build indexes).
        public var rewritesRecords: Bool
        /// Objects per source entity at the step's start: exact for the store's own entities and for what
        /// lightweight steps carry over, estimated for what a custom stage creates (see ``ObjectCount``).
        public var recordCounts: [String: ObjectCount]
        /// Records the step reads or writes (rewrites, checks, index builds, policy passes) that are known
        /// before it runs; objects a custom stage creates add to it (see ``recordsTouchedIsLowerBound``).
        public var recordsTouched: Int
        /// Whether the step also touches objects created during the step, whose number is not known before.
        public var recordsTouchedIsLowerBound: Bool
        /// How each destination entity is produced: `"metadata"` (same records, new metadata), `"rewritten"`
        /// (every record rewritten), or `"created"` (by a custom stage's policies, or a new entity).
        public var entityHandling: [String: String]
        /// New indexes (`Entity.attribute`) the store's maintenance builds after the step, while the store is in
        /// use (queries scan until they are complete).
        public var backgroundIndexes: [String] = []
        /// The bytes the step is estimated to write: rewritten records, created objects, association and
        /// index entries, links, and the metadata of the switch (see ``MigrationExplanation/calibration``).
        /// Zero for a step that cannot be inferred.
        public var bytesToWrite: Int = 0
        /// The step's estimated duration in seconds, from the records it goes over and the per-record costs
        /// measured on this store (``MigrationExplanation/calibration``), plus the time the explanation itself
        /// took to open the store and plan the step (the migration repeats that work): a few milliseconds for
        /// a step that changes metadata only. A custom stage's own code (its policies' work beyond building and linking
        /// objects, its scripts) is not known before it runs. Zero for a step that cannot be inferred.
        public var estimatedSeconds: Double = 0
    }

    /// How many objects an entity has at a step's start: counted in the store, or estimated for entities a
    /// custom stage of an earlier step creates (one object per object of each source entity mapped to it,
    /// which is what most policies make; ``basis`` says which).
    public struct ObjectCount: Sendable, Hashable, CustomStringConvertible {
        /// The count, or the estimate.
        public var value: Int
        /// Why the count is an estimate (nil for a count read from the store or carried over exactly).
        public var basis: String?
        public var isEstimate: Bool { basis != nil }

        public init(_ value: Int, basis: String? = nil) {
            self.value = value
            self.basis = basis
        }

        public var description: String {
            let objects = "\(value) object\(value == 1 ? "" : "s")"
            return basis.map { "about \(objects), estimated: \($0)" } ?? objects
        }
    }

    /// The store's version, and whether it is already at the app's.
    public var storeVersion: String
    public var isUpToDate: Bool
    public var steps: [Step]
    /// The per-record costs the estimates come from, measured on the store as it was explained (nil when
    /// there is nothing to migrate).
    public var calibration: MigrationCalibration? = nil
    /// The plan's older versions that can still open the store once it is at the app's version, as it is,
    /// without migrating it: every change since each of them is additive (see <doc:Migrations>, "Opening a
    /// newer store with an older app"). Oldest first.
    public var versionsThatCanOpen: [String] = []

    /// The estimated duration of the whole migration, in seconds.
    public var estimatedSeconds: Double { steps.reduce(0) { $0 + $1.estimatedSeconds } }
    /// The estimated bytes the whole migration writes.
    public var bytesToWrite: Int { steps.reduce(0) { $0 + $1.bytesToWrite } }

    /// The sentence on ``versionsThatCanOpen``.
    var olderVersionsText: String {
        versionsThatCanOpen.isEmpty
            ? "No older version of the plan can open the store at the app's version without migrating it."
            : "Older versions that can still open the store at the app's version (every change since is additive): "
                + versionsThatCanOpen.joined(separator: ", ") + "."
    }

    public var description: String {
        if isUpToDate { return "The store is at \(storeVersion), the app's version: nothing to migrate. " + olderVersionsText }
        var lines = ["The store is at \(storeVersion); \(steps.count) step\(steps.count == 1 ? "" : "s") to \(steps.last?.destination ?? "?"):"]
        for (i, step) in steps.enumerated() {
            let kind = step.isCustom ? "custom stage" : "lightweight"
            let cost = step.rewritesRecords ? "rewrites records" : "metadata only"
            let touched = step.mapping == nil ? "cannot be inferred"
                : "touches \(step.recordsTouchedIsLowerBound ? "at least " : "")\(step.recordsTouched) record\(step.recordsTouched == 1 ? "" : "s")"
            lines.append("")
            lines.append("Step \(i + 1): \(step.source) → \(step.destination) (\(kind), \(cost), \(touched))")
            if !step.diagnostics.isEmpty {
                lines.append("  Cannot be inferred:")
                for d in step.diagnostics { lines.append("    - \(d)") }
                continue
            }
            for entity in step.mapping?.entities ?? [] {
                let count = entity.sourceName.flatMap { step.recordCounts[$0] }.map { " (\($0))" } ?? ""
                switch (entity.sourceName, entity.destinationName) {
                case (nil, let d?): lines.append("  \(d): added")
                case (let s?, nil): lines.append("  \(s)\(count): removed")
                case (let s?, let d?):
                    let how: String
                    switch step.entityHandling[d] {
                    case "created": how = "created by the custom stage from \(s)"
                    case "rewritten": how = "every record rewritten"
                    default: how = "metadata only"
                    }
                    lines.append("  \(d)\(count): \(s == d ? how : "renamed from \(s), \(how)")")
                    for a in entity.attributes where a.description != "\(a.name): copied" { lines.append("    \(a)") }
                    for a in entity.droppedAttributes { lines.append("    \(a): dropped") }
                    for r in entity.relationships where r.description != "\(r.name): copied" { lines.append("    \(r)") }
                    for r in entity.droppedRelationships { lines.append("    \(r): dropped") }
                    for i in entity.indexesAdded {
                        let later = step.backgroundIndexes.contains("\(d).\(i)")
                        lines.append("    index on \(i): built\(later ? " in the background after the step" : "")")
                    }
                    for i in entity.indexesDropped { lines.append("    index on \(i): dropped") }
                    for u in entity.uniquenessAdded { lines.append("    \(u): made unique (existing values checked)") }
                default: break
                }
            }
            lines.append("  Tasks: " + step.tasks.joined(separator: ", "))
            lines.append("  Estimate: writes about \(ByteCount(step.bytesToWrite)), takes about \(Self.secondsText(step.estimatedSeconds))"
                         + (step.isCustom ? " plus the stage's own code" : ""))
        }
        lines.append("")
        lines.append(olderVersionsText)
        if let c = calibration, c.sampledRecords > 0 {
            lines.append("")
            lines.append("Estimates are calibrated on \(c.sampledRecords) records of this store: per record, read \(Self.secondsText(c.readSecondsPerRecord)), decode \(Self.secondsText(c.decodeSecondsPerRecord)), encode \(Self.secondsText(c.encodeSecondsPerRecord)), write \(Self.secondsText(c.writeSecondsPerRecord)), insert an object \(Self.secondsText(c.insertSecondsPerRecord)); a durable commit \(Self.secondsText(c.commitSeconds)).")
        }
        return lines.joined(separator: "\n")
    }

    /// `1.2 s`, `35 ms`, `0.8 µs`-style text.
    static func secondsText(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.1f s", seconds) }
        if seconds >= 1e-3 { return String(format: "%.0f ms", seconds * 1e3) }
        if seconds >= 1e-6 { return String(format: "%.1f µs", seconds * 1e6) }
        return String(format: "%.0f ns", seconds * 1e9)
    }
}

extension Store {
    /// Explains the migration the store at `url` would need to reach `schema` (along `plan`, or inferred
    /// from the model recorded in the store). Writes nothing.
    public static func explainMigration(at url: URL, schema: Schema, plan: MigrationPlan? = nil,
                                        configuration: StoreConfiguration = StoreConfiguration()) throws -> MigrationExplanation {
        // Opening and reading the store, inferring and planning each step: the migration does the same work
        // before its first write, so its time (measured here) is part of the estimate.
        let begun = MonotonicClock.now()
        let effectivePlan = try plan ?? MigrationPlan(schemas: [schema])
        return try StoreOpener.withExistingEnvironment(at: url, configuration: configuration, schemas: [schema] + effectivePlan.schemas) { environment, configuration in
            try explain(environment: environment, configuration: configuration, schema: schema, plan: effectivePlan, begun: begun)
        }
    }

    private static func explain(environment: Environment, configuration: StoreConfiguration, schema: Schema,
                                plan effectivePlan: MigrationPlan, begun: Double) throws -> MigrationExplanation {
        let opening = StoreOpening(environment: environment, schema: schema, plan: effectivePlan, purpose: .migrate,
                                   configuration: configuration)
        let (header, decision) = try opening.route()
        let recorded = try environment.read { try header.recordedSchema(in: $0) }
        var counts: [String: MigrationExplanation.ObjectCount] = try environment.read { txn in
            var out: [String: MigrationExplanation.ObjectCount] = [:]
            for e in header.catalog.entities {
                if let dbi = try txn.openDatabase(e.database, flags: 0, create: false) {
                    out[e.name] = MigrationExplanation.ObjectCount(try txn.entryCount(dbi))
                }
            }
            return out
        }
        let canOpen = effectivePlan.schemas.filter { $0.versionIdentifier != schema.versionIdentifier && Downgrade.canOpen(older: $0, store: schema) }
            .map(\.versionIdentifier)
        guard case .migrate(let targets) = decision else {
            return MigrationExplanation(storeVersion: header.identity.versionIdentifier, isUpToDate: true, steps: [],
                                        versionsThatCanOpen: canOpen)
        }
        let preparation = MonotonicClock.now() - begun
        let calibration = try MigrationCalibration.measure(environment: environment, header: header, schema: recorded)
        let batchSize = configuration.migration.batchSize
        var steps: [MigrationExplanation.Step] = []
        var source = recorded
        var catalog = header.catalog
        for target in targets {
            let stepBegun = MonotonicClock.now()
            let stage = effectivePlan.stage(from: source.versionIdentifier, to: target.versionIdentifier)
            let isCustom = !(stage?.isLightweight ?? true)
            do {
                let mapping = try InferredMapping.infer(
                    from: source, to: target,
                    through: effectivePlan.schemas(between: source.versionIdentifier, and: target.versionIdentifier),
                    scriptedEntities: Set(stage?.scripts.map(\.entity) ?? []),
                    policyEntities: Set(stage?.passes.flatMap { $0 }.map(\.sourceEntity) ?? []))
                let stepPlan = try StepPlanner.plan(source: source, sourceCatalog: catalog, destination: target, mapping: mapping,
                                                    stage: stage, maximumLayouts: configuration.migration.maximumLayoutsPerEntity,
                                                    indexesInBackground: configuration.migration.buildsIndexesInBackground)
                var touched = 0
                var lowerBound = false
                let after = nextCounts(counts, mapping: mapping, kinds: stepPlan.kinds, stage: stage, step: source.versionIdentifier + " → " + target.versionIdentifier)
                var estimate = MigrationCostModel.stepStart(calibration: calibration)
                estimate.seconds += (steps.isEmpty ? preparation : 0) + (MonotonicClock.now() - stepBegun)
                for task in stepPlan.tasks {
                    let entity: String?
                    switch task {
                    case .rewrite(_, let s): entity = s
                    case .checkMaximumLinks(let e, _, _), .checkMinimumLinks(let e, _, _): entity = e
                    case .checkUniqueIndex(let e, _), .buildIndex(let e, _), .checkRequired(let e):
                        entity = mapping.entity(e)?.sourceName ?? e
                    case .instances(let p, let m), .relationships(let p, let m):
                        entity = stage.map { $0.passes[p][m].sourceEntity }
                    default: entity = nil
                    }
                    if let entity {
                        if let c = counts[entity] {
                            touched += c.value
                            if c.isEstimate { lowerBound = true }
                        } else {
                            lowerBound = true
                        }
                    }
                    // Destination entities a stage creates are counted as the step will leave them.
                    var records = entity.flatMap { counts[$0]?.value } ?? 0
                    var destinations = 1
                    switch task {
                    case .checkRequired(let e), .buildIndex(let e, _):
                        if counts[entity ?? e] == nil { records = after[e]?.value ?? 0 }
                    case .instances(let p, let m):
                        // The objects made per source object: one of each entity the mapping creates (its
                        // declared destinations, and the source's own destination when the stage builds it).
                        if let entityMapping = stage?.passes[p][m] {
                            var created = Set(entityMapping.destinationEntities)
                            if let d = mapping.entities.first(where: { $0.sourceName == entityMapping.sourceEntity })?.destinationName,
                               stepPlan.kinds[d] == .built {
                                created.insert(d)
                            }
                            destinations = created.count
                        }
                    case .relationships(let p, let m):
                        // A closure policy without a relationship closure, whose entity has no relationship
                        // to carry over, makes no links: the pass is one empty commit.
                        if let entityMapping = stage?.passes[p][m], Self.relationshipPassIsEmpty(entityMapping, source: source, mapping: mapping) {
                            records = 0
                        }
                    default: break
                    }
                    estimate += MigrationCostModel.estimate(task, records: records, recordBytes: calibration.recordBytes(entity),
                                                            destinations: destinations, calibration: calibration, batchSize: batchSize)
                }
                steps.append(MigrationExplanation.Step(
                    source: source.versionIdentifier, destination: target.versionIdentifier, isCustom: isCustom,
                    mapping: mapping, diagnostics: [], tasks: stepPlan.tasks.map(\.description),
                    rewritesRecords: stepPlan.tasks.contains { if case .rewrite = $0 { return true }; if case .instances = $0 { return true }; return false },
                    recordCounts: counts, recordsTouched: touched, recordsTouchedIsLowerBound: lowerBound,
                    entityHandling: stepPlan.kinds.mapValues { kind in
                        switch kind {
                        case .carried: "metadata"
                        case .rewritten: "rewritten"
                        case .built: "created"
                        }
                    },
                    backgroundIndexes: stepPlan.destinationCatalog.indexes.filter { stepPlan.backgroundIndexes.contains($0.tag) }.compactMap { index in
                        stepPlan.destinationCatalog.entity(tag: index.entityTag).map { "\($0.name).\(index.attribute)" }
                    },
                    bytesToWrite: Int(estimate.bytes.rounded()), estimatedSeconds: estimate.seconds))
                counts = after
                catalog = stepPlan.destinationCatalog
            } catch let error as MigrationError {
                var diagnostics: [MigrationDiagnostic] = []
                if error.code == .cannotInfer { diagnostics = error.diagnostics }
                steps.append(MigrationExplanation.Step(
                    source: source.versionIdentifier, destination: target.versionIdentifier, isCustom: isCustom,
                    mapping: nil, diagnostics: diagnostics, tasks: [], rewritesRecords: false, recordCounts: counts,
                    recordsTouched: 0, recordsTouchedIsLowerBound: true, entityHandling: [:]))
                counts = [:]
                catalog = Catalog.initial(for: target)
            }
            source = target
        }
        return MigrationExplanation(storeVersion: header.identity.versionIdentifier, isUpToDate: false, steps: steps,
                                    calibration: calibration, versionsThatCanOpen: canOpen)
    }

    /// Whether a mapping's relationship pass makes no links (what the step runner skips).
    private static func relationshipPassIsEmpty(_ m: EntityMapping, source: Schema, mapping: InferredMapping) -> Bool {
        guard let policy = m.policy as? ClosurePolicy, policy.relationships == nil else { return false }
        guard let entity = source.entity(named: m.sourceEntity),
              let destName = mapping.entities.first(where: { $0.sourceName == m.sourceEntity })?.destinationName,
              let plan = mapping.entity(destName) else { return true }
        return !entity.relationships.contains { sr in plan.relationships.contains { $0.sourceName == sr.name } }
    }

    /// The object counts after a step: carried over for entities that keep their objects, zero for new
    /// entities, and for entities a custom stage creates, one object per object of every source entity whose
    /// mapping creates them (an estimate: a policy may create more, fewer, or none).
    private static func nextCounts(_ counts: [String: MigrationExplanation.ObjectCount], mapping: InferredMapping,
                                   kinds: [String: StepPlan.EntityKind], stage: MigrationStage?, step: String) -> [String: MigrationExplanation.ObjectCount] {
        var next: [String: MigrationExplanation.ObjectCount] = [:]
        for e in mapping.entities {
            guard let d = e.destinationName else { continue }
            guard kinds[d] == .built else {
                next[d] = e.sourceName.flatMap { counts[$0] } ?? MigrationExplanation.ObjectCount(0)
                continue
            }
            var total = 0
            var sources: [String] = []
            for m in (stage?.passes ?? []).flatMap({ $0 }) {
                let matched = mapping.entities.first { $0.sourceName == m.sourceEntity }?.destinationName
                guard m.destinationEntities.contains(d) || matched == d else { continue }
                total += counts[m.sourceEntity]?.value ?? 0
                sources.append(m.sourceEntity)
            }
            next[d] = sources.isEmpty
                ? MigrationExplanation.ObjectCount(0)
                : MigrationExplanation.ObjectCount(total, basis: "one per \(sources.joined(separator: " and ")) object of the custom stage \(step)")
        }
        return next
    }
}
