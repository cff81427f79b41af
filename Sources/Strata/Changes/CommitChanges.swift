import Foundation

/// What one write transaction changed in one entity: the objects it inserted, updated (with the properties
/// that changed) and deleted.
///
/// An object inserted and deleted by the same transaction appears in neither list; one inserted and then
/// changed is only inserted. For observers, past ``ChangeRecorder/idsPerEntity`` objects the IDs are dropped and
/// `isComplete` is false: they are told to reload the entity. The change history keeps every object.
struct EntityChanges: Sendable, Equatable {
    var inserted: [UInt64] = []
    var updated: [(id: UInt64, properties: PropertyMask)] = []
    var deleted: [UInt64] = []
    /// The properties changed by any update of the transaction.
    var properties = PropertyMask()
    var isComplete = true
    /// For the change history: the values of the entity's preserved attributes of each deleted object, in the
    /// order of `deleted` (empty when the entity preserves none).
    var tombstones: [[Value]] = []

    static func == (a: EntityChanges, b: EntityChanges) -> Bool {
        a.inserted == b.inserted && a.deleted == b.deleted && a.properties == b.properties && a.isComplete == b.isComplete
            && a.updated.map(\.id) == b.updated.map(\.id) && a.updated.map(\.properties) == b.updated.map(\.properties)
    }

    /// Whether an observation of `properties` (nil: all) cares about these changes.
    func concerns(_ observed: PropertyMask?) -> Bool {
        if !inserted.isEmpty || !deleted.isEmpty || !isComplete { return true }
        guard let observed else { return !updated.isEmpty }
        return properties.intersects(observed)
    }
}

/// A set of an entity's properties: bit `i` for attribute `i`, bit `attributes + r` for relationship `r`; a
/// property past the 63rd shares the last bit (an observation of it may wake for its neighbours).
struct PropertyMask: Sendable, Hashable {
    var bits: UInt64 = 0

    static let all = PropertyMask(bits: .max)

    init(bits: UInt64 = 0) { self.bits = bits }

    /// The mask of property `index` (attributes first, then relationships).
    init(property index: Int) { bits = 1 << UInt64(min(index, 63)) }

    mutating func formUnion(_ other: PropertyMask) { bits |= other.bits }
    func intersects(_ other: PropertyMask) -> Bool { bits & other.bits != 0 }
    var isEmpty: Bool { bits == 0 }
}

/// Everything one committed write transaction changed, by entity tag, with the transaction's LMDB ID.
struct CommitChanges: Sendable {
    var transactionID: UInt64
    var entities: [UInt32: EntityChanges]
    /// The commit's changes are unknown (a migration, or commits the change log no longer holds): every
    /// observation reloads.
    var isUnknown = false

    static func unknown(transactionID: UInt64) -> CommitChanges {
        CommitChanges(transactionID: transactionID, entities: [:], isUnknown: true)
    }

    /// The changes as observers (and the change log) get them: at most ``ChangeRecorder/idsPerEntity`` objects
    /// of an entity listed (beyond, "the entity changed"), no tombstones, and for an older model bound to a newer
    /// store (`downgraded`) every property named, since observers of the store's model number properties
    /// otherwise.
    func forObservers(downgraded: Bool) -> CommitChanges {
        var out = self
        for (tag, var e) in entities {
            e.tombstones = []
            if e.inserted.count + e.updated.count + e.deleted.count > ChangeRecorder.idsPerEntity {
                e = EntityChanges(properties: e.properties, isComplete: false)
            }
            if downgraded {
                if !e.properties.isEmpty { e.properties = .all }
                e.updated = e.updated.map { (id: $0.id, properties: PropertyMask.all) }
            }
            out.entities[tag] = e
        }
        return out
    }
}

/// Records, inside a write transaction, which objects it inserts, updates and deletes: an append per change,
/// so that tracking costs next to nothing when nobody observes.
struct ChangeRecorder {
    /// Beyond this many objects of one entity in one transaction, only "the entity changed" is kept for
    /// observers (the change history keeps every object).
    static let idsPerEntity = 10_000

    private struct Pending {
        var inserted: [UInt64] = []
        var updated: [(UInt64, PropertyMask)] = []
        var deleted: [UInt64] = []
        var tombstones: [[Value]] = []
        var properties = PropertyMask()
        var count = 0
        var isComplete = true
        /// Whether the entity changed at all in this transaction.
        var isTouched = false

        mutating func note(limit: Int) -> Bool {
            count += 1
            if count > limit {
                if isComplete { isComplete = false; inserted = []; updated = []; deleted = []; tombstones = [] }
                return false
            }
            return true
        }
    }

    /// By entity position (untouched until the entity changes).
    private var pending: [Pending]
    private(set) var isEmpty = true
    /// Whether every change is kept, with the tombstones of deletions (the store keeps a change history), or only
    /// what observers need.
    let keepsEveryChange: Bool
    /// False for a writer whose changes nobody reads (a migration's instance passes: observers learn of a
    /// migration from its switch, and the history lists a stage's objects from the databases themselves).
    let isRecording: Bool
    private let limit: Int

