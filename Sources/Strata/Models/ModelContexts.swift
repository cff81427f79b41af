import Foundation

extension ReadContext {
    /// The binding of a model type's entity, after checking that the type declares the entity exactly as the
    /// store's model does (a type of another version of the model would read and write other fields).
    @inline(__always)
    func modelBinding<T: EntityModel>(_ type: T.Type) throws -> EntityBinding {
        // The type checked last: no lookup by name, no lock. (The context tracks the entities an observed query
        // reads from its start, so the entity was tracked when it was first looked up.)
        if let last = lastModel, last.type == ObjectIdentifier(T.self) { return last.binding.takeUnretainedValue() }
        let binding = try binding(T.entityName)
        try binding.verifyModel(T.self)
        lastModel = (ObjectIdentifier(T.self), Unmanaged.passUnretained(binding))
        return binding
    }

    /// Runs `body` with the binding of model type `T` lent (``modelBinding(_:)``, counting no reference when `T`
    /// is the type used last, which is what a loop of inserts or fetches does).
    @inline(__always)
    func withModelBinding<T: EntityModel, R>(_ type: T.Type, _ body: (EntityBinding) throws -> R) throws -> R {
        if let last = lastModel, last.type == ObjectIdentifier(T.self) { return try last.binding._withUnsafeGuaranteedRef(body) }
        return try body(try modelBinding(T.self))
    }

    /// Decodes a stored record as a value of `T`.
    @inline(__always)
    func decodeModel<T: EntityModel>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, id: UInt64, binding: EntityBinding) throws -> T {
        // Every field is located at once into the context's offset table: each property is then read in place.
        // (No closure: in this generic function, one would look up generic metadata for every object.)
        let offsets = lendOffsets(RecordFields.fieldCapacity(of: binding))
        defer { returnOffsets(offsets) }
        var reader = try ModelReader(record: bytes, id: id, binding: binding, context: self, offsets: offsets)
        let value = try T(from: &reader)
        try reader.finish()
        return value
    }

    /// The object `id` as a value of the model type `T`, or nil when no object of its entity has that identifier.
    /// - Throws: ``StoreError/Code-swift.struct/corruptedRecord`` when its record is damaged;
    ///   ``StoreError/Code-swift.struct/typeMismatch`` when `T` declares its entity otherwise than the store's model.
    public func fetch<T: EntityModel>(_ type: T.Type, id: ObjectID) throws -> T? {
        try withModelBinding(T.self) { binding in
            guard let bytes = try ObjectKey.with(id.rawValue, { try txn.get(binding.dbi, key: $0) }) else { return nil }
            return try decodeModel(T.self, bytes, id: id.rawValue, binding: binding)
        }
    }

    /// The object `id` of `binding`'s entity as a value of `T` (checked against the binding).
    func fetchModel<T: EntityModel>(_ type: T.Type, id: ObjectID, binding: EntityBinding) throws -> T? {
        try binding.verifyModel(T.self)
        guard let bytes = try ObjectKey.with(id.rawValue, { try txn.get(binding.dbi, key: $0) }) else { return nil }
        return try decodeModel(T.self, bytes, id: id.rawValue, binding: binding)
    }

    /// The objects of `T`'s entity, as a lazy query filtered, sorted and limited by key paths.
    public func objects<T: EntityModel>(_ type: T.Type) throws -> ModelQuery<T> {
        ModelQuery(context: self, binding: try modelBinding(T.self))
    }

    /// The number of objects of `T`'s entity, in constant time.
    public func count<T: EntityModel>(_ type: T.Type) throws -> Int {
        try txn.entryCount(try modelBinding(T.self).dbi)
    }

    /// A dynamic object as a value of the model type `T` (its entity must be `T`'s).
    public func model<T: EntityModel>(_ type: T.Type, from object: DynamicObject) throws -> T {
        let binding = try modelBinding(T.self)
        guard object.binding.name == binding.name else {
            throw StoreError.typeMismatch(expected: "an object of \(binding.name)", actual: "an object of \(object.entityName)")
        }
        var reader = ModelReader(values: object.values, id: object.id, binding: binding, context: self)
        return try T(from: &reader)
    }
}

extension WriteContext {
    /// Inserts a value of a model type as a new object.
    /// - Returns: the new object's identifier (the value's ``EntityModel/objectID`` is not read).
    /// - Throws: ``StoreError/Code-swift.struct/uniqueConstraintViolation``, and for relationships
    ///   ``StoreError/Code-swift.struct/objectNotFound`` and ``StoreError/Code-swift.struct/relationshipCountViolation``.
    @discardableResult
    public func insert<T: EntityModel>(_ value: T) throws -> ObjectID {
        try withModelBinding(T.self) { binding in ObjectID(rawValue: try insertModel(value, binding: binding, id: nil)) }
    }

    /// Inserts a model value into `binding`'s entity, under `id` (a migration keeping a source's identifier)
    /// or a new identifier.
    func insertModel<T: EntityModel>(_ value: T, binding: EntityBinding, id given: UInt64?) throws -> UInt64 {
        try withModelWriter(binding) { record in try insertModel(value, binding: binding, id: given, record: &record) }
    }

