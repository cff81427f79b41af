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

    /// The destination objects made from source object `source` (optionally only those of `entity`).
    /// For source entities the stage does not map with a policy, that is the object itself, which keeps
    /// its identifier.
    public func destinations(for source: ObjectID, entity: String? = nil) throws -> [ObjectID] {
        let tag = try entity.map { try runner.destination.entity($0).tag }
        var out: [UInt64] = []
        let cursor = try txn.sharedCursor(associations)
        try ObjectKey.with(source.rawValue) { key in
            guard var entry = try cursor.find(key) else { return }
            while true {
                let (t, id) = try MigrationContext.decodeReference(entry.value)
                if tag == nil || tag == t { out.append(id) }
                guard let next = try cursor.nextDuplicate() else { break }
                entry = next
            }
        }
        if out.isEmpty {
            // Not created by a policy: objects that kept their identifier.
            let candidates = try entity.map { [try runner.destination.entity($0)] } ?? runner.destination.entities
            for binding in candidates where runner.kinds[binding.name] != .built {
                if try writer.exists(source.rawValue, binding) { out.append(source.rawValue); break }
            }
        }
        return out.map(ObjectID.init(rawValue:))
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

    static func encodeReference(tag: UInt32, id: UInt64) -> [UInt8] {
        withUnsafeBytes(of: tag.bigEndian) { Array($0) } + withUnsafeBytes(of: id.bigEndian) { Array($0) }
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
        guard let destName = matchedDestination(of: source.entityName), let plan = runner.mapping.entity(destName) else {
            throw StoreError.unknownEntity("(no destination entity matches \(source.entityName))")
        }
        var out: [String: Value] = [:]
        for m in plan.attributes {
            switch m.origin {
            case .added(let v): out[m.name] = v
            case .scripted: out[m.name] = .null
            case .source(let s):
                var v = RecordTranscoder.convert(source[s], m.conversion)
                if v.isNull, let r = m.nullReplacement { v = r }
                out[m.name] = v
            }
        }
        return out
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
        let id = try create(entity, values, keepingSourceID: keepingSourceID)
        if let source = current {
            let tag = try runner.destination.entity(entity).tag
            let v = MigrationContext.encodeReference(tag: tag, id: id.rawValue)
            try ObjectKey.with(source.id.rawValue) { k in
                try v.withUnsafeBytes { vb in _ = try txn.put(associations, key: k, value: vb, flags: LMDBFlags.noDupData) }
            }
        }
        return id
    }

    /// Creates the destination object the inferred mapping would: the matched destination entity, inferred
    /// values, the source's identifier. Returns nil when no destination entity matches.
    @discardableResult
    public func insertInferred(for source: DynamicObject) throws -> ObjectID? {
        guard let dest = matchedDestination(of: source.entityName) else { return nil }
        return try insert(dest, try inferredValues(for: source), keepingSourceID: true)
    }

    /// The object of a lookup table for `key`, creating it (not associated with any source object) when the
    /// table has none: one `Author` per distinct name.
    public func lookupOrInsert(_ table: String, key: Value, entity: String, values: [String: Value]) throws -> ObjectID {
        if let existing = try lookup(table, key) { return existing }
        let id = try create(entity, values, keepingSourceID: false)
        try setLookup(table, key, to: id)
        return id
    }

    private func create(_ entity: String, _ values: [String: Value], keepingSourceID: Bool) throws -> ObjectID {
        guard allowedEntities.contains(entity) else {
            throw StoreError.unknownEntity("\(entity) (not a destination of the mapping for \(mapping.sourceEntity); list it in `destinations:`)")
        }
        let binding = try runner.destinationForWrites.entity(entity)
        var row = binding.initialValues
        for (name, value) in values {
            guard let i = binding.attributeIndex[name] else { throw StoreError.unknownAttribute(entity: entity, name: name) }
            row[i] = value
        }
        let id: UInt64?
        if keepingSourceID, let source = current {
            id = source.id.rawValue
            try writer.reserveIDs(through: source.id.rawValue)
        } else {
            id = nil
        }
        return ObjectID(rawValue: try writer.insertRow(binding, &row, id: id))
    }
}

/// What an ``EntityMigrationPolicy`` can do in the relationship pass: link destination objects.
public final class RelationshipMigrationContext: MigrationContext {
    /// Links destination object `id` of `entity` to `target` through `relationship` (destination names); the
    /// inverse is linked too.
    public func link(_ id: ObjectID, of entity: String, _ relationship: String, to target: ObjectID) throws {
        let binding = try runner.destinationForWrites.entity(entity)
        let r = try binding.relationship(relationship)
        try writer.link(binding, r, id.rawValue, target.rawValue)
    }

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
        try runPass(pass: pass, mapping: index, phase: .relationships, bytesPerObject: 128) { runner, txn, writer, _ in
            try RelationshipMigrationContext(runner: runner, txn: txn, writer: writer)
        } visit: { m, object, context in
            try m.policy.createRelationships(for: object, in: context)
        }
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
