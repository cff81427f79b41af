import Foundation

/// Reads objects inside ``Store/read(_:)``: a consistent snapshot of the store, unaffected by writes that
/// commit while it is open.
///
/// A context, and every query and cursor made from it, is valid only inside its closure; used afterwards
/// it throws ``StoreError/transactionEnded``.
///
/// ## Topics
/// ### Objects
/// - ``object(_:of:)``
/// - ``objects(_:)``
/// - ``count(_:)``
/// ### Relationships
/// - ``related(_:_:)``
/// - ``relatedObjects(_:_:)``
/// - ``relatedCount(_:_:)``
public class ReadContext {
    let txn: Transaction
    let model: BoundModel

    init(txn: Transaction, model: BoundModel) {
        self.txn = txn
        self.model = model
    }

    /// The model the store is read with.
    public var schema: Schema { model.schema }

    /// The last binding looked up: loops name the same entity again and again.
    @exclusivity(unchecked) private var lastBinding: EntityBinding?
    /// The last model type (``EntityModel``) checked against its entity's binding, with that binding: typed loops
    /// name the same type again and again (see ``modelBinding(_:)``).
    /// (Not counted: `model`, which this context keeps, holds every binding.)
    @exclusivity(unchecked) var lastModel: (type: ObjectIdentifier, binding: Unmanaged<EntityBinding>)?

    /// The entities this context's reads named, when an observation tracks them (nil otherwise).
    @exclusivity(unchecked) var region: Set<UInt32>?

    /// A field offset table lent to one typed decode at a time (``decodeModel(_:_:id:binding:)`` locates a
    /// record's fields into it); a decode made while it is lent gets a table of its own.
    @exclusivity(unchecked) private var offsetTable: UnsafeMutablePointer<Int>?
    @exclusivity(unchecked) private var offsetTableCapacity = 0
    @exclusivity(unchecked) private var offsetTableIsLent = false

    deinit { offsetTable?.deallocate() }

    /// A table of at least `capacity` offsets, until ``returnOffsets(_:)``.
    @inline(__always)
    func lendOffsets(_ capacity: Int) -> UnsafeMutablePointer<Int> {
        if offsetTableIsLent { return .allocate(capacity: capacity) }
        if let table = offsetTable, offsetTableCapacity >= capacity {
            offsetTableIsLent = true
            return table
        }
        offsetTable?.deallocate()
        let table = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        offsetTable = table
        offsetTableCapacity = capacity
        offsetTableIsLent = true
        return table
    }

    @inline(__always)
    func returnOffsets(_ table: UnsafeMutablePointer<Int>) {
        if table == offsetTable { offsetTableIsLent = false } else { table.deallocate() }
    }

    func binding(_ entity: String) throws -> EntityBinding {
        if let last = lastBinding, last.name == entity { return last }
        let binding = try model.entity(entity)
        lastBinding = binding
        if region != nil { track(binding) }
        return binding
    }

    /// Adds an entity to the observed region, with the entities its relationships lead to (a query may
    /// follow them).
    private func track(_ binding: EntityBinding) {
        region?.insert(binding.tag)
        for r in binding.relationships { region?.insert(model.entities[r.destination].tag) }
    }

    // MARK: Objects

    /// The object of `entity` with identifier `id`, or nil.
    /// - Throws: ``StoreError/corruptedRecord(entity:id:reason:)`` when its record is damaged.
    public func object(_ id: ObjectID, of entity: String) throws -> DynamicObject? {
        let binding = try binding(entity)
        return try object(id.rawValue, binding)
    }

    func object(_ id: UInt64, _ binding: EntityBinding) throws -> DynamicObject? {
        guard let bytes = try ObjectKey.with(id, { try txn.get(binding.dbi, key: $0) }) else { return nil }
        return DynamicObject(id: ObjectID(rawValue: id), binding: binding, values: try binding.decodeValues(bytes, id: id))
    }

    func exists(_ id: UInt64, _ binding: EntityBinding) throws -> Bool {
        try ObjectKey.with(id) { key in try txn.withLookupCursor(binding.dbi) { try $0.contains(key) } }
    }

    /// The objects of an entity, as a lazy query: nothing is read until it is iterated.
    public func objects(_ entity: String) throws -> ObjectQuery {
        ObjectQuery(context: self, binding: try binding(entity))
    }

    /// The number of objects of an entity, in constant time.
    public func count(_ entity: String) throws -> Int {
        try txn.entryCount(try binding(entity).dbi)
    }

