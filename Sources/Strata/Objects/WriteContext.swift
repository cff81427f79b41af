import Foundation

/// Reads and changes objects inside ``Store/write(author:_:)``. Everything done through it commits together when
/// the closure returns, or not at all when it throws.
///
/// ## Topics
/// ### Creating, changing and deleting objects
/// - ``insert(_:_:)``
/// - ``insert(_:orderedValues:)``
/// - ``insert(_:id:orderedValues:)``
/// - ``update(_:)``
/// - ``delete(_:)``
/// - ``delete(_:of:)``
/// ### Relationships
/// - ``link(_:_:to:)``
/// - ``unlink(_:_:from:)``
/// - ``setRelated(_:_:to:)``
public final class WriteContext: ReadContext {
    // A context belongs to the thread running its transaction: no dynamic exclusivity checks on these.
    @exclusivity(unchecked) var writer = BinaryWriter(capacity: 512)
    /// The buffers typed writes fill (see ``withModelWriter(_:_:)``), kept between writes so that their storage is
    /// allocated once; nil while lent (or before the first typed write).
    @exclusivity(unchecked) var idleWriteBuffers: ModelWriteBuffers? = nil
    @exclusivity(unchecked) private var nextID: UInt64? = nil
    /// The last object inserted in each entity by this transaction, by entity position (linking a just-created
    /// object needs no lookup to know it exists; it cannot have been deleted since without this being cleared).
    @exclusivity(unchecked) private var lastInserted: [LastInserted]
    @exclusivity(unchecked) private var counterDirty = false
    /// Objects whose relationship counts must be checked against their minimums at commit.
    @exclusivity(unchecked) private var countChecks: Set<CountCheck> = []
    /// Whether minimum relationship counts are checked at commit (migrations check them at the end of a
    /// stage instead, when every link exists).
    var checksMinimumCounts = true
    /// Records of older layouts this transaction rewrote (in the current layout) or deleted, as (entity tag,
    /// layout ID): subtracted from the store's maintenance counts at commit.
    @exclusivity(unchecked) private var leftOldLayouts: [(UInt32, UInt32)] = []
    /// About how many bytes this context has written (records, links and index entries, with LMDB's per-entry
    /// overhead): what sizes a migration's batches.
    @exclusivity(unchecked) var bytesWritten = 0
    /// The objects this transaction inserts, updates and deletes, for observers (see ``Store/observe(_:)``) and
    /// the change history.
    @exclusivity(unchecked) var changes: ChangeRecorder

    /// A context for a write transaction. With `recordsHistory` (the store keeps a change history), every
    /// change is recorded, with the tombstones of deleted objects; with `recordsChanges` false, none is (a
    /// migration's passes, whose changes nobody reads).
    init(txn: Transaction, model: BoundModel, recordsHistory: Bool, recordsChanges: Bool = true) {
        lastInserted = [LastInserted](repeating: LastInserted(), count: model.entities.count)
        changes = ChangeRecorder(entityCount: model.entities.count, keepsEveryChange: recordsHistory, isRecording: recordsChanges)
        super.init(txn: txn, model: model)
    }

    struct LastInserted {
        /// Its identifier (0, never allocated, means none).
        var id: UInt64 = 0
        /// Whether it has no link yet (linking it through a to-one relationship then needs no lookup of a
        /// previous link).
        var hasNoLinks = false
    }

    struct CountCheck: Hashable {
        let entity: Int
        let relationship: Int
        let id: UInt64
    }

    // MARK: Identifiers

    func allocateID() throws -> UInt64 {
        if nextID == nil {
            nextID = try model.meta.read(.counter, in: txn, CounterRecord.decode) ?? 1
        }
        guard let id = nextID, id < UInt64.max else { throw StoreError.corrupted(path: txn.environment.path, reason: .metadata("object counter exhausted")) }
        nextID = id + 1
        counterDirty = true
        return id
    }

