import CStrataLMDB
import Foundation

/// What a custom stage's policies can do, common to both passes: read the source objects and their
/// relationships (under the source model), find the destination objects made from a source object, and use
/// lookup tables shared by the whole stage.
///
/// Associations (source object → destination objects) and lookup tables are stored in the store, in
/// databases of the migration, not in memory: a stage's memory does not grow with the store, and a stage
/// resumed after a crash still finds them.
public class MigrationContext {
    let runner: StepRunner
    let txn: Transaction
    let sourceReader: ReadContext
    let writer: WriteContext
    let associations: MDB_dbi
    let lookups: MDB_dbi

    init(runner: StepRunner, txn: Transaction, writer: WriteContext) throws {
        self.runner = runner
        self.txn = txn
        self.writer = writer
        self.sourceReader = ReadContext(txn: txn, model: runner.source)
        guard let a = try txn.openDatabase(StepRunner.associationDatabase, flags: LMDBFlags.dupSort | LMDBFlags.dupFixed, create: false),
              let l = try txn.openDatabase(StepRunner.lookupDatabase, flags: 0, create: false) else {
            throw StoreError.corrupted(path: runner.path, reason: .metadata("the migration's association databases are missing"))
        }
        associations = a
        lookups = l
    }

    /// The step's source and destination models.
    public var sourceSchema: Schema { runner.sourceSchema }
    public var destinationSchema: Schema { runner.destinationSchema }

    /// The source objects linked to `object` through `relationship` (source model names).
    public func related(_ object: DynamicObject, _ relationship: String) throws -> [DynamicObject] {
        try sourceReader.relatedObjects(object, relationship)
    }

    /// A source object.
    public func sourceObject(_ id: ObjectID, of entity: String) throws -> DynamicObject? {
        try sourceReader.object(id, of: entity)
    }

    /// The destination objects made from source object `source` (optionally only those of `entity`): the
    /// objects a policy created from it, and the object that kept its identifier (every object of a source
    /// entity the stage does not map with a policy, and objects inserted with `keepingSourceID`).
    public func destinations(for source: ObjectID, entity: String? = nil) throws -> [ObjectID] {
        let candidates = try entity.map { [try runner.destination.entity($0)] } ?? runner.destination.entities
        var out: [UInt64] = []
        // The object that kept the source's identifier, if any (one get per candidate entity).
        for binding in candidates where try writer.exists(source.rawValue, binding) {
            out.append(source.rawValue)
            break
        }
        let tag = entity != nil ? candidates.first?.tag : nil
        let cursor = try txn.sharedCursor(associations)
        try ObjectKey.with(source.rawValue) { key in
            guard var entry = try cursor.find(key) else { return }
            while true {
                let (t, id) = try MigrationContext.decodeReference(entry.value)
                if (tag == nil || tag == t) && id != source.rawValue { out.append(id) }
                guard let next = try cursor.nextDuplicate() else { break }
                entry = next
            }
        }
        return out.map(ObjectID.init(rawValue:))
    }

    /// Links destination object `id` of `entity` to `target` through `relationship` (destination names); the
    /// inverse is linked too. Both objects must exist: in the instance pass, objects this policy created
    /// (so a policy can link the objects it makes of one source object as it makes them) or objects of
    /// entities the stage does not rebuild; in the relationship pass, any destination object.
    public func link(_ id: ObjectID, of entity: String, _ relationship: String, to target: ObjectID) throws {
        let binding = try runner.destinationForWrites.entity(entity)
        let r = try binding.relationship(relationship)
        try writer.link(binding, r, id.rawValue, target.rawValue)
    }

    /// A new, unsaved object of a destination entity with its default values, to fill through its subscript
    /// and pass to ``InstanceMigrationContext/insert(_:keepingSourceID:)``.
    public func makeObject(_ entity: String) throws -> DynamicObject {
        let binding = try runner.destinationForWrites.entity(entity)
        return DynamicObject(id: ObjectID(rawValue: 0), binding: binding, values: binding.initialValues)
    }

    /// The destination object a lookup table holds for `key`.
    public func lookup(_ table: String, _ key: Value) throws -> ObjectID? {
        let k = try lookupKey(table, key)
        return try k.withUnsafeBytes { kb -> ObjectID? in
            guard let value = try txn.get(lookups, key: kb) else { return nil }
            return ObjectID(rawValue: try MigrationContext.decodeReference(value).1)
        }
    }

    /// Records `id` for `key` in a lookup table.
    public func setLookup(_ table: String, _ key: Value, to id: ObjectID) throws {
        let k = try lookupKey(table, key)
        let v = MigrationContext.encodeReference(tag: 0, id: id.rawValue)
        try k.withUnsafeBytes { kb in try v.withUnsafeBytes { vb in _ = try txn.put(lookups, key: kb, value: vb) } }
    }

    /// A destination object of the entity a mapping creates.
    public func destinationObject(_ id: ObjectID, of entity: String) throws -> DynamicObject? {
        try writer.object(id.rawValue, try runner.destination.entity(entity))
    }

