/// The one loop over an entity's stored records, in identifier order, from one cursor: what every full scan
/// (typed values, dynamic objects, borrowed records, record views, aggregates and counts) walks.
///
/// Two levels, both inlined into their callers so that nothing per record goes through a closure context,
/// an existential or a reference count besides the caller's own body:
/// - ``forEachStoredRecord(in:_:)`` hands over each record's identifier and bytes (for readers that decode the
///   whole record in one pass of their own, as the dynamic API's values do);
/// - ``forEachLocatedRecord(in:offsets:_:)`` opens each record on the way (its checksum checked, its layout found,
///   every field located into `offsets`, its end checked) and hands over the located fields.
///
/// A damaged record throws ``StoreError/corruptedRecord(entity:id:reason:)`` before the body sees it; a key of
/// another size than an object key throws ``StoreError/corrupted(path:reason:)``.
extension EntityBinding {
    /// Calls `body` with the identifier and the bytes of each of the entity's records, in identifier order, until
    /// it returns false. The bytes point into the transaction's memory: valid until it changes something or ends.
    @inline(__always)
    func forEachStoredRecord(in txn: Transaction, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Bool) throws {
        let cursor = try txn.cursor(dbi)
        var entry = try cursor.first()
        while let e = entry {
            let id = try txn.objectID(ofKey: e.key)
            if try !body(id, e.value) { return }
            entry = try cursor.next()
        }
    }

    /// Calls `body` with each of the entity's records opened and located — its identifier, its fields (a reader the
    /// body may read further through) and its fields by slot — in identifier order, until it returns false.
    /// - Parameter offsets: room for ``RecordFields/fieldCapacity(of:)`` offsets, reused for every record.
    @inline(__always)
    func forEachLocatedRecord(in txn: Transaction, offsets: UnsafeMutablePointer<Int>,
                              _ body: (UInt64, inout RecordFields, RecordSlots) throws -> Bool) throws {
        // The current layout's projection held once for the scan (read through the binding per record, it would be
        // retained and released per record).
        let current = self.current, currentID = current.layout.id, tag = self.tag
        try forEachStoredRecord(in: txn) { id, bytes in
            var fields: RecordFields
            let slots: RecordSlots
            do throws(DecodeFailure) {
                let (layoutID, reader) = try RecordCodec.open(bytes, entityTag: tag, id: id)
                if layoutID == currentID {
                    fields = try RecordFields(bytes, layoutID: layoutID, projection: current, body: reader, offsets: offsets)
                } else {
                    // An older layout's record: read through its projection.
                    guard let projection = layout(layoutID) else { throw DecodeFailure("unknown layout \(layoutID)") }
                    fields = try RecordFields(bytes, layoutID: layoutID, projection: projection, body: reader, offsets: offsets)
                }
                slots = try fields.slots(offsets: offsets)
            } catch {
                throw StoreError.corruptedRecord(entity: name, id: ObjectID(rawValue: id), reason: error.reason)
            }
            return try body(id, &fields, slots)
        }
    }
}