    /// Makes sure IDs allocated later are greater than `id` (a migration keeping its source's IDs).
    func reserveIDs(through id: UInt64) throws {
        if nextID == nil { nextID = try model.meta.read(.counter, in: txn, CounterRecord.decode) ?? 1 }
        if let next = nextID, next <= id {
            nextID = id + 1
            counterDirty = true
        }
    }

    /// Writes what must be written before commit: the ID counter, and checks minimum relationship counts.
    func finish() throws {
        for check in countChecks where checksMinimumCounts {
            let binding = model.entities[check.entity]
            guard try exists(check.id, binding) else { continue }
            let r = binding.relationships[check.relationship]
            let n = try linkCount(check.id, r)
            if let min = r.minCount, n < min {
                throw StoreError.relationshipCountViolation(entity: binding.name, id: ObjectID(rawValue: check.id),
                                                            relationship: r.name, count: n, minCount: r.minCount, maxCount: r.maxCount)
            }
        }
        if counterDirty, let next = nextID {
            try model.meta.put(.counter, CounterRecord.encode(next), in: txn)
            counterDirty = false
        }
        if !leftOldLayouts.isEmpty {
            var maintenance = try MaintenanceRecord.read(model.meta, in: txn)
            var counts: [UInt32: [UInt32: Int]] = [:]
            for (tag, layout) in leftOldLayouts { counts[tag, default: [:]][layout, default: 0] += 1 }
            for (tag, perLayout) in counts { maintenance.remove(entity: tag, counts: perLayout) }
            try maintenance.write(model.meta, in: txn)
            leftOldLayouts.removeAll()
        }
    }

    // MARK: Inserting

    /// Inserts a new object of `entity`. Attributes not given take their default value (or null).
    /// - Returns: the object as stored, with its new identifier.
    /// - Throws: ``StoreError/unknownAttribute(entity:name:)``, ``StoreError/invalidValue(entity:attribute:expected:actual:)``,
    ///   ``StoreError/missingRequiredValue(entity:attribute:)``, ``StoreError/uniqueConstraintViolation(entity:attribute:value:existing:)``.
    @discardableResult
    public func insert(_ entity: String, _ values: [String: Value] = [:]) throws -> DynamicObject {
        let binding = try binding(entity)
        var row = binding.initialValues.withOwnStorage()
        for (name, value) in values {
            guard let i = binding.position(of: name) else { throw StoreError.unknownAttribute(entity: entity, name: name) }
            row[i] = value
        }
        let id = try insertRow(binding, &row, id: nil)
        return DynamicObject(id: ObjectID(rawValue: id), binding: binding, values: row)
    }

    /// Inserts an object under a given identifier (importing or copying objects between stores). The
    /// identifier must not be in use by any object of the store; identifiers allocated later are greater
    /// than it.
    /// - Throws: ``StoreError/uniqueConstraintViolation(entity:attribute:value:existing:)`` with attribute
    ///   `"id"` when the identifier is taken, and the errors of ``insert(_:_:)``.
    @discardableResult
    public func insert(_ entity: String, id: ObjectID, _ values: [String: Value]) throws -> DynamicObject {
        let binding = try binding(entity)
        // Identifiers are unique across the store, not only within an entity.
        for other in model.entities where try exists(id.rawValue, other) {
            throw StoreError.uniqueConstraintViolation(entity: other.name, attribute: "id", value: id.description, existing: id)
        }
        var row = binding.initialValues.withOwnStorage()
        for (name, value) in values {
            guard let i = binding.position(of: name) else { throw StoreError.unknownAttribute(entity: entity, name: name) }
            row[i] = value
        }
        try reserveIDs(through: id.rawValue)
        _ = try insertRow(binding, &row, id: id.rawValue)
        return DynamicObject(id: id, binding: binding, values: row)
    }

