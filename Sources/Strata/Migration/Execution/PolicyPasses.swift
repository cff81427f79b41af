import Foundation

/// The instance and relationship passes of a custom stage's entity mappings, run by the step runner.
extension StepRunner {
    func runInstances(pass: Int, mapping index: Int) throws {
        try runPass(pass: pass, mapping: index, phase: .instances, bytesPerObject: 256) { runner, txn, writer, m in
            try InstanceMigrationContext(runner: runner, txn: txn, writer: writer, mapping: m)
        } visit: { m, object, context in
            context.current = object
            try m.policy.createDestinationInstances(for: object, in: context)
        }
    }

    func runRelationships(pass: Int, mapping index: Int) throws {
        if let stage, pass < stage.passes.count, index < stage.passes[pass].count,
           try relationshipPassIsEmpty(stage.passes[pass][index]) {
            return try single { _, _ in }
        }
        try runPass(pass: pass, mapping: index, phase: .relationships, bytesPerObject: 128) { runner, txn, writer, _ in
            try RelationshipMigrationContext(runner: runner, txn: txn, writer: writer)
        } visit: { m, object, context in
            try m.policy.createRelationships(for: object, in: context)
        }
    }

    /// Whether a mapping's relationship pass would do nothing: its policy is the closure form without a
    /// relationship closure (so it runs the inferred linking), and no relationship of the source entity maps
    /// to a destination relationship.
    private func relationshipPassIsEmpty(_ m: EntityMapping) throws -> Bool {
        guard let policy = m.policy as? ClosurePolicy, policy.relationships == nil else { return false }
        let source = try self.source.entity(m.sourceEntity)
        guard let destName = mapping.entities.first(where: { $0.sourceName == m.sourceEntity })?.destinationName,
              let plan = mapping.entity(destName) else { return true }
        return !source.relationships.contains { sr in plan.relationships.contains { $0.sourceName == sr.name } }
    }

    /// Visits every source object of one entity mapping of a pass, in batches, with a context (one per
    /// transaction) that writes destination objects and links.
    private func runPass<Context: MigrationContext>(
        pass: Int, mapping index: Int, phase: MigrationProgress.Phase, bytesPerObject: Int,
        makeContext: (StepRunner, Transaction, WriteContext, EntityMapping) throws -> Context,
        visit: (EntityMapping, DynamicObject, Context) throws -> Void
    ) throws {
        guard let stage, pass < stage.passes.count, index < stage.passes[pass].count else { return try single { _, _ in } }
        let m = stage.passes[pass][index]
        currentPass = pass
        let binding = try source.entity(m.sourceEntity)
        let total = try environment.read { try $0.entryCount(binding.dbi) }
        var context: Context? = nil
        try batched(over: binding.dbi, phase: phase, entity: m.sourceEntity, total: total) { txn, e, id, _ in
            if context == nil || context?.txn !== txn {
                let writer = WriteContext(txn: txn, model: self.destinationForWrites, recordsHistory: false)
                writer.checksMinimumCounts = false
                context = try makeContext(self, txn, writer, m)
            }
            guard let context else { return 0 }
            let object = DynamicObject(id: ObjectID(rawValue: id), binding: binding, values: try binding.decodeValues(e.value, id: id))
            do {
                try visit(m, object, context)
            } catch {
                throw self.stageFailure(error, entity: m.sourceEntity, object: object.id)
            }
            return bytesPerObject
        } beforeCommit: { _ in
            try context?.writer.finish()
        }
    }
}
