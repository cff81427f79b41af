import Foundation
import Synchronization

/// A schema bound to a store: each entity with its catalog entry, layouts and LMDB database handles.
/// Immutable; one per `Store` handle (a migration makes a new one).
final class BoundModel: Sendable {
    let schema: Schema
    let catalog: Catalog
    /// The store's generation when this binding was made; transactions compare it with the store's.
    let generation: UInt64
    let meta: MetaTable
    let entities: [EntityBinding]
    private let entityIndex: [String: Int]
    /// The entities' names in schema order: a small model is searched by comparison, which costs less than
    /// hashing the name (objects, contexts and migration scripts look entities up by name on every call).
    private let entityNames: [String]
    /// Whether the store had maintenance left when the model was bound (records of older layouts, indexes
    /// being built, retired databases): a store handle then starts its background maintenance.
    let needsMaintenance: Bool
    /// Set when an older model is bound to a store a newer model wrote (see `Opening/Downgrade.swift`): the store's version.
    let downgradedFrom: String?

    init(schema: Schema, catalog: consuming Catalog, generation: UInt64, meta: MetaTable, handles: [String: DatabaseHandle],
         withoutIndexesFor unindexed: Set<String> = [], buildingIndexes: Set<UInt32> = [],
         needsMaintenance: Bool = false, olderModel: (declaredEntities: [String: Entity], storeVersion: String)? = nil) throws(DecodeFailure) {
        self.needsMaintenance = needsMaintenance
        self.downgradedFrom = olderModel?.storeVersion
        self.schema = schema
        self.generation = generation
        self.meta = meta
        var entityIndex: [String: Int] = [:]
        for (i, e) in schema.entities.enumerated() { entityIndex[e.name] = i }
        self.entityIndex = entityIndex
        self.entityNames = schema.entities.map(\.name)
        var bindings: [EntityBinding] = []
        for (position, entity) in schema.entities.enumerated() {
            bindings.append(try EntityBinding(position: position, entity: entity, schema: schema,
                                              catalog: catalog, entityIndex: entityIndex, handles: handles,
                                              indexed: !unindexed.contains(entity.name), buildingIndexes: buildingIndexes,
                                              declared: olderModel?.declaredEntities[entity.name]))
        }
        entities = bindings
        // Last, so the catalog is moved in, not copied (a copy costs a process's first open a type look-up for
        // each of its arrays).
        self.catalog = consume catalog
    }

    /// Runs `body` with the entity at `position` lent, counting no reference (this model keeps it).
    @inline(__always)
    func withEntity<R>(at position: Int, _ body: (EntityBinding) throws -> R) rethrows -> R {
        // The element is read as an unretained reference (same layout as the array's strong one): reading it as a
        // binding would retain it, and the array keeps it alive anyway.
        try entities.withUnsafeBufferPointer { bindings in
            precondition(bindings.indices.contains(position), "entity \(position) of \(bindings.count)")
            return try UnsafeRawPointer(bindings.baseAddress! + position).load(as: Unmanaged<EntityBinding>.self)._withUnsafeGuaranteedRef(body)
        }
    }

    /// Runs `body` with the entity named `name` lent, counting no reference (this model keeps it).
    /// - Throws: ``StoreError/unknownEntity(_:)``.
    @inline(__always)
    func withEntity<R>(named name: String, _ body: (EntityBinding) throws -> R) throws -> R {
        guard let i = position(of: name) else { throw StoreError.unknownEntity(name) }
        return try withEntity(at: i, body)
    }

    func entity(_ name: String) throws -> EntityBinding {
        guard let i = position(of: name) else { throw StoreError.unknownEntity(name) }
        return entities[i]
    }

    func entityIfPresent(_ name: String) -> EntityBinding? {
        position(of: name).map { entities[$0] }
    }

    @inline(__always) private func position(of name: String) -> Int? {
        if entityNames.count <= 16 {
            for i in entityNames.indices where entityNames[i] == name { return i }
            return nil
        }
        return entityIndex[name]
    }