    /// Inserts a new object given every attribute's value in declaration order: the fastest way to load
    /// many objects.
    @discardableResult
    public func insert(_ entity: String, orderedValues: [Value]) throws -> ObjectID {
        let binding = try binding(entity)
        guard orderedValues.count == binding.attributeNames.count else {
            throw StoreError.typeMismatch(expected: "\(binding.attributeNames.count) values for \(entity)",
                                          actual: "\(orderedValues.count)")
        }
        return ObjectID(rawValue: try insertRow(binding, values: orderedValues, id: nil))
    }

    /// Inserts an object under a given identifier, given every attribute's value in declaration order: the
    /// fastest way to load objects that keep their identifiers (an import of an export). The identifier
    /// must not be in use by any object of the store; identifiers allocated later are greater than it.
    /// - Throws: ``StoreError/uniqueConstraintViolation(entity:attribute:value:existing:)`` with attribute
    ///   `"id"` when the identifier is taken, ``StoreError/typeMismatch(expected:actual:)`` when the number of
    ///   values is not the entity's number of attributes, and the errors of ``insert(_:_:)``.
    public func insert(_ entity: String, id: ObjectID, orderedValues: [Value]) throws {
        let binding = try binding(entity)
        guard orderedValues.count == binding.attributeNames.count else {
            throw StoreError.typeMismatch(expected: "\(binding.attributeNames.count) values for \(entity)",
                                          actual: "\(orderedValues.count)")
        }
        // Every stored identifier is below the counter (`Store.verify()` checks it): one at or above it is free,
        // as in an import of an export into a new store.
        if nextID == nil { nextID = try model.meta.read(.counter, in: txn, CounterRecord.decode) ?? 1 }
        if id.rawValue < nextID ?? 1 {
            for other in model.entities where try exists(id.rawValue, other) {
                throw StoreError.uniqueConstraintViolation(entity: other.name, attribute: "id", value: id.description, existing: id)
            }
        }
        try reserveIDs(through: id.rawValue)
        _ = try insertRow(binding, values: orderedValues, id: id.rawValue)
    }

    /// Inserts a row of attribute values; with `id`, under that identifier (used by migrations).
    /// `row` is left as stored: its values converted to their attributes' types (for inserts that return the object).
    func insertRow(_ binding: EntityBinding, _ row: inout [Value], id: UInt64?) throws -> UInt64 {
        if let converted = try encodeRow(binding, row) { row = converted }
        return try storeEncodedRow(binding, row, id: id)
    }

    /// Inserts a row of attribute values that the caller keeps: they are copied only when one must be converted
    /// to its attribute's type (an insert per object then counts no reference to the array).
    func insertRow(_ binding: EntityBinding, values: [Value], id: UInt64?) throws -> UInt64 {
        if let converted = try encodeRow(binding, values) { return try storeEncodedRow(binding, converted, id: id) }
        return try storeEncodedRow(binding, values, id: id)
    }

    /// Encodes a row's fields into the writer. Values that all have their attribute's type (the common case) are
    /// checked as they are encoded, and nil is returned; otherwise the row is validated and converted, and the
    /// converted row (what is stored) returned.
    private func encodeRow(_ binding: EntityBinding, _ values: [Value]) throws -> [Value]? {
        if binding.encodeExactly(values, into: &writer) { return nil }
        var row = values
        try binding.validate(&row)
        try binding.encodeBody(row, into: &writer)
        return row
    }

    /// Seals the record the writer holds (the fields of `row`), indexes `row` and stores it as a new object.
    private func storeEncodedRow(_ binding: EntityBinding, _ row: [Value], id: UInt64?) throws -> UInt64 {
        let id = try id ?? allocateID()
        try binding.seal(&writer, id: id)
        for index in binding.indexes {
            try addIndexEntry(binding, index, row[index.attribute], id: id)
        }
        try storeNewRecord(binding, id: id, record: writer.buffer)
        return id
    }

