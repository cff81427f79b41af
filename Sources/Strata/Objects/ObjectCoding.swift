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
        let current = self.current
        let bitmapOffset = RecordCodec.begin(current.layout, into: &w)
        let codes = current.fieldCodes
        for i in 0..<codes.count {
            let a = currentFieldAttributes[i]
            switch values[a] {
            case .null:
                RecordCodec.markNull(field: i, bitmapOffset: bitmapOffset, in: &w)
            case let value:
                guard FieldCodec.encode(value, code: codes[i], into: &w) else {
                    throw StoreError.invalidValue(entity: name, attribute: attributeNames[a],
                                                  expected: attributeTypes[a].name, actual: value.caseName)
                }
            }
        }
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