    /// LMDB flags of a database, from its name: links (`l…`), indexes (`i…`) and a migration's associations
    /// are sorted duplicates of fixed size; records, metadata and lookup tables are plain.
    static func databaseFlags(_ name: String) -> UInt32 {
        if name == Catalog.associationDatabase { return LMDBFlags.dupSort | LMDBFlags.dupFixed }
        switch name.first {
        case "l", "i": return LMDBFlags.dupSort | LMDBFlags.dupFixed
        default: return 0
        }
    }
}

struct RelationshipBinding: Sendable {
    let name: String
    let position: Int
    let entityPosition: Int
    let dbi: DatabaseHandle
    let destination: Int
    let inversePosition: Int
    let isToMany: Bool
    let deleteRule: DeleteRule
    let minCount: Int?
    let maxCount: Int?
}

struct IndexBinding: Sendable {
    let dbi: DatabaseHandle
    let isUnique: Bool
    let attribute: Int
    /// The index's tag in the catalog.
    let tag: UInt32
    /// The index was being built (by the store's maintenance) when the model was bound: writers maintain it,
    /// but a query checks that it is complete in its own snapshot before using it.
    let wasBuilding: Bool
}

@usableFromInline
final class EntityBinding: Sendable {
    let position: Int
    let entity: Entity
    let name: String
    let tag: UInt32
    let dbi: DatabaseHandle
    let attributeNames: [String]
    /// The UTF-8 length of each attribute name (``position(of:)`` compares lengths before names).
    let attributeNameLengths: [Int]
    /// Each attribute name's two words as a `String` holds them, two per attribute (empty where a `String` is not
    /// two words):
    /// ``position(of:)`` compares them first. Equal words are equal strings — a small name's words are its bytes,
    /// a large one's point at storage the binding's own copy keeps alive and unchanged — so a name passed as a
    /// literal of the app (or as the binding's own name) is found without comparing characters; any other
    /// spelling of it falls through to the comparison of names.
    private let attributeNameWords: [Int]
    let attributeTypes: [AttributeType]
    /// Each attribute's ``TypeCode`` (matched against ``TypeCode/code(of:)`` where a value is set by name).
    let attributeCodes: [UInt8]
    /// The number of attributes (read without touching an array).
    let attributeCount: Int
    /// The position of each attribute by name, for entities too large to search in order (``position(of:)``).
    private let attributeIndex: [String: Int]
    /// A new object's values: defaults, or null.
    let initialValues: [Value]
    /// Attributes that must not be null when stored.
    let requiredAttributes: [Int]
    let layouts: [LayoutProjection]
    let current: LayoutProjection
    /// The attribute of each field of the current layout.
    let currentFieldAttributes: [Int]
    let relationships: [RelationshipBinding]
    let relationshipIndex: [String: Int]
    /// Positions of the relationships with a minimum count (a new object's counts are checked at commit).
    let minimumCountRelationships: [Int]
    /// Indexes by attribute position.
    let indexes: [IndexBinding]
    /// Whether the attribute at each position has an index.
    private let indexedSlots: [Bool]
    /// How new records of the current layout are written (pointers into ``writePlanStorage``).
    let writePlan: RecordWritePlan
    private let writePlanStorage: RecordWritePlan.Storage
    /// Model types (``EntityModel``) checked to declare this entity as the bound model does: a list, as an app
    /// has one or two per entity (a `Set` here would make the first store to close scan every protocol
    /// conformance of the binary when it destroys the set's type for the first time).
    let verifiedModels = Mutex<[ObjectIdentifier]>([])
    /// The current layout's fields hold the stored attributes in the model's order (model types write their
    /// fields straight into the record when they do).
    let currentFollowsModelOrder: Bool
    /// The entity as the app's model declares it: ``entity`` itself, or for an older model bound to a newer
    /// store (`Opening/Downgrade.swift`) without the attributes it keeps for the newer model.
    let declaredEntity: Entity
    /// Positions of the attributes kept for a newer model (after the declared ones; empty normally): model
    /// types never write them, updates keep their stored values.
    let keptAttributes: Range<Int>
    /// Bound for an older model (`Opening/Downgrade.swift`): its property positions are not the store model's.
    let isDowngraded: Bool
    /// Positions of the attributes whose values the change history keeps when an object is deleted
    /// (``Attribute/preservesValueOnDeletion``).
    let preservedAttributes: [Int]