    /// Runs `body` with a writer for `binding`'s records, lent this context's buffers (a write nested in another's
    /// gets buffers of its own).
    @inline(__always)
    func withModelWriter<R>(_ binding: EntityBinding, _ body: (inout ModelWriter) throws -> R) throws -> R {
        var record: ModelWriter
        if let buffers = idleWriteBuffers.take() {
            record = ModelWriter(binding: binding, buffers: buffers)
        } else {
            record = ModelWriter(binding: binding, buffers: ModelWriteBuffers(capacity: 512))
        }
        record.begin()
        let result: R
        do {
            result = try body(&record)
        } catch {
            idleWriteBuffers = record.returningBuffers()
            throw error
        }
        idleWriteBuffers = record.returningBuffers()
        return result
    }

    private func insertModel<T: EntityModel>(_ value: T, binding: EntityBinding, id given: UInt64?,
                                             record: inout ModelWriter) throws -> UInt64 {
        try value.write(to: &record)
        try record.finish()
        let id = try given ?? allocateID()
        // The writer's lists are read by position: a `for … in` over them would copy each list (a retain and a
        // release of its storage per object written).
        for i in 0..<record.indexValues.count {
            let (slot, value) = record.indexValues[i]
            if let index = binding.index(on: slot) { try addIndexEntry(binding, index, value, id: id) }
        }
        if record.isDirect {
            try binding.seal(&record.bytes, id: id)
        } else {
            var row = record.values
            try binding.validate(&row)
            try binding.encode(row, id: id, into: &record.bytes)
        }
        try storeNewRecord(binding, id: id, record: record.bytes.buffer)
        for i in 0..<record.links.count {
            let (position, targets) = record.links[i]
            if targets.isEmpty { continue }
            let r = binding.relationships[position]
            for target in targets { try link(binding, r, id, target) }
        }
        return id
    }

    /// Stores a changed value of a model type as the object its ``EntityModel/objectID`` names (attributes,
    /// and the relationships the type declares).
    /// - Throws: ``StoreError/Code-swift.struct/objectNotFound`` when the value has no identifier or the
    ///   object was deleted.
    public func update<T: EntityModel>(_ value: T) throws {
        let binding = try modelBinding(T.self)
        guard let id = value.objectID?.rawValue else {
            throw StoreError.objectNotFound(entity: binding.name, id: ObjectID(rawValue: 0))
        }
        guard let oldBytes = try ObjectKey.with(id, { try txn.get(binding.dbi, key: $0) }) else {
            throw StoreError.objectNotFound(entity: binding.name, id: ObjectID(rawValue: id))
        }
        noteRewritten(binding, oldBytes)
        let old = try binding.decodeValues(oldBytes, id: id)
        try withModelWriter(binding) { record in try update(value, binding: binding, id: id, old: old, record: &record) }
    }

    private func update<T: EntityModel>(_ value: T, binding: EntityBinding, id: UInt64, old: [Value],
                                        record: inout ModelWriter) throws {
        try value.write(to: &record)
        try record.finish()
        for i in 0..<record.indexValues.count {
            let (slot, new) = record.indexValues[i]
            guard let index = binding.index(on: slot), old[slot] != new else { continue }
            try removeIndexEntry(index, old[slot], id: id)
            try addIndexEntry(binding, index, new, id: id)
        }
        if record.isDirect {
            RecordCodec.seal(&record.bytes, entityTag: binding.tag, id: id)
        } else {
            var row = record.values
            // Attributes kept for a newer model (the type does not declare them) keep their stored values.
            for a in binding.keptAttributes where a < row.count && a < old.count { row[a] = old[a] }
            try binding.validate(&row)
            try binding.encode(row, id: id, into: &record.bytes)
        }
        let new = try binding.decodeValues(record.bytes.buffer, id: id)
        changes.updated(id, entity: binding.position, properties: binding.changedAttributes(from: old, to: new))
        if txn.isRotatingKeys {
            // Re-sealed under the new key below: the entries of unchanged values move to its hash too.
            try RotatingIndexEntries.moveToCurrentKey(binding.indexes.filter { old[$0.attribute] == new[$0.attribute] },
                                             values: new, id: id, in: txn)
        }
        try ObjectKey.with(id) { key in
            _ = try txn.put(binding.dbi, key: key, value: record.bytes.buffer)
        }
        for i in 0..<record.links.count {
            let (position, targets) = record.links[i]
            try setLinks(binding, binding.relationships[position], id, targets)
        }
    }

    /// Deletes the object a model value was read as, applying delete rules.
    public func delete<T: EntityModel>(_ value: T) throws {
        guard let id = value.objectID else { return }
        try delete(id, of: try modelBinding(T.self).name)
    }
}

extension EntityBinding {
    /// Checks that `T` declares this entity exactly as the bound model does (same attributes in the same
    /// order with the same types, same relationships). Remembered per type once checked.
    func verifyModel<T: EntityModel>(_ type: T.Type) throws {
        let key = ObjectIdentifier(T.self)
        if verifiedModels.withLock({ $0.contains(key) }) { return }
        guard Schema.normalizingDefaults(T.entity) == declaredEntity else {
            throw StoreError.typeMismatch(
                expected: "a model type that declares entity \(name) as the store's model \(entity.name) does",
                actual: "\(T.self), which declares it otherwise (a type of another model version?)")
        }
        verifiedModels.withLock { if !$0.contains(key) { $0.append(key) } }
    }
}
