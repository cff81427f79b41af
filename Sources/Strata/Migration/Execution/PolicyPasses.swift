import Foundation

/// The instance and relationship passes of a custom stage's entity mappings, run by the step runner.
extension StepRunner {
    func runInstances(pass: Int, mapping index: Int) throws {
        if let stage, pass < stage.passes.count, index < stage.passes[pass].count,
           let declaration = stage.passes[pass][index].declaration {
            // A declared mapping: a streaming copy of records, in the same batches as every policy.
            let copy = try StreamingCopy(declaration, sourceEntity: stage.passes[pass][index].sourceEntity, runner: self)
            return try runPass(pass: pass, mapping: index, phase: .instances) { runner, txn, writer, m in
                try MigrationContext(runner: runner, txn: txn, writer: writer, associatesInRuns: runner.associatesInRuns(m))
            } visit: { source, context in
                try copy.copy(source, context)
            }
        }
        // The policy is taken out of its enum once, not per object (each time would copy it: a retain and a release).
        let visit: (SourceRecord, InstanceMigrationContext) throws -> Void
        var readAhead: (any StoppableReadAhead)? = nil
        defer { readAhead?.stop() }
        switch passPolicy(pass: pass, mapping: index) {
        case .records(let policy)?:
            if let binding = try sourceDecodedAhead(pass: pass, mapping: index, relationships: false),
               let ahead = policy.instanceVisitDecodingAhead(runner: self, binding: binding) {
                readAhead = ahead.reader
                visit = ahead.visit
            } else {
                visit = { source, context in
                    context.current = .record(source)
                    try policy.createDestinationInstances(for: source, in: context)
                }
            }
        case .objects(let policy)?:
            let reader = try sourceDecodedAhead(pass: pass, mapping: index, relationships: false).map(objectReadAhead)
            readAhead = reader
            visit = { source, context in
                context.current = .record(source)
                if let values = reader?.take(source.id) {
                    return try Self.withObject(source, decodedAhead: values) { try policy.createDestinationInstances(for: $0, in: context) }
                }
                let object = try source.object(reusing: &context.sourceValues)
                try policy.createDestinationInstances(for: object, in: context)
                context.sourceValues = object.values
            }
        case nil:
            visit = { _, _ in }
        }
        try runPass(pass: pass, mapping: index, phase: .instances, makeContext: { runner, txn, writer, m in
            try InstanceMigrationContext(runner: runner, txn: txn, writer: writer, mapping: m, associatesInRuns: runner.associatesInRuns(m))
        }, visit: visit)
    }

    func runRelationships(pass: Int, mapping index: Int) throws {
        if let stage, pass < stage.passes.count, index < stage.passes[pass].count,
           try relationshipPassIsEmpty(stage.passes[pass][index]) {
            // Nothing to link: the pass is recorded as done, and reported as complete.
            let entity = stage.passes[pass][index].sourceEntity
            let total = try environment.read { try $0.entryCount(try source.entity(entity).dbi) }
            try single { _, _ in }
            return report(.relationships, entity: entity, completed: total, total: total, pass: pass)
        }
        let visit: (SourceRecord, RelationshipMigrationContext) throws -> Void
        var readAhead: (any StoppableReadAhead)? = nil
        defer { readAhead?.stop() }
        switch passPolicy(pass: pass, mapping: index) {
        case .records(let policy)?:
            if let binding = try sourceDecodedAhead(pass: pass, mapping: index, relationships: true),
               let ahead = policy.relationshipVisitDecodingAhead(runner: self, binding: binding) {
                readAhead = ahead.reader
                visit = ahead.visit
            } else {
                visit = { source, context in try policy.createRelationships(for: source, in: context) }
            }
        case .objects(let policy)?:
            let reader = try sourceDecodedAhead(pass: pass, mapping: index, relationships: true).map(objectReadAhead)
            readAhead = reader
            visit = { source, context in
                if let values = reader?.take(source.id) {
                    return try Self.withObject(source, decodedAhead: values) { try policy.createRelationships(for: $0, in: context) }
                }
                try policy.createRelationships(for: try source.object(), in: context)
            }
        case nil: visit = { _, _ in }
        }
        try runPass(pass: pass, mapping: index, phase: .relationships, makeContext: { runner, txn, writer, _ in
            try RelationshipMigrationContext(runner: runner, txn: txn, writer: writer)
        }, visit: visit)
    }

    /// The source entity of mapping `index` of pass `pass` when that pass (`relationships`: the relationship pass)
    /// decodes its objects ahead on another thread (``SourceReadAhead``), else nil. It does where the options allow it
    /// on this device and the mapping's pass reads ahead (``EntityMapping/decodesSourceAhead(inRelationshipPass:options:)``),
    /// when the step writes no destination object into the source entity's database (it never does: a mapped
    /// entity gets a new one; checked rather than assumed, since the reading thread's snapshot must be what the
    /// writer reads).
    private func sourceDecodedAhead(pass: Int, mapping index: Int, relationships: Bool) throws -> EntityBinding? {
        guard let stage, stage.passes[pass][index].decodesSourceAhead(inRelationshipPass: relationships, options: options) else {
            return nil
        }
        let binding = try source.entity(stage.passes[pass][index].sourceEntity)
        return destinationForWrites.entities.contains { $0.dbi == binding.dbi } ? nil : binding
    }

