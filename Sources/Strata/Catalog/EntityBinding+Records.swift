/// Reading a bound entity's records through the one record reader (``RecordFields``).
extension RecordFields {
    /// Opens the record of object `id` of `entity`, checking its checksum and format.
    /// - Parameter offsets: room for ``fieldCapacity(of:)`` offsets, for readers that read fields in any order.
    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer, id: UInt64, entity: EntityBinding,
         offsets: UnsafeMutablePointer<Int>? = nil) throws(DecodeFailure) {
        try self.init(bytes, id: id, entityTag: entity.tag, projection: { entity.layout($0) }, offsets: offsets)
    }

    /// The most fields any layout of `entity` has: the room ``init(_:id:entity:offsets:)`` needs.
    static func fieldCapacity(of entity: EntityBinding) -> Int {
        max(1, entity.layouts.map(\.layout.fieldTypes.count).max() ?? 1)
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