    private func lookupKey(_ table: String, _ key: Value) throws -> [UInt8] {
        guard !table.isEmpty, table.utf8.count <= 32 else {
            throw StoreError.keyTooLong(length: table.utf8.count, maximum: 32)
        }
        return Array(table.utf8) + [0] + IndexKey.encode(key)
    }

    /// A destination object as stored in associations and lookup tables: entity tag and identifier,
    /// 12 bytes big-endian.
    struct Reference {
        var bytes: (UInt32, UInt32, UInt32)
        init(tag: UInt32, id: UInt64) {
            bytes = (tag.bigEndian, UInt32(truncatingIfNeeded: id >> 32).bigEndian, UInt32(truncatingIfNeeded: id).bigEndian)
        }
    }

    static func encodeReference(tag: UInt32, id: UInt64) -> [UInt8] {
        var reference = Reference(tag: tag, id: id)
        return withUnsafeBytes(of: &reference.bytes) { Array($0) }
    }

    static func decodeReference(_ bytes: UnsafeRawBufferPointer) throws -> (UInt32, UInt64) {
        guard bytes.count == 12 else { throw DecodeFailure("association of \(bytes.count) bytes") }
        return (UInt32(bigEndian: bytes.loadUnaligned(as: UInt32.self)),
                UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt64.self)))
    }

    /// The destination entity that matches a source entity (same name or renamed from it).
    func matchedDestination(of sourceEntity: String) -> String? {
        runner.mapping.entities.first { $0.sourceName == sourceEntity }?.destinationName
    }

    /// The values the inferred mapping gives a source object in its matched destination entity.
    public func inferredValues(for source: DynamicObject) throws -> [String: Value] {
        let object = try inferredObject(for: source)
        var out: [String: Value] = [:]
        for (i, name) in object.binding.attributeNames.enumerated() where !object.binding.entity.attributes[i].isTransient {
            out[name] = object.values[i]
        }
        return out
    }

    /// The object the inferred mapping makes of a source object in its matched destination entity, with the
    /// source's identifier: change what differs, then pass it to
    /// ``InstanceMigrationContext/insert(_:keepingSourceID:)``. Cheaper than ``inferredValues(for:)`` for
    /// entities with many attributes.
    public func inferredObject(for source: DynamicObject) throws -> DynamicObject {
        let program = try runner.inference(for: source.binding)
        var values = program.destination.initialValues
        for step in program.steps {
            var v = RecordTranscoder.convert(source.values[step.source], step.conversion)
            if v.isNull, let r = step.nullReplacement { v = r }
            values[step.destination] = v
        }
        for (a, v) in program.constants { values[a] = v }
        return DynamicObject(id: source.id, binding: program.destination, values: values)
    }
}

/// How the inferred mapping fills a destination entity's attributes from a source object, compiled once per
/// source entity for a step.
struct InferenceProgram {
    struct Step {
        let source: Int
        let destination: Int
        let conversion: AttributeMappingPlan.Conversion?
        let nullReplacement: Value?
    }
    let destination: EntityBinding
    let steps: [Step]
    let constants: [(Int, Value)]
}

extension StepRunner {
    /// The inference program for a source entity (compiled on first use).
    func inference(for source: EntityBinding) throws -> InferenceProgram {
        if let cached = inferencePrograms[source.name] { return cached }
        guard let destName = mapping.entities.first(where: { $0.sourceName == source.name })?.destinationName,
              let plan = mapping.entity(destName) else {
            throw StoreError.unknownEntity("(no destination entity matches \(source.name))")
        }
        let destination = try destinationForWrites.entity(destName)
        var steps: [InferenceProgram.Step] = []
        var constants: [(Int, Value)] = []
        for m in plan.attributes {
            guard let d = destination.attributeIndex[m.name] else { continue }
            switch m.origin {
            case .added(let v): constants.append((d, v))
            case .scripted: constants.append((d, .null))
            case .source(let s):
                guard let si = source.attributeIndex[s] else { continue }
                steps.append(.init(source: si, destination: d, conversion: m.conversion, nullReplacement: m.nullReplacement))
            }
        }
        let program = InferenceProgram(destination: destination, steps: steps, constants: constants)
        inferencePrograms[source.name] = program
        return program
    }
}

/// What an ``EntityMigrationPolicy`` can do in the instance pass: create destination objects.
public final class InstanceMigrationContext: MigrationContext {
    let mapping: EntityMapping
    let allowedEntities: Set<String>
    var current: DynamicObject?

    init(runner: StepRunner, txn: Transaction, writer: WriteContext, mapping: EntityMapping) throws {
        self.mapping = mapping
        var allowed = Set(mapping.destinationEntities)
        if let matched = runner.mapping.entities.first(where: { $0.sourceName == mapping.sourceEntity })?.destinationName {
            allowed.insert(matched)
        }
        self.allowedEntities = allowed
        try super.init(runner: runner, txn: txn, writer: writer)
    }

