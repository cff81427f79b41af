/// Reading a bound entity's records through the one record reader (``RecordFields``).
extension RecordFields {
    /// Opens the record of object `id` of `entity`, checking its checksum and format.
    /// - Parameter offsets: room for ``fieldCapacity(of:)`` offsets, for readers that read fields in any order.
    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer, id: UInt64, entity: EntityBinding,
         offsets: UnsafeMutablePointer<Int>? = nil) throws(DecodeFailure) {
        let (layoutID, r) = try RecordCodec.open(bytes, entityTag: entity.tag, id: id)
        // The current layout without counting a reference (the binding holds it for the whole read).
        unowned(unsafe) let current = entity.current
        if layoutID == current.layout.id {
            try self.init(bytes, layoutID: layoutID, projection: current, body: r, offsets: offsets)
            return
        }
        guard let projection = entity.layout(layoutID) else { throw DecodeFailure("unknown layout \(layoutID)") }
        try self.init(bytes, layoutID: layoutID, projection: projection, body: r, offsets: offsets)
    }

    /// The most fields any layout of `entity` has: the room ``init(_:id:entity:offsets:)`` needs.
    static func fieldCapacity(of entity: EntityBinding) -> Int {
        var most = 1
        for projection in entity.layouts where projection.fieldCodes.count > most { most = projection.fieldCodes.count }
        return most
    }

    /// Decodes every attribute of `entity` into `values` (see ``decodeAll(initialValues:types:into:)``).
    @inline(__always)
    mutating func decodeAll(of entity: EntityBinding, into values: inout [Value]) throws(DecodeFailure) {
        try decodeAll(initialValues: entity.initialValues, types: entity.attributeTypes, into: &values)
    }

    /// Reads attribute `a` of `entity` as `T` (see ``read(_:types:code:decode:fromValue:)``).
    @inline(__always)
    mutating func read<T>(_ a: Int, of entity: EntityBinding, code: UInt8, decode: (inout BinaryReader) throws -> T,
                          fromValue: (Value) -> T?) throws(ReadFailure) -> T? {
        // The types are needed only for a converted field: the array is not touched on the way to a plain one.
        try read(a, types: { entity.attributeTypes }, code: code, decode: decode, fromValue: fromValue)
    }
}

extension EntityBinding {
    /// Opens the stored record of object `id` and locates every field into `offsets` (room for
    /// ``RecordFields/fieldCapacity(of:)``): checksum, format, layout and the record's end checked — what the
    /// lean readers (typed values, borrowed records, record views, aggregates) read through.
    /// - Throws: ``StoreError/corruptedRecord(entity:id:reason:)`` for damaged or foreign bytes.
    @inline(__always)
    func locatedRecord(_ bytes: UnsafeRawBufferPointer, id: UInt64,
                       offsets: UnsafeMutablePointer<Int>) throws -> (fields: RecordFields, slots: RecordSlots) {
        do {
            var fields = try RecordFields(bytes, id: id, entity: self, offsets: offsets)
            let slots = try fields.slots(offsets: offsets)
            return (fields, slots)
        } catch {
            throw StoreError.corruptedRecord(entity: name, id: ObjectID(rawValue: id), reason: error.reason)
        }
    }
}
