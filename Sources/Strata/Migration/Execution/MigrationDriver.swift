import Foundation
import Logging

/// Runs migration steps — a new step from the store's model to a destination, or the rest of an interrupted
/// one — and reads back where the store stands for the errors of failed migrations. What to run is decided by
/// ``OpenDecision`` and sequenced by ``StoreOpening``.
struct MigrationDriver {
    let environment: Environment
    let schema: Schema
    let plan: MigrationPlan?
    let options: MigrationOptions
    var path: String { environment.path }

    func readHeader() throws -> StoreHeader {
        try environment.read { try StoreHeader.read(in: $0, path: path) }
    }

    /// Where the store stands, as its metadata records it (for the errors of failed migrations).
    func storeState() -> MigrationError.StoreState {
        do {
            return try environment.read { txn in
                let header = try StoreHeader.read(in: txn, path: path)
                if let journal = try header.meta.read(.journal, in: txn, MigrationJournal.decode) {
                    if journal.currentTask == .didMigrate { return .switched(version: header.identity.versionIdentifier) }
                    return .migrating(source: journal.sourceVersion, destination: journal.destinationVersion)
                }
                return .at(version: header.identity.versionIdentifier)
            }
        } catch {
            return .unknown(reason: "\(error)")
        }
    }

    /// Continues a step a crash interrupted, to `destination` (what ``OpenDecision`` found the app leads to).
    func resume(_ journal: MigrationJournal, to destination: Schema, header: StoreHeader) throws {
        let stage = plan?.stage(from: journal.sourceVersion, to: journal.destinationVersion)
        let switched = journal.currentTask == .didMigrate
        let source = switched ? destination : try environment.read { try header.recordedSchema(in: $0) }
        let mapping = try inferMapping(source: source, destination: destination, stage: stage)
        if !switched { try DeclaredMappingValidation.validate(stage, source: source, destination: destination, mapping: mapping) }
        // Planned with the options the step began with, so that the kinds match the journal's catalog and tasks.
        let stepPlan = try StepPlanner.plan(source: source, sourceCatalog: header.catalog, destination: destination, mapping: mapping,
                                            stage: stage, maximumLayouts: journal.maximumLayouts ?? 1,
                                            indexesInBackground: journal.indexesInBackground ?? false,
                                            buildingIndexes: try buildingIndexes(header))
        let runner = try StepRunner(environment: environment, header: header, sourceSchema: source, destinationSchema: destination,
                                    mapping: mapping, stage: stage, journal: journal, kinds: stepPlan.kinds,
                                    options: options, stepIndex: 0, stepCount: 1)
        try runner.run()
    }

    /// The indexes the store's maintenance is still building (the maintenance record changes only at a step's
    /// switch, so a resumed step reads the set it began with).
    func buildingIndexes(_ header: StoreHeader) throws -> Set<UInt32> {
        try environment.read { try MaintenanceRecord.read(header.meta, in: $0).buildingIndexes }
    }

    func inferMapping(source: Schema, destination: Schema, stage: MigrationStage?) throws -> InferredMapping {
        let intermediates = plan?.schemas(between: source.versionIdentifier, and: destination.versionIdentifier) ?? []
        return try InferredMapping.infer(
            from: source, to: destination, through: intermediates,
            scriptedEntities: Set(stage?.scripts.map(\.entity) ?? []),
            policyEntities: Set(stage?.passes.flatMap { $0 }.map(\.sourceEntity) ?? []))
    }

    /// Runs one step from the store's recorded model to `destination`.
    func runStep(to destination: Schema, index: Int, count: Int) throws {
        let header = try readHeader()
        let source = try environment.read { try header.recordedSchema(in: $0) }
        let stage = plan?.stage(from: source.versionIdentifier, to: destination.versionIdentifier)
        let mapping = try inferMapping(source: source, destination: destination, stage: stage)
        // Declared mappings are checked against both models before anything is written.
        try DeclaredMappingValidation.validate(stage, source: source, destination: destination, mapping: mapping)
        let stepPlan = try StepPlanner.plan(source: source, sourceCatalog: header.catalog, destination: destination,
                                            mapping: mapping, stage: stage, maximumLayouts: options.maximumLayoutsPerEntity,
                                            indexesInBackground: options.buildsIndexesInBackground,
                                            buildingIndexes: try buildingIndexes(header))
        options.logger.debug("migration step \(index + 1)/\(count): \(source.versionIdentifier) → \(destination.versionIdentifier), \(stage.map { $0.isLightweight ? "inferred" : "custom stage" } ?? "inferred"), tasks: \(stepPlan.tasks.map(\.description).joined(separator: ", "))")
        // What Core Data's MigrationDebug prints: each entity mapping and how its properties are filled.
        for entity in mapping.entities {
            let kind = entity.destinationName.flatMap { stepPlan.kinds[$0] }.map { "\($0)" } ?? "removed"
            options.logger.debug("  entity mapping \(entity.sourceName ?? "(none)") → \(entity.destinationName ?? "(none)") [\(kind)]")
            for a in entity.attributes { options.logger.debug("    attribute \(a)") }
            for a in entity.droppedAttributes { options.logger.debug("    attribute \(a): dropped") }
            for r in entity.relationships { options.logger.debug("    relationship \(r)") }
            for r in entity.droppedRelationships { options.logger.debug("    relationship \(r): dropped") }
        }
        let journal = try StepRunner.begin(environment: environment, header: header, source: source, destination: destination,
                                           plan: stepPlan, stage: stage)
        let runner = try StepRunner(environment: environment, header: header, sourceSchema: source,
                                    destinationSchema: destination, mapping: mapping, stage: stage, journal: journal,
                                    kinds: stepPlan.kinds, options: options, stepIndex: index, stepCount: count)
        try runner.run()
    }
}