    /// Stores a sealed record as the new object `id` (appended: new identifiers are the largest).
    func storeNewRecord(_ binding: EntityBinding, id: UInt64, record: UnsafeRawBufferPointer) throws {
        let stored = try ObjectKey.with(id) { key in
            if try txn.withSharedCursor(binding.dbi, { try $0.append(key: key, value: record) }) { return true }
            return try txn.put(binding.dbi, key: key, value: record, flags: LMDBFlags.noOverwrite)
        }
        guard stored else {
            throw StoreError.corrupted(path: txn.environment.path, reason: .metadata("object ID \(id) of \(binding.name) is already used"))
        }
        bytesWritten += record.count + Self.entryOverhead
        for r in binding.minimumCountRelationships {
            countChecks.insert(CountCheck(entity: binding.position, relationship: r, id: id))
        }
        lastInserted[binding.position] = LastInserted(id: id, hasNoLinks: true)
        changes.inserted(id, entity: binding.position)
    }

    // MARK: Updating

    /// Stores a changed object.
    /// - Throws: ``StoreError/objectNotFound(entity:id:)`` when it was deleted, and the errors of ``insert(_:_:)``.
    public func update(_ object: DynamicObject) throws {
        try object.checkAssignments()
        let binding = try binding(object.entityName)
        var row = object.values
        try binding.validate(&row)
        let id = object.id.rawValue
        guard let oldBytes = try ObjectKey.with(id, { try txn.get(binding.dbi, key: $0) }) else {
            throw StoreError.objectNotFound(entity: binding.name, id: object.id)
        }
        noteRewritten(binding, oldBytes)
        let old = DynamicObject(id: object.id, binding: binding, values: try binding.decodeValues(oldBytes, id: id))
        changes.updated(id, entity: binding.position, properties: binding.changedAttributes(from: old.values, to: row))
        for index in binding.indexes where old.values[index.attribute] != row[index.attribute] {
            try removeIndexEntry(index, old.values[index.attribute], id: id)
            try addIndexEntry(binding, index, row[index.attribute], id: id)
        }
        if txn.isRotatingKeys {
            // Re-sealed under the new key below: the entries of unchanged values move to its hash too.
            try RotatingIndexEntries.moveToCurrentKey(binding.indexes.filter { old.values[$0.attribute] == row[$0.attribute] },
                                             values: row, id: id, in: txn)
        }
        try binding.encode(row, id: id, into: &writer)
        try ObjectKey.with(id) { key in
            _ = try txn.put(binding.dbi, key: key, value: writer.buffer)
        }
        bytesWritten += writer.buffer.count + Self.entryOverhead
    }

    // MARK: Deleting

    /// Deletes an object, applying its relationships' delete rules.
    /// - Throws: ``StoreError/deleteDenied(entity:id:relationship:count:)``.
    public func delete(_ object: DynamicObject) throws {
        try delete(object.id, of: object.entityName)
    }