    /// `schema` and `catalog` are borrowed: an initializer's parameters are owned, and passing the model's to each
    /// binding copied them (a type look-up for each of their arrays at a process's first open).
    init(position: Int, entity: Entity, schema: borrowing Schema, catalog: borrowing Catalog, entityIndex: [String: Int],
         handles: [String: DatabaseHandle], indexed: Bool = true, buildingIndexes: Set<UInt32> = [],
         declared: Entity? = nil) throws(DecodeFailure) {
        self.declaredEntity = declared ?? entity
        self.keptAttributes = min(declaredEntity.attributes.count, entity.attributes.count)..<entity.attributes.count
        self.isDowngraded = declared != nil
        guard let entry = catalog.entity(named: entity.name) else {
            throw DecodeFailure("the catalog has no entity \(entity.name)")
        }
        guard let dbi = handles[entry.database] else { throw DecodeFailure("database \(entry.database) is missing") }
        self.position = position
        self.entity = entity
        self.name = entity.name
        self.tag = entry.tag
        self.dbi = dbi
        attributeNames = entity.attributes.map(\.name)
        attributeNameLengths = attributeNames.map(\.utf8.count)
        // `[Int]`, a type the first open has already made (a new array type costs a look-up by mangled name).
        var words: [Int] = []
        if MemoryLayout<String>.size == 16 {
            words.reserveCapacity(2 * attributeNames.count)
            for name in attributeNames {
                let w = unsafeBitCast(name, to: (Int, Int).self)
                words.append(w.0)
                words.append(w.1)
            }
        }
        attributeNameWords = words
        attributeTypes = entity.attributes.map(\.type)
        attributeCodes = attributeTypes.map(TypeCode.code)
        attributeCount = entity.attributes.count
        var index: [String: Int] = [:]
        for (i, a) in entity.attributes.enumerated() { index[a.name] = i }
        attributeIndex = index
        initialValues = entity.attributes.map(\.initialValue)
        requiredAttributes = entity.attributes.indices.filter { !entity.attributes[$0].isOptional && !entity.attributes[$0].isTransient }
        preservedAttributes = entity.attributes.indices.filter { entity.attributes[$0].preservesValueOnDeletion }

        // Catalog attribute j -> model attribute index.
        var catalogToModel: [Int] = []
        for name in entry.attributes {
            guard let i = index[name], !entity.attributes[i].isTransient else {
                throw DecodeFailure("the catalog's attribute \(entity.name).\(name) is not a stored attribute of the model")
            }
            catalogToModel.append(i)
        }
        // Counted, not filtered into a new array (whose type's first use costs a process's first open a look-up).
        var storedCount = 0
        for attribute in entity.attributes where !attribute.isTransient { storedCount += 1 }
        guard catalogToModel.count == storedCount else {
            throw DecodeFailure("the catalog's attributes of \(entity.name) do not match the model")
        }
        var layouts: [LayoutProjection] = []
        for l in entry.layouts { layouts.append(try LayoutProjection(layout: l.layout, sources: l.sources, entity: entity, catalogToModel: catalogToModel)) }
        guard let current = layouts.first(where: { $0.layout.id == entry.currentLayout }),
              current.isDirect, !current.fieldAttributes.contains(nil) else {
            throw DecodeFailure("the current layout of \(entity.name) is missing or not direct")
        }
        self.layouts = layouts
        self.current = current
        self.currentFieldAttributes = current.fieldAttributes.map { $0 ?? 0 }

        var relationships: [RelationshipBinding] = []
        var relIndex: [String: Int] = [:]
        for (i, r) in entity.relationships.enumerated() {
            guard let relEntry = catalog.relationship(entityTag: entry.tag, name: r.name) else {
                throw DecodeFailure("the catalog has no relationship \(entity.name).\(r.name)")
            }
            guard let relDBI = handles[relEntry.database] else { throw DecodeFailure("database \(relEntry.database) is missing") }
            guard let destination = entityIndex[r.destination],
                  let inverse = schema.entities[destination].relationships.firstIndex(where: { $0.name == r.inverse }) else {
                throw DecodeFailure("relationship \(entity.name).\(r.name) has no inverse")
            }
            relationships.append(RelationshipBinding(
                name: r.name, position: i, entityPosition: position, dbi: relDBI, destination: destination,
                inversePosition: inverse, isToMany: r.isToMany, deleteRule: r.deleteRule,
                minCount: r.minCount, maxCount: r.effectiveMaxCount))
            relIndex[r.name] = i
        }
        self.relationships = relationships
        self.relationshipIndex = relIndex
        self.minimumCountRelationships = relationships.filter { ($0.minCount ?? 0) > 0 }.map(\.position)

        var indexes: [IndexBinding] = []
        for (i, a) in entity.attributes.enumerated() where a.isIndexed && indexed {
            guard let ix = catalog.index(entityTag: entry.tag, attribute: a.name) else {
                throw DecodeFailure("the catalog has no index on \(entity.name).\(a.name)")
            }
            guard let ixDBI = handles[ix.database] else { throw DecodeFailure("database \(ix.database) is missing") }
            indexes.append(IndexBinding(dbi: ixDBI, isUnique: a.isUnique, attribute: i, tag: ix.tag,
                                        wasBuilding: buildingIndexes.contains(ix.tag)))
        }
        self.indexes = indexes
        var indexedSlots = [Bool](repeating: false, count: entity.attributes.count)
        for index in indexes { indexedSlots[index.attribute] = true }
        self.indexedSlots = indexedSlots
        self.writePlanStorage = RecordWritePlan.Storage(layout: current.layout, fieldAttributes: currentFieldAttributes,
                                                        attributeCount: entity.attributes.count, required: requiredAttributes,
                                                        indexed: indexes.map(\.attribute))
        self.writePlan = writePlanStorage.plan
        // Model types write their fields straight into the record only when they write all of them.
        self.currentFollowsModelOrder = keptAttributes.isEmpty
            && zip(currentFieldAttributes, currentFieldAttributes.dropFirst()).allSatisfy { $0 < $1 }
    }