    /// Runs `body` with the object `source` whose values the reader decoded ahead into `values` (its slot): the array
    /// is moved into the object for the call and back into the slot after it, not copied. The object is made here,
    /// not by the reading thread: both threads would count references to the binding.
    @inline(__always)
    private static func withObject(_ source: SourceRecord, decodedAhead values: UnsafeMutablePointer<[Value]>,
                                   _ body: (DynamicObject) throws -> Void) throws {
        var object = DynamicObject(id: ObjectID(rawValue: source.id), binding: source.binding, values: [])
        swap(&object.values, &values.pointee)
        defer { swap(&object.values, &values.pointee) }
        try body(object)
    }

    /// A reader that decodes `binding`'s source objects ahead into their attribute values, for a dynamic policy.
    private func objectReadAhead(_ binding: EntityBinding) -> SourceReadAhead<[Value]> {
        SourceReadAhead(environment: environment, model: source, dbi: binding.dbi) { _, id, bytes, slot in
            slot.initialize(to: try binding.decodeValues(bytes, id: id))
        }
    }

    /// How the passes hand objects to mapping `index` of pass `pass` (nil when the stage has no such mapping).
    private func passPolicy(pass: Int, mapping index: Int) -> PassPolicy? {
        guard let stage, pass < stage.passes.count, index < stage.passes[pass].count else { return nil }
        return PassPolicy(stage.passes[pass][index].policy)
    }

    /// Whether a mapping's relationship pass would do nothing: its policy is the closure form without a
    /// relationship closure (so it runs the inferred linking), and no relationship of the source entity maps
    /// to a destination relationship.
    private func relationshipPassIsEmpty(_ m: EntityMapping) throws -> Bool {
        guard m.linksAsInferred else { return false }
        let source = try self.source.entity(m.sourceEntity)
        guard let destName = mapping.entities.first(where: { $0.sourceName == m.sourceEntity })?.destinationName,
              let plan = mapping.entity(destName) else { return true }
        return !source.relationships.contains { sr in plan.relationships.contains { $0.sourceName == sr.name } }
    }

    /// Visits every source object of one entity mapping of a pass, in batches, with a context (one per
    /// transaction) that writes destination objects and links.
    private func runPass<Context: MigrationContext>(
        pass: Int, mapping index: Int, phase: MigrationProgress.Phase,
        makeContext: (StepRunner, Transaction, WriteContext, EntityMapping) throws -> Context,
        visit: (SourceRecord, Context) throws -> Void
    ) throws {
        guard let stage, pass < stage.passes.count, index < stage.passes[pass].count else { return try single { _, _ in } }
        let m = stage.passes[pass][index]
        currentPass = pass
        let binding = try source.entity(m.sourceEntity)
        let total = try environment.read { try $0.entryCount(binding.dbi) }
        // One context per transaction. `context` keeps it (and through it its transaction, so the identifier of
        // the transaction it was made for is not reused while it lives); each visit borrows it through `current`
        // without counting a reference.
        var context: Context? = nil
        var current: (transaction: ObjectIdentifier, context: Unmanaged<Context>)? = nil
        try batched(over: binding.dbi, phase: phase, entity: m.sourceEntity, total: total) { txn, e, id, _ in
            if current?.transaction != ObjectIdentifier(txn) {
                let writer = WriteContext(txn: txn, model: self.destinationForWrites, recordsHistory: false, recordsChanges: false)
                writer.checksMinimumCounts = false
                let made = try makeContext(self, txn, writer, m)
                context = made
                current = (ObjectIdentifier(txn), Unmanaged.passUnretained(made))
            }
            guard let current else { return 0 }
            return try current.context._withUnsafeGuaranteedRef { context in
                let before = context.writer.bytesWritten
                do {
                    try visit(SourceRecord(id: id, bytes: e.value, binding: binding), context)
                } catch {
                    throw self.stageFailure(error, entity: m.sourceEntity, object: ObjectID(rawValue: id))
                }
                // What the policy wrote, and the source's association entries and lookup tables.
                return context.writer.bytesWritten - before + WriteContext.entryOverhead
            }
        } beforeCommit: { _ in
            try context?.storeOpenRuns()
            try context?.writer.finish()
        }
    }

    /// Whether a mapping's associations can be kept as runs (``AssociationRun``): no other mapping of the stage
    /// reads its source entity, so no two runs of one destination entity cover the same source object.
    func associatesInRuns(_ m: EntityMapping) -> Bool {
        guard let stage else { return false }
        return stage.passes.joined().count { $0.sourceEntity == m.sourceEntity } == 1
    }
}

/// How a pass hands each source object to a mapping's policy, decided once per pass (not per object): as its
/// record, to a policy that decodes it itself (typed mappings), or decoded as a ``DynamicObject``.
enum PassPolicy {
    case records(any RecordReadingPolicy)
    case objects(any EntityMigrationPolicy)

    init(_ policy: any EntityMigrationPolicy) {
        if let reading = policy as? any RecordReadingPolicy { self = .records(reading) } else { self = .objects(policy) }
    }
}