    /// Deletes the object `id` of `entity`, applying delete rules (cascades follow to related objects).
    /// Deleting an object that does not exist does nothing.
    public func delete(_ id: ObjectID, of entity: String) throws {
        var pending: [(EntityBinding, UInt64)] = [(try binding(entity), id.rawValue)]
        var deleted: Set<UInt64> = []
        while let (binding, id) = pending.popLast() {
            guard !deleted.contains(id), let bytes = try ObjectKey.with(id, { try txn.get(binding.dbi, key: $0) }) else { continue }
            // The record's bytes are valid until this transaction's next write: read what is needed now.
            let object = DynamicObject(id: ObjectID(rawValue: id), binding: binding, values: try binding.decodeValues(bytes, id: id))
            let oldLayout = RecordCodec.layoutID(of: bytes)
            for r in binding.relationships where r.deleteRule == .deny {
                let n = try linkCount(id, r)
                if n > 0 {
                    throw StoreError.deleteDenied(entity: binding.name, id: ObjectID(rawValue: id), relationship: r.name, count: n)
                }
            }
            deleted.insert(id)
            if changes.keepsEveryChange && !binding.preservedAttributes.isEmpty {
                changes.deleted(id, entity: binding.position, tombstone: binding.preservedAttributes.map { object.values[$0] })
            } else {
                changes.deleted(id, entity: binding.position)
            }
            for r in binding.relationships {
                let destination = model.entities[r.destination]
                let inverse = destination.relationships[r.inversePosition]
                for target in try linkedIDs(id, r) {
                    try removeLinkEntry(inverse.dbi, target, id)
                    changes.updated(target, entity: destination.position, properties: destination.mask(of: inverse))
                    if r.deleteRule == .cascade {
                        pending.append((destination, target))
                    } else if (inverse.minCount ?? 0) > 0 {
                        countChecks.insert(CountCheck(entity: destination.position, relationship: inverse.position, id: target))
                    }
                }
                try ObjectKey.with(id) { key in _ = try txn.delete(r.dbi, key: key) }
            }
            for index in binding.indexes {
                try removeIndexEntry(index, object.values[index.attribute], id: id)
            }
            if let oldLayout { noteRewritten(binding, layout: oldLayout) }
            try ObjectKey.with(id) { key in _ = try txn.delete(binding.dbi, key: key) }
            if lastInserted[binding.position].id == id { lastInserted[binding.position].id = 0 }
        }
    }

    /// Notes that a stored record is about to be replaced by one in the current layout, or deleted: when it was
    /// in an older layout, the maintenance counts lose it at commit. (Free when the entity has one layout.)
    @inline(__always)
    func noteRewritten(_ binding: EntityBinding, _ record: UnsafeRawBufferPointer) {
        guard binding.layouts.count > 1, let layout = RecordCodec.layoutID(of: record) else { return }
        noteRewritten(binding, layout: layout)
    }

    @inline(__always)
    func noteRewritten(_ binding: EntityBinding, layout: UInt32) {
        guard binding.layouts.count > 1, layout != binding.current.layout.id else { return }
        leftOldLayouts.append((binding.tag, layout))
    }

    // MARK: Relationships

    /// Links `object` to `target` through `relationship` (and `target` back through the inverse).
    /// For a to-one relationship (on either side) the previous link is replaced.
    /// - Throws: ``StoreError/objectNotFound(entity:id:)``,
    ///   ``StoreError/relationshipCountViolation(entity:id:relationship:count:minCount:maxCount:)`` past a maximum.
    public func link(_ object: DynamicObject, _ relationship: String, to target: DynamicObject) throws {
        try link(object.id, of: object.entityName, relationship, to: target.id)
    }

    /// Links object `id` of `entity` to `target` through `relationship`.
    public func link(_ id: ObjectID, of entity: String, _ relationship: String, to target: ObjectID) throws {
        let binding = try binding(entity)
        let r = try binding.relationship(relationship)
        try link(binding, r, id.rawValue, target.rawValue)
    }

    func link(_ binding: EntityBinding, _ r: RelationshipBinding, _ source: UInt64, _ target: UInt64) throws {
        try withUnsafePointer(to: r) { r in
            try model.withEntity(at: r.pointee.destination) { destination in try link(binding, r, source, target, destination: destination) }
        }
    }

    /// Links `source` to `target` through `binding`'s relationship at `position`.
    func link(_ binding: EntityBinding, relationshipAt position: Int, _ source: UInt64, _ target: UInt64) throws {
        try binding.relationships.withUnsafeBufferPointer { relationships in
            precondition(relationships.indices.contains(position), "relationship \(position) of \(binding.name)")
            let r = relationships.baseAddress! + position
            try model.withEntity(at: r.pointee.destination) { destination in try link(binding, r, source, target, destination: destination) }
        }
    }