    init(entityCount: Int, keepsEveryChange: Bool = false, isRecording: Bool = true) {
        pending = Array(repeating: Pending(), count: entityCount)
        self.keepsEveryChange = keepsEveryChange
        self.isRecording = isRecording
        limit = keepsEveryChange ? .max : ChangeRecorder.idsPerEntity
    }

    mutating func inserted(_ id: UInt64, entity: Int) {
        guard isRecording else { return }
        let limit = limit
        edit(entity) { if $0.note(limit: limit) { $0.inserted.append(id) } }
    }

    mutating func updated(_ id: UInt64, entity: Int, properties: PropertyMask) {
        guard isRecording, !properties.isEmpty else { return }
        let limit = limit
        edit(entity) {
            $0.properties.formUnion(properties)
            if $0.note(limit: limit) { $0.updated.append((id, properties)) }
        }
    }

    /// A deletion; `tombstone` holds the values of the entity's preserved attributes (history only).
    mutating func deleted(_ id: UInt64, entity: Int, tombstone: [Value]? = nil) {
        guard isRecording else { return }
        let limit = limit
        edit(entity) {
            guard $0.note(limit: limit) else { return }
            $0.deleted.append(id)
            if let tombstone { $0.tombstones.append(tombstone) }
        }
    }

    /// Edits an entity's pending changes in place (its lists are not copied).
    @inline(__always)
    private mutating func edit(_ entity: Int, _ body: (inout Pending) -> Void) {
        isEmpty = false
        pending[entity].isTouched = true
        body(&pending[entity])
    }

    /// The transaction's changes by entity tag, with the same object never listed twice.
    func changes(transactionID: UInt64, tags: (Int) -> UInt32) -> CommitChanges {
        var entities: [UInt32: EntityChanges] = [:]
        for (position, p) in pending.enumerated() {
            guard p.isTouched else { continue }
            var e = EntityChanges(properties: p.properties, isComplete: p.isComplete)
            if p.isComplete {
                if p.deleted.isEmpty && p.updated.isEmpty {
                    // Only inserts (a bulk load): nothing to cancel out.
                    e.inserted = p.inserted
                    if e.inserted.isEmpty { continue }
                    entities[tags(position)] = e
                    continue
                }
                let deleted = Set(p.deleted)
                let inserted = Set(p.inserted)
                e.inserted = p.inserted.filter { !deleted.contains($0) }
                if p.tombstones.count == p.deleted.count && !p.tombstones.isEmpty {
                    // Cascades may reach an object twice: it is listed (and its tombstone kept) once.
                    var seen: Set<UInt64> = []
                    for (id, tombstone) in zip(p.deleted, p.tombstones) where !inserted.contains(id) && seen.insert(id).inserted {
                        e.deleted.append(id)
                        e.tombstones.append(tombstone)
                    }
                } else {
                    e.deleted = p.deleted.filter { !inserted.contains($0) }
                }
                var merged: [UInt64: PropertyMask] = [:]
                for (id, mask) in p.updated where !inserted.contains(id) && !deleted.contains(id) {
                    merged[id, default: PropertyMask()].formUnion(mask)
                }
                e.updated = merged.sorted { $0.key < $1.key }.map { (id: $0.key, properties: $0.value) }
                if e.inserted.isEmpty && e.deleted.isEmpty && e.updated.isEmpty { continue }
            }
            entities[tags(position)] = e
        }
        return CommitChanges(transactionID: transactionID, entities: entities)
    }
}

extension EntityBinding {
    /// The attributes whose values differ between two rows of this entity.
    func changedAttributes(from old: [Value], to new: [Value]) -> PropertyMask {
        // An older model bound to a newer store numbers properties otherwise than the store's model: the
        // history names them through its own model, and observers get every property
        // (`CommitChanges.forObservers(downgraded:)`).
        var mask = PropertyMask()
        for i in 0..<min(old.count, new.count) where old[i] != new[i] { mask.formUnion(PropertyMask(property: i)) }
        return mask
    }

    /// The mask of a relationship of this entity (relationships come after the attributes).
    func mask(of relationship: RelationshipBinding) -> PropertyMask {
        mask(ofRelationshipAt: relationship.position)
    }

    /// The mask of the relationship at `position` among the entity's relationships.
    func mask(ofRelationshipAt position: Int) -> PropertyMask {
        PropertyMask(property: attributeNames.count + position)
    }

    /// The mask of the named attributes and relationships.
    /// - Throws: ``StoreError/Code-swift.struct/unknownAttribute`` for a name the entity does not have.
    func mask(of properties: [String]) throws -> PropertyMask {
        // Another process's commits number properties as the store's model does: watch the whole entity.
        if isDowngraded {
            for name in properties where position(of: name) == nil && relationshipIndex[name] == nil {
                throw StoreError.unknownAttribute(entity: self.name, name: name)
            }
            return .all
        }
        var mask = PropertyMask()
        for name in properties {
            if let a = position(of: name) {
                mask.formUnion(PropertyMask(property: a))
            } else if let r = relationshipIndex[name] {
                mask.formUnion(self.mask(of: relationships[r]))
            } else {
                throw StoreError.unknownAttribute(entity: self.name, name: name)
            }
        }
        return mask
    }
}