    // MARK: Relationships

    /// The identifiers of the objects `object` is linked to through `relationship`, in identifier order.
    public func related(_ object: DynamicObject, _ relationship: String) throws -> [ObjectID] {
        try related(object.id, of: object.entityName, relationship)
    }

    /// The identifiers of the objects linked to object `id` of `entity` through `relationship`.
    public func related(_ id: ObjectID, of entity: String, _ relationship: String) throws -> [ObjectID] {
        let binding = try binding(entity)
        let r = try binding.relationship(relationship)
        return try linkedIDs(id.rawValue, r).map(ObjectID.init(rawValue:))
    }

    /// The objects linked to `object` through `relationship`.
    public func relatedObjects(_ object: DynamicObject, _ relationship: String) throws -> [DynamicObject] {
        let r = try object.binding.relationship(relationship)
        let destination = model.entities[r.destination]
        return try linkedIDs(object.id.rawValue, r).compactMap { try self.object($0, destination) }
    }

    /// The number of objects linked to `object` through `relationship`.
    public func relatedCount(_ object: DynamicObject, _ relationship: String) throws -> Int {
        let r = try object.binding.relationship(relationship)
        return try linkCount(object.id.rawValue, r)
    }

    func linkedIDs(_ id: UInt64, _ r: RelationshipBinding) throws -> [UInt64] {
        let cursor = try txn.sharedCursor(r.dbi)
        var out: [UInt64] = []
        try ObjectKey.with(id) { key in
            guard var entry = try cursor.find(key) else { return }
            while true {
                out.append(try linkTarget(entry.value, r))
                guard let next = try cursor.nextDuplicate() else { break }
                entry = next
            }
        }
        return out
    }

    func firstLinkedID(_ id: UInt64, _ r: RelationshipBinding) throws -> UInt64? {
        try ObjectKey.with(id) { key in
            try txn.withLookupCursor(r.dbi) { cursor in
                guard let entry = try cursor.find(key) else { return nil }
                return try linkTarget(entry.value, r)
            }
        }
    }

    func linkCount(_ id: UInt64, _ r: RelationshipBinding) throws -> Int {
        let cursor = try txn.sharedCursor(r.dbi)
        return try ObjectKey.with(id) { key in
            guard try cursor.find(key) != nil else { return 0 }
            return try cursor.duplicateCount()
        }
    }

    func linkTarget(_ bytes: UnsafeRawBufferPointer, _ r: RelationshipBinding) throws -> UInt64 {
        do {
            return try ObjectKey.decode(bytes)
        } catch {
            throw StoreError.corrupted(path: txn.environment.path,
                                       reason: .structure("a link of \(model.entities[r.entityPosition].name).\(r.name) is \(bytes.count) bytes"))
        }
    }

    // MARK: Index lookups

    /// The index on `attribute` when a query may use it in this transaction's snapshot: an index the store's
    /// maintenance is still building is maintained by writers but incomplete, so queries scan instead.
    /// While a key rotation runs, entries are under either key's hash: queries scan.
    func queryableIndex(_ binding: EntityBinding, on attribute: Int) throws -> IndexBinding? {
        guard let index = binding.index(on: attribute), !txn.isRotatingKeys else { return nil }
        guard index.wasBuilding else { return index }
        return try MaintenanceRecord.read(model.meta, in: txn).buildingIndexes.contains(index.tag) ? nil : index
    }

    /// Identifiers of objects whose indexed attribute has exactly `value`.
    /// (While a key rotation runs, under each key's hash.)
    func indexLookup(_ binding: EntityBinding, attribute: Int, index: IndexBinding, value: Value) throws -> [UInt64] {
        let keys = txn.indexKeys(value)
        let key = keys[0]
        guard key.count <= 511 else { throw StoreError.keyTooLong(length: key.count, maximum: 511) }
        let cursor = try txn.sharedCursor(index.dbi)
        var ids: [UInt64] = []
        for key in keys {
            try key.withUnsafeBytes { k in
                guard var entry = try cursor.find(k) else { return }
                while true {
                    ids.append(try ObjectKey.decode(entry.value))
                    guard let next = try cursor.nextDuplicate() else { break }
                    entry = next
                }
            }
        }
        if IndexKey.isHashed(key) {
            ids = try ids.filter { try object($0, binding)?.values[attribute] == value }
        }
        return ids
    }
}