    /// The relationship is read in place through `r`, and the destination entity is lent by the model: copying either
    /// would count a reference (to the relationship's name, to the entity) per link. The inverse is read field by
    /// field from the destination's table, and copied whole only on the paths that replace a link.
    private func link(_ binding: EntityBinding, _ r: UnsafePointer<RelationshipBinding>, _ source: UInt64, _ target: UInt64,
                      destination: EntityBinding) throws {
        let inversePosition = r.pointee.inversePosition
        guard try knownToExist(source, binding) else { throw StoreError.objectNotFound(entity: binding.name, id: ObjectID(rawValue: source)) }
        guard try knownToExist(target, destination) else { throw StoreError.objectNotFound(entity: destination.name, id: ObjectID(rawValue: target)) }
        if !r.pointee.isToMany, !hasNoLinks(source, binding), let existing = try firstLinkedID(source, r.pointee) {
            if existing == target { return }
            try unlinkPair(r.pointee, destination.relationships[inversePosition], source, existing)
        }
        if !destination.relationships[inversePosition].isToMany, !hasNoLinks(target, destination) {
            let inverse = destination.relationships[inversePosition]
            if let existing = try firstLinkedID(target, inverse), existing != source {
                try unlinkPair(inverse, r.pointee, target, existing)
                countChecks.insert(CountCheck(entity: binding.position, relationship: r.pointee.position, id: existing))
            }
        }
        let added = try putLinkEntry(r.pointee.dbi, source, target)
        guard added else { return }
        _ = try putLinkEntry(destination.relationships[inversePosition].dbi, target, source)
        if lastInserted[binding.position].id == source { lastInserted[binding.position].hasNoLinks = false }
        if lastInserted[destination.position].id == target { lastInserted[destination.position].hasNoLinks = false }
        changes.updated(source, entity: binding.position, properties: binding.mask(ofRelationshipAt: r.pointee.position))
        changes.updated(target, entity: destination.position, properties: destination.mask(ofRelationshipAt: inversePosition))
        let inverseMaxCount = destination.relationships[inversePosition].isToMany ? destination.relationships[inversePosition].maxCount : nil
        if r.pointee.isToMany, let max = r.pointee.maxCount {
            let n = try linkCount(source, r.pointee)
            if n > max {
                throw StoreError.relationshipCountViolation(entity: binding.name, id: ObjectID(rawValue: source),
                                                            relationship: r.pointee.name, count: n, minCount: r.pointee.minCount, maxCount: max)
            }
        }
        if let max = inverseMaxCount {
            let inverse = destination.relationships[inversePosition]
            let n = try linkCount(target, inverse)
            if n > max {
                throw StoreError.relationshipCountViolation(entity: destination.name, id: ObjectID(rawValue: target),
                                                            relationship: inverse.name, count: n, minCount: inverse.minCount, maxCount: max)
            }
        }
    }

    /// Removes the link between `object` and `target` (both sides). Does nothing when they are not linked.
    public func unlink(_ object: DynamicObject, _ relationship: String, from target: DynamicObject) throws {
        try unlink(object.id, of: object.entityName, relationship, from: target.id)
    }

    /// Removes the link between object `id` of `entity` and `target`.
    public func unlink(_ id: ObjectID, of entity: String, _ relationship: String, from target: ObjectID) throws {
        let binding = try binding(entity)
        let r = try binding.relationship(relationship)
        let inverse = model.entities[r.destination].relationships[r.inversePosition]
        try unlinkPair(r, inverse, id.rawValue, target.rawValue)
    }

    /// Makes `object`'s relationship hold exactly `targets`.
    public func setRelated(_ object: DynamicObject, _ relationship: String, to targets: [ObjectID]) throws {
        let r = try object.binding.relationship(relationship)
        let inverse = model.entities[r.destination].relationships[r.inversePosition]
        let wanted = Set(targets.map(\.rawValue))
        for existing in try linkedIDs(object.id.rawValue, r) where !wanted.contains(existing) {
            try unlinkPair(r, inverse, object.id.rawValue, existing)
        }
        for t in targets { try link(object.binding, r, object.id.rawValue, t.rawValue) }
    }

