import Foundation

extension EntityBinding {
    /// Decodes a stored record into the model's attribute values, through its layout's projection.
    /// - Throws: ``StoreError/corruptedRecord(entity:id:reason:)`` for damaged or foreign bytes.
    func decodeValues(_ bytes: UnsafeRawBufferPointer, id: UInt64) throws -> [Value] {
        do {
            var (layoutID, r) = try RecordCodec.open(bytes, entityTag: tag, id: id)
            guard let binding = layout(layoutID) else {
                throw DecodeFailure("unknown layout \(layoutID)")
            }
            var values = initialValues
            let types = binding.layout.fieldTypes
            let bitmap = try r.bytes(binding.layout.bitmapSize)
            for i in 0..<types.count {
                let isNull = bitmap[i >> 3] & (UInt8(1) << UInt8(i & 7)) != 0
                if let a = binding.fieldAttributes[i] {
                    values[a] = isNull ? .null : try FieldCodec.decode(types[i], from: &r)
                } else if !isNull {
                    _ = try FieldCodec.skip(types[i], in: &r)
                }
            }
            guard r.isAtEnd else { throw DecodeFailure("\(r.remaining) bytes after the last field") }
            if !binding.isDirect {
                for (a, source) in binding.sources.enumerated() {
                    switch source {
                    case .field: break
                    case .fieldOrDefault(_, let value): if values[a].isNull { values[a] = value }
                    case .constant(let value): values[a] = value
                    }
                }
            }
            return values
        } catch let failure as DecodeFailure {
            throw StoreError.corruptedRecord(entity: name, id: ObjectID(rawValue: id), reason: failure.reason)
        }
    }

    /// Encodes attribute values as a record of the current layout, sealed with its checksum.
    func encode(_ values: [Value], id: UInt64, into w: inout BinaryWriter) throws {
        let layout = current.layout
        let bitmapOffset = RecordCodec.begin(layout, into: &w)
        do {
            for (i, a) in currentFieldAttributes.enumerated() {
                let value = values[a]
                if case .null = value {
                    RecordCodec.markNull(field: i, bitmapOffset: bitmapOffset, in: &w)
                } else {
                    try FieldCodec.encode(value, as: layout.fieldTypes[i], into: &w)
                }
            }
        } catch {
            throw StoreError.invalidValue(entity: name, attribute: "?", expected: "the attribute's type", actual: error.reason)
        }
        RecordCodec.seal(&w, entityTag: tag, id: id)
        guard w.bytes.count <= RecordFormat.maximumSize else {
            throw StoreError.valueTooLarge(size: w.bytes.count, maximum: RecordFormat.maximumSize)
        }
    }

    /// Checks and converts values for storing: each of its attribute's type, required ones not null.
    func validate(_ values: inout [Value]) throws {
        for i in values.indices {
            let value = values[i]
            if case .null = value { continue }
            guard let exact = attributeTypes[i].coerce(value) else {
                throw StoreError.invalidValue(entity: name, attribute: attributeNames[i],
                                              expected: attributeTypes[i].name, actual: value.caseName)
            }
            values[i] = exact
        }
        for a in requiredAttributes where values[a].isNull {
            throw StoreError.missingRequiredValue(entity: name, attribute: attributeNames[a])
        }
    }
}
