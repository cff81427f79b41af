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
    /// `sourceReader`, lent to per-object paths without counting a reference (this context keeps it).
    private let sourceReaderReference: Unmanaged<ReadContext>
    /// The runner's destination model for writes, lent the same way (the runner keeps it for the whole step).
    private let destinationModelReference: Unmanaged<BoundModel>
    let writer: WriteContext
    let associations: DatabaseHandle
    let lookups: DatabaseHandle
    /// The bindings of model types this context has checked against the model they are used with (a typed
    /// mapping uses a few: searched in order, without hashing).
    @exclusivity(unchecked) private var checkedModels: [(type: ObjectIdentifier, binding: EntityBinding)] = []
    /// The destination bindings of model types this context inserted, resolved and checked once.
    /// Destination bindings are held here without counting references: the runner's destination model keeps every
    /// one of them for the whole step, and each insert or link borrows its binding.
    @exclusivity(unchecked) private var destinationModels: [(type: ObjectIdentifier, binding: Unmanaged<EntityBinding>)] = []
    /// Destination relationships named by key paths (the key path is kept, so its address is not reused).
    @exclusivity(unchecked) private var keyPathRelationships: [(id: ObjectIdentifier, keyPath: AnyKeyPath, binding: Unmanaged<EntityBinding>,
                                                                relationship: Int)] = []

    /// Whether this context's associations are kept as runs (``AssociationRun``), and the runs it has not
    /// stored yet (one per destination entity it inserts into).
    private let associatesInRuns: Bool
    @exclusivity(unchecked) private var openRuns: [AssociationRun] = []
    /// Whether the association database may hold runs (checked once per context, set when this one stores one).
    @exclusivity(unchecked) private var mayHoldStoredRuns: Bool
    /// The stored run each destination entity's last look-up found (a run is never changed once stored).
    @exclusivity(unchecked) private var storedRunsFound: [AssociationRun] = []
    /// Each destination entity's smallest identifier, where this context inserts no object (see
    /// ``mayHoldKeptIdentifier(_:_:)``).
    @exclusivity(unchecked) private var smallestIdentifiers: [(tag: UInt32, id: UInt64)] = []
    /// The values array of the last object inserted of each destination entity (by the entity's position in the
    /// destination model), handed back by the insert for the next object made of that entity: a policy that makes
    /// an object or two per source object then allocates no array for them (see ``freshRow(_:)``).
    @exclusivity(unchecked) private var spareRows: [[Value]] = []

    /// Whether a context of this kind inserts destination objects (an instance pass's does; a relationship pass's
    /// only links them).
    class var insertsObjects: Bool { true }

    init(runner: StepRunner, txn: Transaction, writer: WriteContext, associatesInRuns: Bool = false) throws {
        self.runner = runner
        self.txn = txn
        self.writer = writer
        let sourceReader = ReadContext(txn: txn, model: runner.source)
        self.sourceReader = sourceReader
        self.sourceReaderReference = Unmanaged.passUnretained(sourceReader)
        self.destinationModelReference = Unmanaged.passUnretained(runner.destinationForWrites)
        self.associatesInRuns = associatesInRuns
        guard let a = try txn.openDatabase(Catalog.associationDatabase, flags: LMDBFlags.dupSort | LMDBFlags.dupFixed, create: false),
              let l = try txn.openDatabase(StepRunner.lookupDatabase, flags: 0, create: false) else {
            throw StoreError.corrupted(path: runner.path, reason: .metadata("the migration's association databases are missing"))
        }
        associations = a
        lookups = l
        mayHoldStoredRuns = try [AssociationRun.keyPrefix].withUnsafeBytes { try txn.sharedCursor(a).seek($0) } != nil
    }

    /// Runs `body` with the source model's read context lent, counting no reference.
    @inline(__always)
    func withSourceReader<R>(_ body: (ReadContext) throws -> R) rethrows -> R {
        try sourceReaderReference._withUnsafeGuaranteedRef(body)
    }

    /// Runs `body` with the destination entity named `name` lent, counting no reference: a policy names
    /// entities once or twice per object.
    /// - Throws: ``StoreError/unknownEntity(_:)``.
    @inline(__always)
    func withDestinationEntity<R>(named name: String, _ body: (EntityBinding) throws -> R) throws -> R {
        try destinationModelReference._withUnsafeGuaranteedRef { model in try model.withEntity(named: name, body) }
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
        let s = source.rawValue
        guard let entity else { return try destinations(for: s, among: runner.destination.entities, tag: nil) }
        // One entity, the common call: its binding lent, no list of candidates made (the model for writes has the
        // destination model's entities, databases and tags; only indexes differ).
        return try destinationModelReference._withUnsafeGuaranteedRef { model in
            try model.withEntity(named: entity) { binding in try destinations(for: s, among: CollectionOfOne(binding), tag: binding.tag) }
        }
    }

    /// ``destinations(for:entity:)`` among `candidates` (every destination entity, `tag` nil, or one, `tag` its tag).
    private func destinations(for source: UInt64, among candidates: some Collection<EntityBinding>, tag: UInt32?) throws -> [ObjectID] {
        var out: [ObjectID] = []
        // The object that kept the source's identifier, if any (one look-up per candidate entity that may hold it).
        for binding in candidates where try mayHoldKeptIdentifier(source, binding) && writer.exists(source, binding) {
            out.append(ObjectID(rawValue: source))
            break
        }
        // Then the objects made from it, by entity and identifier: associations stored singly, and runs.
        var made: [(tag: UInt32, id: UInt64)] = []
        let cursor = try txn.sharedCursor(associations)
        try ObjectKey.with(source) { key in
            guard var entry = try cursor.find(key) else { return }
            while true {
                let (t, id) = try MigrationContext.decodeReference(entry.value)
                if (tag == nil || tag == t) && id != source { made.append((t, id)) }
                guard let next = try cursor.nextDuplicate() else { break }
                entry = next
            }
        }
        for binding in candidates {
            if let id = try runDestination(for: source, tag: binding.tag) { made.append((binding.tag, id)) }
        }
        if made.count > 1 { made.sort { ($0.tag, $0.id) < ($1.tag, $1.id) } }
        out.reserveCapacity(out.count + made.count)
        for m in made { out.append(ObjectID(rawValue: m.id)) }
        return out
    }

    /// Whether an object of `binding` may have identifier `source`: always, where this context inserts objects;
    /// else unless `source` is below the entity's smallest identifier, read once per context (its transaction
    /// adds no object). Objects made by a policy take identifiers after every source object's, so a relationship
    /// pass asking for the sections made from a post needs no look-up of a section keeping the post's identifier.
    private func mayHoldKeptIdentifier(_ source: UInt64, _ binding: EntityBinding) throws -> Bool {
        guard !Self.insertsObjects else { return true }
        if let known = smallestIdentifiers.first(where: { $0.tag == binding.tag }) { return source >= known.id }
        // An empty entity holds nothing; a key that is not an object's (none should be) turns the shortcut off.
        let smallest = try txn.withLookupCursor(binding.dbi) { cursor in
            try cursor.first().map { (try? ObjectKey.decode($0.key)) ?? 0 } ?? UInt64.max
        }
        smallestIdentifiers.append((binding.tag, smallest))
        return source >= smallest
    }

    /// Links destination object `id` of `entity` to `target` through `relationship` (destination names); the
    /// inverse is linked too. Both objects must exist: in the instance pass, objects this policy created
    /// (so a policy can link the objects it makes of one source object as it makes them) or objects of
    /// entities the stage does not rebuild; in the relationship pass, any destination object.
    public func link(_ id: ObjectID, of entity: String, _ relationship: String, to target: ObjectID) throws {
        try withDestinationEntity(named: entity) { binding in
            try writer.link(binding, relationshipAt: try binding.relationshipPosition(relationship), id.rawValue, target.rawValue)
        }
    }

    /// Links destination object `id` to `target` through the relationship of `T` that `keyPath` names (a typed
    /// mapping's link: the key path is resolved once per context).
    func link<T: EntityModel>(_ id: ObjectID, _ type: T.Type, _ keyPath: AnyKeyPath, to target: ObjectID) throws {
        let key = ObjectIdentifier(keyPath)
        for i in keyPathRelationships.indices where keyPathRelationships[i].id == key {
            let position = keyPathRelationships[i].relationship
            return try keyPathRelationships[i].binding._withUnsafeGuaranteedRef { binding in
                try writer.link(binding, relationshipAt: position, id.rawValue, target.rawValue)
            }
        }
        let binding = try runner.destinationForWrites.entity(T.entityName)
        let r = try binding.relationship(try T.requirePropertyName(keyPath))
        keyPathRelationships.append((key, keyPath, Unmanaged.passUnretained(binding), r.position))
        try writer.link(binding, r, id.rawValue, target.rawValue)
    }

    /// Checks, once per context, that model type `T` declares `binding`'s entity as the model does.
    @inline(__always)
    func verifyOnce<T: EntityModel>(_ type: T.Type, _ binding: EntityBinding) throws {
        let key = ObjectIdentifier(T.self)
        for i in checkedModels.indices where checkedModels[i].type == key && checkedModels[i].binding === binding { return }
        try binding.verifyModel(T.self)
        checkedModels.append((key, binding))
    }

    /// The destination binding of model type `T`, resolved by `resolve` (from the runner's destination model) and
    /// checked once per context, lent to `body`.
    @inline(__always)
    func withCheckedBinding<T: EntityModel, R>(_ type: T.Type, _ resolve: () throws -> EntityBinding,
                                               _ body: (EntityBinding) throws -> R) throws -> R {
        let key = ObjectIdentifier(T.self)
        for i in destinationModels.indices where destinationModels[i].type == key {
            return try destinationModels[i].binding._withUnsafeGuaranteedRef(body)
        }
        let binding = try resolve()
        try binding.verifyModel(T.self)
        destinationModels.append((key, Unmanaged.passUnretained(binding)))
        return try body(binding)
    }

    /// Records that destination object `id` (of the entity tagged `tag`) was made from source object `source`, for
    /// ``destinations(for:entity:)``.
    func associate(source: UInt64, tag: UInt32, id: UInt64) throws {
        if associatesInRuns {
            for i in openRuns.indices where openRuns[i].tag == tag {
                let run = openRuns[i]
                if run.isContinued(by: source, id) {
                    openRuns[i].count += 1
                    return
                }
                // A second object of the entity from one source (or a source out of order) is a single entry.
                if source < run.source &+ UInt64(run.count) { return try associateSingly(source: source, tag: tag, id: id) }
                try run.store(in: txn, associations)
                mayHoldStoredRuns = true
                openRuns[i] = AssociationRun(tag: tag, source: source, destination: id, count: 1)
                return
            }
            openRuns.append(AssociationRun(tag: tag, source: source, destination: id, count: 1))
            return
        }
        try associateSingly(source: source, tag: tag, id: id)
    }

    /// The object of the entity tagged `tag` that a run (open in this context, or stored) says `source` made.
    private func runDestination(for source: UInt64, tag: UInt32) throws -> UInt64? {
        for run in openRuns where run.tag == tag {
            if let id = run.destination(for: source) { return id }
        }
        guard mayHoldStoredRuns else { return nil }
        // A pass asks in key order: the stored run that answered last usually covers this source too.
        for run in storedRunsFound where run.tag == tag {
            if let id = run.destination(for: source) { return id }
        }
        guard let run = try AssociationRun.stored(covering: source, tag: tag, in: txn, associations) else { return nil }
        if let i = storedRunsFound.firstIndex(where: { $0.tag == tag }) { storedRunsFound[i] = run } else { storedRunsFound.append(run) }
        return run.destination(for: source)
    }

    /// Stores the runs this context kept open: before its transaction commits, so they commit with the
    /// objects they describe.
    func storeOpenRuns() throws {
        for run in openRuns { try run.store(in: txn, associations) }
        if !openRuns.isEmpty { mayHoldStoredRuns = true }
        openRuns.removeAll(keepingCapacity: true)
    }

    /// Records one association as its own entry.
    private func associateSingly(source: UInt64, tag: UInt32, id: UInt64) throws {
        var reference = MigrationContext.Reference(tag: tag, id: id)
        _ = try ObjectKey.with(source) { k in
            // Source objects are visited in key order, and new objects take increasing identifiers: associations
            // are appended, unless a policy inserts objects of several entities for one source.
            try withUnsafeBytes(of: &reference.bytes) { vb in try txn.addDuplicate(associations, key: k, value: vb) }
        }
    }

    /// A new, unsaved object of a destination entity with its default values, to fill through its subscript
    /// and pass to ``InstanceMigrationContext/insert(_:keepingSourceID:)``.
    public func makeObject(_ entity: String) throws -> DynamicObject {
        try withDestinationEntity(named: entity) { binding in
            DynamicObject(id: ObjectID(rawValue: 0), binding: binding, values: freshRow(binding))
        }
    }

    /// A row of `binding`'s initial values to fill: the spare array an insert handed back (``recycleRow(_:position:)``),
    /// its values replaced in place, or a new one.
    ///
    /// Reusing the array is safe whoever else holds it: a policy that kept the object it inserted shares the
    /// array, and the first write here then copies it (copy on write), leaving the kept object as it was.
    @inline(__always)
    func freshRow(_ binding: EntityBinding) -> [Value] {
        let p = binding.position
        guard p < spareRows.count, spareRows[p].count == binding.initialValues.count else {
            return binding.initialValues.withOwnStorage()
        }
        var row: [Value] = []
        swap(&row, &spareRows[p])
        binding.initialValues.withUnsafeBufferPointer { initial in
            row.withUnsafeMutableBufferPointer { out in
                for i in out.indices { out[i] = initial[i] }
            }
        }
        return row
    }

    /// Keeps `row`, an inserted object's values, for the next ``freshRow(_:)`` of the entity at `position` in the
    /// destination model (one spare per entity; `row` is left empty).
    @inline(__always)
    func recycleRow(_ row: inout [Value], position p: Int) {
        if p >= spareRows.count { spareRows.append(contentsOf: repeatElement([], count: p + 1 - spareRows.count)) }
        swap(&row, &spareRows[p])
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
        return Array(table.utf8) + [0] + txn.indexKey(key)
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
        // The program is lent and its steps read in place: a policy calls this once per object.
        try runner.withInference(for: source.binding) { program in
            var values = freshRow(program.destination)
            program.steps.withUnsafeBufferPointer { steps in
                for i in steps.indices {
                    var v = Widening.convert(source.values[steps[i].source], steps[i].conversion)
                    if v.isNull, let r = steps[i].nullReplacement { v = r }
                    values[steps[i].destination] = v
                }
            }
            for (a, v) in program.constants { values[a] = v }
            return DynamicObject(id: source.id, binding: program.destination, values: values)
        }
    }
}