    /// Makes the relationship `r` of object `id` hold exactly `targets`.
    func setLinks(_ binding: EntityBinding, _ r: RelationshipBinding, _ id: UInt64, _ targets: [UInt64]) throws {
        let inverse = model.entities[r.destination].relationships[r.inversePosition]
        let wanted = Set(targets)
        for existing in try linkedIDs(id, r) where !wanted.contains(existing) {
            try unlinkPair(r, inverse, id, existing)
        }
        for t in targets { try link(binding, r, id, t) }
    }

    private func unlinkPair(_ r: RelationshipBinding, _ inverse: RelationshipBinding, _ source: UInt64, _ target: UInt64) throws {
        try removeLinkEntry(r.dbi, source, target)
        try removeLinkEntry(inverse.dbi, target, source)
        changes.updated(source, entity: r.entityPosition, properties: model.entities[r.entityPosition].mask(of: r))
        changes.updated(target, entity: inverse.entityPosition, properties: model.entities[inverse.entityPosition].mask(of: inverse))
        if (r.minCount ?? 0) > 0 { countChecks.insert(CountCheck(entity: r.entityPosition, relationship: r.position, id: source)) }
        if (inverse.minCount ?? 0) > 0 { countChecks.insert(CountCheck(entity: inverse.entityPosition, relationship: inverse.position, id: target)) }
    }

    /// Whether an object exists: the one this transaction inserted last in its entity does without a lookup.
    /// Whether object `id` is the last one this transaction inserted in its entity and nothing linked it yet.
    @inline(__always)
    private func hasNoLinks(_ id: UInt64, _ binding: EntityBinding) -> Bool {
        lastInserted[binding.position].id == id && lastInserted[binding.position].hasNoLinks
    }

    private func knownToExist(_ id: UInt64, _ binding: EntityBinding) throws -> Bool {
        if lastInserted[binding.position].id == id { return true }
        return try exists(id, binding)
    }

    /// LMDB's bytes per entry besides the value: the node header and the 8-byte key.
    static let entryOverhead = 16

    func putLinkEntry(_ dbi: DatabaseHandle, _ source: UInt64, _ target: UInt64) throws -> Bool {
        bytesWritten += 8 + Self.entryOverhead
        return try ObjectKey.with(source) { k in
            // Links of new objects arrive in key order: they are appended.
            try ObjectKey.with(target) { v in try txn.addDuplicate(dbi, key: k, value: v) }
        }
    }

    func removeLinkEntry(_ dbi: DatabaseHandle, _ source: UInt64, _ target: UInt64) throws {
        try ObjectKey.with(source) { k in
            try ObjectKey.with(target) { v in _ = try txn.delete(dbi, key: k, value: v) }
        }
    }

    // MARK: Indexes

    func addIndexEntry(_ binding: EntityBinding, _ index: IndexBinding, _ value: Value, id: UInt64) throws {
        if value.isNull { return }
        let key = txn.indexKey(value)
        if index.isUnique {
            let clash = try indexLookup(binding, attribute: index.attribute, index: index, value: value).first { $0 != id }
            if let clash {
                throw StoreError.uniqueConstraintViolation(entity: binding.name, attribute: binding.attributeNames[index.attribute],
                                                           value: value.description, existing: ObjectID(rawValue: clash))
            }
        }
        try key.withUnsafeBytes { k in
            try ObjectKey.with(id) { v in _ = try txn.put(index.dbi, key: k, value: v, flags: LMDBFlags.noDupData) }
        }
        bytesWritten += key.count + 8 + Self.entryOverhead
    }

    func removeIndexEntry(_ index: IndexBinding, _ value: Value, id: UInt64) throws {
        if value.isNull { return }
        // While a key rotation runs, the entry is under either key's hash.
        for key in txn.indexKeys(value) {
            try key.withUnsafeBytes { k in
                try ObjectKey.with(id) { v in _ = try txn.delete(index.dbi, key: k, value: v) }
            }
        }
    }
}
