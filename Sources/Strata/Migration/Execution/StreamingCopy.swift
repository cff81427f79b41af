import Foundation

/// A declared mapping (``EntityMapping/extract(_:from:linkedBy:values:skippingNil:)``,
/// ``EntityMapping/deduplicate(_:of:into:as:linkedBy:values:)``, ``EntityMapping/move(_:into:values:)``) compiled
/// for one step: the records it writes are transcoded from each source record field by field (``RecordTranscoder``,
/// one program per source layout), with no per-object closure and no ``DynamicObject``; new objects take
/// identifiers from the transaction's counter in increasing runs and are appended, and links are written directly.
///
/// It runs inside the instance pass of its mapping, in the step's batches: whatever it writes for a source object
/// commits with the journal's checkpoint, as every policy's work does.
final class StreamingCopy {
    let declaration: MappingDeclaration
    private let sourceTag: UInt32
    /// The source object's own destination object (same identifier, inferred values), when the declaration keeps it.
    private let kept: CopyTarget?
    /// The objects the declaration creates.
    private let created: CopyTarget
    /// Extract: the created entity's relationship to the kept object. Deduplicate: the kept entity's relationship to
    /// the shared object.
    private let link: RelationshipBinding?
    /// Extract: the created record's field whose null means "no object for this source".
    private let skipField: Int?
    /// Deduplicate: the source attribute whose values are deduplicated, and the lookup table that holds them.
    private let keyAttribute: Int?
    private let table: String
    /// Whether new objects are recorded as made from their source object (for ``MigrationContext/destinations(for:entity:)``):
    /// only when a policy of the stage could ask. A stage of declared mappings alone runs no code that does.
    private let recordsAssociations: Bool

    init(_ declaration: MappingDeclaration, sourceEntity: String, runner: StepRunner) throws {
        self.declaration = declaration
        recordsAssociations = runner.stage?.passes.joined().contains { $0.declaration == nil } ?? false
        let sourceBinding = try runner.source.entity(sourceEntity)
        guard let sourceEntry = runner.sourceCatalog.entity(named: sourceEntity),
              let sourceModel = runner.sourceSchema.entity(named: sourceEntity) else {
            throw StoreError.unknownEntity(sourceEntity)
        }
        sourceTag = sourceEntry.tag
        func invalid(_ failure: DecodeFailure) -> StoreError {
            StoreError.invalidEntityMapping(stage: runner.sourceVersion, runner.destinationVersion, mapping: sourceEntity,
                                            problem: failure.reason, entity: declaration.createdEntity)
        }
        let createdName = declaration.createdEntity
        let createdBinding = try runner.destinationForWrites.entity(createdName)
        guard let createdEntry = runner.destination.catalog.entity(named: createdName),
              let createdModel = runner.destinationSchema.entity(named: createdName) else {
            throw StoreError.unknownEntity(createdName)
        }
        var values = declaration.values
        if case .move = declaration {
            for a in createdModel.attributes where values[a.name] == nil && sourceModel.attribute(named: a.name) != nil {
                values[a.name] = .attribute(a.name)
            }
        }
        do {
            created = CopyTarget(createdBinding, try StreamingCopy.transcoder(
                into: createdEntry, createdModel, from: sourceEntry, sourceModel, values: values))
        } catch let failure as DecodeFailure {
            throw invalid(failure)
        }
        var keptBinding: EntityBinding? = nil
        if declaration.keepsSource {
            guard let keptName = runner.mapping.entities.first(where: { $0.sourceName == sourceEntity })?.destinationName,
                  let plan = runner.mapping.entity(keptName), let keptEntry = runner.destination.catalog.entity(named: keptName) else {
                throw StoreError.unknownEntity("(no destination entity matches \(sourceEntity))")
            }
            let binding = try runner.destinationForWrites.entity(keptName)
            do {
                kept = CopyTarget(binding, try RecordTranscoder(source: sourceEntry, destination: keptEntry, plan: plan))
            } catch let failure as DecodeFailure {
                throw invalid(failure)
            }
            keptBinding = binding
        } else {
            kept = nil
        }
        switch declaration {
        case .extract(_, let relationship, let values, let skippingNil):
            link = try createdBinding.relationship(relationship)
            skipField = skippingNil.flatMap { skip in
                let name = values.first { $0.value.sourceAttribute == skip }?.key
                return createdEntry.attributes.firstIndex { $0 == name }
            }
            keyAttribute = nil
            table = ""
        case .deduplicate(let attribute, _, let key, let relationship, _):
            let name = relationship.split(separator: ".").last.map(String.init) ?? relationship
            link = try keptBinding?.relationship(name)
            skipField = nil
            keyAttribute = try sourceBinding.attribute(attribute)
            // The lookup table of the mapping's values (lookup table names are at most 32 bytes).
            table = String(decoding: Array("\u{1}\(createdName).\(key)".utf8.prefix(32)), as: UTF8.self)
        case .move:
            link = nil
            skipField = nil
            keyAttribute = nil
            table = ""
        }
    }

