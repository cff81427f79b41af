import Foundation

/// What an ``EntityMigrationPolicy`` can do in the instance pass: create destination objects.
public final class InstanceMigrationContext: MigrationContext {
    let mapping: EntityMapping
    /// The destination entities this mapping may create (a handful: searched by comparison, not hashed).
    let allowedEntities: [String]
    // Used by one pass, on the writer's thread: no dynamic exclusivity checks.
    @exclusivity(unchecked) var current: CurrentSource?
    /// The values array of the source object the policy was given last, handed back after its call: the next
    /// source object is decoded into it in place (one array per pass instead of one per object) unless the policy
    /// kept the object.
    @exclusivity(unchecked) var sourceValues: [Value] = []

    init(runner: StepRunner, txn: Transaction, writer: WriteContext, mapping: EntityMapping, associatesInRuns: Bool = false) throws {
        self.mapping = mapping
        var allowed = mapping.destinationEntities
        if let matched = runner.mapping.entities.first(where: { $0.sourceName == mapping.sourceEntity })?.destinationName,
           !allowed.contains(matched) {
            allowed.append(matched)
        }
        self.allowedEntities = allowed
        try super.init(runner: runner, txn: txn, writer: writer, associatesInRuns: associatesInRuns)
    }

    /// Creates a destination object of `entity` (one of the mapping's destination entities) made from the
    /// current source object. With `keepingSourceID`, it takes the source object's identifier (at most one
    /// destination object per entity may).
    @discardableResult
    public func insert(_ entity: String, _ values: [String: Value] = [:], keepingSourceID: Bool = false) throws -> ObjectID {
        try withAllowedBinding(entity) { binding in
            var row = try self.row(of: binding, setting: values)
            defer { recycleRow(&row, position: binding.position) }
            return try insertRow(binding, row, keepingSourceID: keepingSourceID)
        }
    }

    /// A row of `binding`'s defaults (``MigrationContext/freshRow(_:)``) with `values` set by attribute name.
    private func row(of binding: EntityBinding, setting values: [String: Value]) throws -> [Value] {
        var row = freshRow(binding)
        for (name, value) in values {
            guard let i = binding.position(of: name) else { throw StoreError.unknownAttribute(entity: binding.name, name: name) }
            row[i] = value
        }
        return row
    }

    /// Creates a destination object from a ``DynamicObject`` of a destination entity, such as the one
    /// ``MigrationContext/inferredObject(for:)`` returns, changed by the policy.
    ///
    /// The object is consumed: its values array is kept for the next object the policy makes of the entity
    /// (``MigrationContext/makeObject(_:)``, ``MigrationContext/inferredObject(for:)``), so that a policy making
    /// an object per source object allocates none. An object the policy goes on using after the call is left as
    /// it was (the array is then shared, and copied when reused).
    @discardableResult
    public func insert(_ object: consuming DynamicObject, keepingSourceID: Bool = true) throws -> ObjectID {
        try object.checkAssignments()
        // Read through an immutable binding, the values are passed on without counting a reference to them.
        let inserted = consume object
        let id = try withAllowedBinding(inserted.binding.name) { binding in
            guard binding === inserted.binding || binding.attributeNames == inserted.binding.attributeNames else {
                throw StoreError.typeMismatch(expected: "an object of the destination model's \(binding.name)", actual: "another model's")
            }
            return try insertRow(binding, inserted.values, keepingSourceID: keepingSourceID)
        }
        var spare = consume inserted
        // The position read first: passing the binding beside an access to `spare` would count a reference to it.
        let position = spare.binding.position
        recycleRow(&spare.values, position: position)
        return id
    }

    private func insertRow(_ binding: EntityBinding, _ values: [Value], keepingSourceID: Bool) throws -> ObjectID {
        try insertAssociated(binding, keepingSourceID: keepingSourceID) { id in try writer.insertRow(binding, values: values, id: id) }
    }

    /// Inserts a value of a destination model type made from the current source object.
    func insertModel<T: EntityModel>(_ value: T, keepingSourceID: Bool) throws -> ObjectID {
        try withCheckedBinding(T.self, { try allowedBinding(T.entityName) }) { binding in
            try insertAssociated(binding, keepingSourceID: keepingSourceID) { id in
                try writer.insertModel(value, binding: binding, id: id)
            }
        }
    }

    /// Runs `insert` with the identifier the new object takes (the source's, or nil for a new one), and
    /// records which source object a new one was made from.
    @inline(__always)
    private func insertAssociated(_ binding: EntityBinding, keepingSourceID: Bool, _ insert: (UInt64?) throws -> UInt64) throws -> ObjectID {
        let id: UInt64
        if keepingSourceID, let source = current {
            // The object that keeps the source's identifier is found without an association entry.
            try writer.reserveIDs(through: source.id)
            id = try insert(source.id)
        } else {
            id = try insert(nil)
            if let source = current { try associate(source: source.id, tag: binding.tag, id: id) }
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
        let id = try withAllowedBinding(entity) { binding in
            var row = try self.row(of: binding, setting: values)
            defer { recycleRow(&row, position: binding.position) }
            return ObjectID(rawValue: try writer.insertRow(binding, values: row, id: nil))
        }
        try setLookup(table, key, to: id)
        return id
    }

    func allowedBinding(_ entity: String) throws -> EntityBinding {
        try withAllowedBinding(entity) { $0 }
    }

    /// Runs `body` with the destination binding of `entity` lent, counting no reference (the runner's destination
    /// model keeps it): a policy names its entities once or twice per object.
    /// - Throws: ``StoreError/unknownEntity(_:)`` when `entity` is not one of the mapping's destinations.
    @inline(__always)
    func withAllowedBinding<R>(_ entity: String, _ body: (EntityBinding) throws -> R) throws -> R {
        guard allowedEntities.contains(entity) else {
            throw StoreError.unknownEntity("\(entity) (not a destination of the mapping for \(mapping.sourceEntity); list it in `destinations:`)")
        }
        return try withDestinationEntity(named: entity, body)
    }
}