    /// Creates a destination object of `entity` (one of the mapping's destination entities) made from the
    /// current source object. With `keepingSourceID`, it takes the source object's identifier (at most one
    /// destination object per entity may).
    @discardableResult
    public func insert(_ entity: String, _ values: [String: Value] = [:], keepingSourceID: Bool = false) throws -> ObjectID {
        let binding = try allowedBinding(entity)
        var row = binding.initialValues
        for (name, value) in values {
            guard let i = binding.attributeIndex[name] else { throw StoreError.unknownAttribute(entity: entity, name: name) }
            row[i] = value
        }
        return try insertRow(binding, &row, keepingSourceID: keepingSourceID)
    }

    /// Creates a destination object from a ``DynamicObject`` of a destination entity, such as the one
    /// ``MigrationContext/inferredObject(for:)`` returns, changed by the policy.
    @discardableResult
    public func insert(_ object: DynamicObject, keepingSourceID: Bool = true) throws -> ObjectID {
        try object.checkAssignments()
        let binding = try allowedBinding(object.entityName)
        guard binding === object.binding || binding.attributeNames == object.binding.attributeNames else {
            throw StoreError.typeMismatch(expected: "an object of the destination model's \(binding.name)", actual: "another model's")
        }
        var row = object.values
        return try insertRow(binding, &row, keepingSourceID: keepingSourceID)
    }

    private func insertRow(_ binding: EntityBinding, _ row: inout [Value], keepingSourceID: Bool) throws -> ObjectID {
        let id: UInt64
        if keepingSourceID, let source = current {
            // The object that keeps the source's identifier is found without an association entry.
            try writer.reserveIDs(through: source.id.rawValue)
            id = try writer.insertRow(binding, &row, id: source.id.rawValue)
        } else {
            id = try writer.insertRow(binding, &row, id: nil)
            if let source = current {
                var reference = MigrationContext.Reference(tag: binding.tag, id: id)
                try ObjectKey.with(source.id.rawValue) { k in
                    try withUnsafeBytes(of: &reference.bytes) { vb in
                        _ = try txn.put(associations, key: k, value: vb, flags: LMDBFlags.noDupData)
                    }
                }
            }
        }
        return ObjectID(rawValue: id)
    }

    /// Creates the destination object the inferred mapping would: the matched destination entity, inferred
    /// values, the source's identifier. Returns nil when no destination entity matches.
    @discardableResult
    public func insertInferred(for source: DynamicObject) throws -> ObjectID? {
        guard matchedDestination(of: source.entityName) != nil else { return nil }
        return try insert(try inferredObject(for: source), keepingSourceID: true)
    }

    /// The object of a lookup table for `key`, creating it (not associated with any source object) when the
    /// table has none: one `Author` per distinct name.
    public func lookupOrInsert(_ table: String, key: Value, entity: String, values: [String: Value]) throws -> ObjectID {
        if let existing = try lookup(table, key) { return existing }
        let binding = try allowedBinding(entity)
        var row = binding.initialValues
        for (name, value) in values {
            guard let i = binding.attributeIndex[name] else { throw StoreError.unknownAttribute(entity: entity, name: name) }
            row[i] = value
        }
        let id = ObjectID(rawValue: try writer.insertRow(binding, &row, id: nil))
        try setLookup(table, key, to: id)
        return id
    }

    private func allowedBinding(_ entity: String) throws -> EntityBinding {
        guard allowedEntities.contains(entity) else {
            throw StoreError.unknownEntity("\(entity) (not a destination of the mapping for \(mapping.sourceEntity); list it in `destinations:`)")
        }
        return try runner.destinationForWrites.entity(entity)
    }
}

/// What an ``EntityMigrationPolicy`` can do in the relationship pass: link destination objects.
public final class RelationshipMigrationContext: MigrationContext {

    /// Translates each link of source object `source` into links between the destination objects made from
    /// the two ends, for every source relationship that maps to a destination relationship.
    public func linkInferred(for source: DynamicObject) throws {
        guard let destName = matchedDestination(of: source.entityName),
              let plan = runner.mapping.entity(destName) else { return }
        let destBinding = try runner.destinationForWrites.entity(destName)
        let froms = try destinations(for: source.id, entity: destName)
        for sr in source.binding.relationships {
            guard let rplan = plan.relationships.first(where: { $0.sourceName == sr.name }),
                  let r = destBinding.relationshipIndex[rplan.name].map({ destBinding.relationships[$0] }) else { continue }
            let targetEntity = runner.destination.entities[r.destination].name
            for t in try sourceReader.linkedIDs(source.id.rawValue, sr) {
                for to in try destinations(for: ObjectID(rawValue: t), entity: targetEntity) {
                    for from in froms { try writer.link(destBinding, r, from.rawValue, to.rawValue) }
                }
            }
        }
    }
}

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
                let writer = WriteContext(txn: txn, model: self.destinationForWrites)
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
