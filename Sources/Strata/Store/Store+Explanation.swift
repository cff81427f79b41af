import Foundation

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
        let keyChange = try environment.read { try KeyRotation.remaining(header.meta, in: $0) }
        guard case .migrate(let targets) = decision else {
            return MigrationExplanation(storeVersion: header.identity.versionIdentifier, isUpToDate: true, steps: [],
                                        versionsThatCanOpen: canOpen, valuesUnderPreviousKey: keyChange.underPreviousKey,
                                        valuesToEncrypt: keyChange.toEncrypt, valuesToDecrypt: keyChange.toDecrypt)
        }
        let preparation = MonotonicClock.now() - begun
        let calibration = try MigrationCalibration.measure(environment: environment, header: header, schema: recorded)
        var steps: [MigrationExplanation.Step] = []
        var source = recorded
        var catalog = header.catalog
        var building = try environment.read { try MaintenanceRecord.read(header.meta, in: $0).buildingIndexes }
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
                try DeclaredMappingValidation.validate(stage, source: source, destination: target, mapping: mapping)
                let stepPlan = try StepPlanner.plan(source: source, sourceCatalog: catalog, destination: target, mapping: mapping,
                                                    stage: stage, maximumLayouts: configuration.migration.maximumLayoutsPerEntity,
                                                    indexesInBackground: configuration.migration.buildsIndexesInBackground,
                                                    buildingIndexes: building)
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
                    var kind = MigrationCostModel.MappingKind.dynamic
                    var sourceDecodedAhead = false
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
                            kind = entityMapping.declaration != nil ? .declared : entityMapping.policy is any TypedPolicy ? .typed : .dynamic
                            sourceDecodedAhead = entityMapping.decodesSourceAhead(inRelationshipPass: false, options: configuration.migration)
                        }
                    case .relationships(let p, let m):
                        // A closure policy without a relationship closure, whose entity has no relationship
                        // to carry over, makes no links: the pass is one empty commit.
                        if let entityMapping = stage?.passes[p][m] {
                            if Self.relationshipPassIsEmpty(entityMapping, source: source, mapping: mapping) { records = 0 }
                            sourceDecodedAhead = entityMapping.decodesSourceAhead(inRelationshipPass: true, options: configuration.migration)
                        }
                    default: break
                    }
                    estimate += MigrationCostModel.estimate(task, records: records, recordBytes: calibration.recordBytes(entity),
                                                            destinations: destinations, kind: kind, sourceDecodedAhead: sourceDecodedAhead,
                                                            calibration: calibration, options: configuration.migration)
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
                building = building.intersection(catalog.indexes.map(\.tag)).union(stepPlan.backgroundIndexes)
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
                                    calibration: calibration, versionsThatCanOpen: canOpen, valuesUnderPreviousKey: keyChange.underPreviousKey,
                                        valuesToEncrypt: keyChange.toEncrypt, valuesToDecrypt: keyChange.toDecrypt)
    }

    /// Whether a mapping's relationship pass makes no links (what the step runner skips).
    private static func relationshipPassIsEmpty(_ m: EntityMapping, source: Schema, mapping: InferredMapping) -> Bool {
        guard m.linksAsInferred else { return false }
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