    @inline(__always)
    func isIndexedSlot(_ slot: Int) -> Bool { slot < indexedSlots.count && indexedSlots[slot] }

    /// The position of attribute `name`. Comparing a few short names is faster than hashing one, so small
    /// entities are searched in order; larger ones through the dictionary.
    @inline(__always)
    func position(of name: String) -> Int? {
        if MemoryLayout<String>.size == 16, attributeCount <= 32 {
            let w = unsafeBitCast(name, to: (Int, Int).self)
            let found = attributeNameWords.withUnsafeBufferPointer { words -> Int? in
                var i = 0
                while i < attributeCount {
                    if words[2 * i] == w.0, words[2 * i + 1] == w.1 { return i }
                    i += 1
                }
                return nil
            }
            if let found { return found }
        }
        if attributeNames.count <= 12 {
            // Names of another length are passed over without a string comparison.
            let length = name.utf8.count
            for i in attributeNames.indices where attributeNameLengths[i] == length && attributeNames[i] == name { return i }
            return nil
        }
        return attributeIndex[name]
    }

    func layout(_ id: UInt32) -> LayoutProjection? {
        if current.layout.id == id { return current }
        return layouts.first { $0.layout.id == id }
    }

    func relationship(_ name: String) throws -> RelationshipBinding {
        relationships[try relationshipPosition(name)]
    }

    /// The position of relationship `name` in ``relationships``.
    /// - Throws: ``StoreError/unknownRelationship(entity:name:)``.
    func relationshipPosition(_ name: String) throws -> Int {
        // A few short names are compared faster than one is hashed (a policy links by name, once per object).
        if relationships.count <= 8 {
            for i in relationships.indices where relationships[i].name == name { return i }
            throw StoreError.unknownRelationship(entity: self.name, name: name)
        }
        guard let i = relationshipIndex[name] else { throw StoreError.unknownRelationship(entity: self.name, name: name) }
        return i
    }

    func attribute(_ name: String) throws -> Int {
        guard let i = position(of: name) else { throw StoreError.unknownAttribute(entity: self.name, name: name) }
        return i
    }

    func index(on attribute: Int) -> IndexBinding? { indexes.first { $0.attribute == attribute } }
}