    /// Writes what the declaration makes of one source object.
    func copy(_ source: SourceRecord, _ context: MigrationContext) throws {
        let writer = context.writer
        if let kept {
            try kept.fill(source, sourceTag: sourceTag)
            try kept.checkRequired()
            try writer.reserveIDs(through: source.id)
            try kept.store(as: source.id, in: writer)
        }
        switch declaration {
        case .move:
            try created.fill(source, sourceTag: sourceTag)
            try created.checkRequired()
            try writer.reserveIDs(through: source.id)
            try created.store(as: source.id, in: writer)
        case .extract:
            guard let kept else { throw StoreError.internalInconsistency("an extract without its source's own object") }
            try created.fill(source, sharingWith: kept)
            if let skipField, created.isNull(field: skipField) { return }
            try created.checkRequired()
            let id = try writer.allocateID()
            try created.store(as: id, in: writer)
            if recordsAssociations { try context.associate(source: source.id, tag: created.binding.tag, id: id) }
            if let link { try writer.link(created.binding, link, id, source.id) }
        case .deduplicate:
            guard let keyAttribute, let link, let kept else {
                throw StoreError.internalInconsistency("a deduplication without its key, link or source's own object")
            }
            let value: Value
            do {
                var fields = try RecordFields(source.bytes, id: source.id, entity: source.binding)
                value = try fields.value(of: keyAttribute, type: source.binding.attributeTypes[keyAttribute])
            } catch {
                throw StreamingCopy.corrupted(source, error)
            }
            if value.isNull { return }
            let target: UInt64
            if let existing = try context.lookup(table, value) {
                target = existing.rawValue
            } else {
                try created.fill(source, sharingWith: kept)
                try created.checkRequired()
                target = try writer.allocateID()
                try created.store(as: target, in: writer)
                try context.setLookup(table, value, to: ObjectID(rawValue: target))
            }
            try writer.link(kept.binding, link, source.id, target)
        }
    }

    /// The error for a source record that could not be decoded.
    static func corrupted(_ source: SourceRecord, _ failure: DecodeFailure) -> StoreError {
        StoreError.corruptedRecord(entity: source.binding.name, id: ObjectID(rawValue: source.id), reason: failure.reason)
    }

    /// The transcoder writing records of `created` from records of `source` as `values` says (an attribute
    /// `values` does not give takes its default, or null).
    static func transcoder(into created: Catalog.EntityEntry, _ createdModel: Entity, from source: Catalog.EntityEntry, _ sourceModel: Entity,
                           values: [String: MappedValue]) throws -> RecordTranscoder {
        guard let layout = created.layout(created.currentLayout)?.layout else {
            throw DecodeFailure("no current layout for \(created.name)")
        }
        func field(_ name: String) throws -> (Int, Attribute) {
            guard let k = source.attributes.firstIndex(of: name), let a = sourceModel.attribute(named: name) else {
                throw DecodeFailure("\(source.name) has no stored attribute \(name)")
            }
            return (k, a)
        }
        var programs: [UInt32: RecordTranscoder.Program] = [:]
        for l in source.layouts {
            var operations: [RecordTranscoder.Operation] = []
            for (j, name) in created.attributes.enumerated() {
                let type = layout.fieldTypes[j]
                switch values[name]?.kind {
                case nil:
                    operations.append(.constant(try RecordTranscoder.encode(createdModel.attribute(named: name)?.defaultValue ?? .null, type)))
                case .constant(let v):
                    operations.append(.constant(try RecordTranscoder.encode(v, type)))
                case .attribute(let s):
                    let (k, a) = try field(s)
                    let plan = AttributeMappingPlan(name: name, origin: .source(s), conversion: a.type == type ? nil : .init(from: a.type, to: type),
                                                    nullReplacement: nil)
                    operations.append(try l.sources[k].transcoding(plan, fieldTypes: l.layout.fieldTypes, to: type))
                case .prefix(let s, let length, let suffix):
                    let (k, _) = try field(s)
                    switch l.sources[k] {
                    case .field(let i):
                        operations.append(.textPrefix(index: i, length: length, suffix: Array(suffix.utf8), nullReplacement: nil))
                    case .fieldOrDefault(let i, let d):
                        operations.append(.textPrefix(index: i, length: length, suffix: Array(suffix.utf8),
                                                      nullReplacement: try RecordTranscoder.encode(TextPrefix.apply(d, length: length, suffix: suffix), type)))
                    case .constant(let v):
                        operations.append(.constant(try RecordTranscoder.encode(TextPrefix.apply(v, length: length, suffix: suffix), type)))
                    case .converted, .reshaped:
                        throw DecodeFailure("\(source.name).\(s) is not stored as text in layout \(l.layout.id)")
                    }
                }
            }
            programs[l.layout.id] = RecordTranscoder.Program(sourceLayout: l.layout, operations: operations)
        }
        return RecordTranscoder(entityTag: created.tag, destinationLayout: layout, programs: programs)
    }
}

