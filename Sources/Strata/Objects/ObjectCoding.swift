import Foundation

extension EntityBinding {
    /// Decodes a stored record into the model's attribute values, through its layout's projection.
    /// - Throws: ``StoreError/corruptedRecord(entity:id:reason:)`` for damaged or foreign bytes.
    func decodeValues(_ bytes: UnsafeRawBufferPointer, id: UInt64) throws -> [Value] {
        var values: [Value] = []
        try decodeValues(bytes, id: id, into: &values)
        return values
    }

    /// Decodes a record into `values`, reusing its storage when it is not shared (scans decode every object
    /// into the same array when the caller keeps none of them).
    func decodeValues(_ bytes: UnsafeRawBufferPointer, id: UInt64, into values: inout [Value]) throws {
        do {
            var record = try RecordFields(bytes, id: id, entity: self)
            try record.decodeAll(of: self, into: &values)
        } catch {
            throw StoreError.corruptedRecord(entity: name, id: ObjectID(rawValue: id), reason: error.reason)
        }
    }

    /// Encodes attribute values as a record of the current layout, sealed with its checksum.
    func encode(_ values: [Value], id: UInt64, into w: inout BinaryWriter) throws {
        try encodeBody(values, into: &w)
        try seal(&w, id: id)
    }

    /// Writes attribute values (already validated) as the fields of a record of the current layout, without
    /// its checksum (``seal(_:id:)`` closes it).
    func encodeBody(_ values: [Value], into w: inout BinaryWriter) throws {
        guard values.count == writePlan.slots.count else {
            throw StoreError.typeMismatch(expected: "\(writePlan.slots.count) values for \(name)", actual: "\(values.count)")
        }
        if let f = writeFields(values, into: &w, refusingNull: false) {
            let a = Int(writePlan.fields[f].attribute)
            throw StoreError.invalidValue(entity: name, attribute: attributeNames[a],
                                          expected: attributeTypes[a].name, actual: values[a].caseName)
        }
    }

    /// Writes attribute values as the fields of a record of the current layout (without its checksum) when
    /// that needs no conversion: every value has its attribute's exact type (or is null), no required one is
    /// null, and no attribute is transient. Returns false otherwise, with `w` holding part of a record: the
    /// caller validates the values (``validate(_:)``) and encodes them again. One pass instead of two for the
    /// common case, the same outcome.
    @inline(__always)
    func encodeExactly(_ values: [Value], into w: inout BinaryWriter) -> Bool {
        writePlan.storesEveryAttribute && values.count == writePlan.slots.count
            && writeFields(values, into: &w, refusingNull: true) == nil
    }

    /// Writes the fields of a record of the current layout from `values` (one per attribute); returns the
    /// first field whose value is not of its type (or, `refusingNull`, is null for a required attribute), or
    /// nil when every field was written.
    @inline(__always)
    private func writeFields(_ values: [Value], into w: inout BinaryWriter, refusingNull: Bool) -> Int? {
        let plan = writePlan
        plan.begin(&w)
        let bitmapOffset = plan.bitmapOffset
        return values.withUnsafeBufferPointer { values -> Int? in
            for f in plan.fields.indices {
                let field = plan.fields[f]
                let a = Int(field.attribute)
                if values[a].isNull {
                    if refusingNull && field.isRequired { return f }
                    RecordCodec.markNull(field: f, bitmapOffset: bitmapOffset, in: &w)
                } else if !FieldCodec.encode(values[a], code: field.code, into: &w) {
                    return f
                }
            }
            return nil
        }
    }

    /// Closes a record of this entity stored under `id`: appends its checksum (one CRC pass over the
    /// record) and checks its size.
    @inline(__always)
    func seal(_ w: inout BinaryWriter, id: UInt64) throws {
        RecordCodec.seal(&w, entityTag: tag, id: id)
        guard w.count <= RecordFormat.maximumSize else {
            throw StoreError.valueTooLarge(size: w.count, maximum: RecordFormat.maximumSize)
        }
    }

    /// Checks and converts values for storing: each of its attribute's type, required ones not null.
    func validate(_ values: inout [Value]) throws {
        // A read-only pass first: when every value already has its attribute's type (the common case) the
        // array is never written, so the caller's storage is not copied (a mutating loop would make it
        // unique up front).
        var needsCoercion = false
        for i in values.indices where !attributeTypes[i].holdsExactly(values[i]) && !values[i].isNull {
            needsCoercion = true
            break
        }
        if needsCoercion {
            for i in values.indices where !attributeTypes[i].holdsExactly(values[i]) && !values[i].isNull {
                let value = values[i]
                guard let exact = attributeTypes[i].coerce(value) else {
                    throw StoreError.invalidValue(entity: name, attribute: attributeNames[i],
                                                  expected: attributeTypes[i].name, actual: value.caseName)
                }
                values[i] = exact
            }
        }
        for a in requiredAttributes where values[a].isNull {
            throw StoreError.missingRequiredValue(entity: name, attribute: attributeNames[a])
        }
    }

}