/// One destination entity a streaming copy writes: its transcoder, the buffer its records are built in, and the
/// fields that must not be null.
final class CopyTarget {
    let binding: EntityBinding
    // Unchecked: a target is used by one pass, on one thread, one record at a time (as WriteContext's buffers are).
    @exclusivity(unchecked) private var transcoder: RecordTranscoder
    @exclusivity(unchecked) private var record = BinaryWriter(capacity: 512)
    @exclusivity(unchecked) private var bitmapOffset = 0
    /// The layout of the source record located last.
    @exclusivity(unchecked) private var layoutID: UInt32 = 0
    /// The current layout's fields holding required attributes.
    private let requiredFields: [Int]

    init(_ binding: EntityBinding, _ transcoder: RecordTranscoder) {
        self.binding = binding
        self.transcoder = transcoder
        let required = Set(binding.requiredAttributes)
        requiredFields = binding.currentFieldAttributes.indices.filter { required.contains(binding.currentFieldAttributes[$0]) }
    }

    /// Transcodes `source`'s record into the buffer, unsealed (its checksum verified, its fields located).
    func fill(_ source: SourceRecord, sourceTag: UInt32) throws {
        do {
            layoutID = try transcoder.locate(source.bytes, id: source.id, sourceTag: sourceTag)
            bitmapOffset = try transcoder.transcodeUnsealed(source.bytes, layoutID: layoutID, fields: transcoder.locatedFields, into: &record)
        } catch {
            throw StreamingCopy.corrupted(source, error)
        }
    }

    /// Transcodes the record `other` filled last (the same source record) into the buffer, unsealed, reusing the
    /// fields `other` located: the record is opened and checked once for both.
    func fill(_ source: SourceRecord, sharingWith other: CopyTarget) throws {
        do {
            bitmapOffset = try transcoder.transcodeUnsealed(source.bytes, layoutID: other.layoutID,
                                                            fields: other.transcoder.locatedFields, into: &record)
        } catch {
            throw StreamingCopy.corrupted(source, error)
        }
    }

    func isNull(field f: Int) -> Bool {
        record.buffer[bitmapOffset + f >> 3] & (UInt8(1) << UInt8(f & 7)) != 0
    }

    /// Checks that the record in the buffer has every required field.
    func checkRequired() throws {
        for f in requiredFields where isNull(field: f) {
            throw StoreError.missingRequiredValue(entity: binding.name, attribute: binding.attributeNames[binding.currentFieldAttributes[f]])
        }
    }

    /// Seals the record in the buffer as object `id`, stores it (appended) and adds its index entries.
    func store(as id: UInt64, in writer: WriteContext) throws {
        RecordCodec.seal(&record, entityTag: binding.tag, id: id)
        try writer.storeNewRecord(binding, id: id, record: record.buffer)
        guard !binding.indexes.isEmpty else { return }
        do {
            var fields = try RecordFields(record.buffer, id: id, entity: binding)
            for index in binding.indexes {
                try writer.addIndexEntry(binding, index, try fields.value(of: index.attribute, type: binding.attributeTypes[index.attribute]), id: id)
            }
        } catch let failure as DecodeFailure {
            throw StoreError.internalInconsistency("a record the migration wrote for \(binding.name): \(failure.reason)")
        }
    }
}
