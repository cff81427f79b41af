/// What a typed write fills (``ModelWriter``): the record's bytes, the attribute values of a layout in another
/// order than the model's, the values of indexed attributes and the links. A write context keeps one set between
/// its writes and lends it to each, so that a bulk insert allocates them once and counts no references per value.
struct ModelWriteBuffers: ~Copyable {
    var bytes: BinaryWriter
    var values: [Value] = []
    var indexValues: [(slot: Int, value: Value)] = []
    var links: [(position: Int, targets: [UInt64])] = []

    /// Buffers whose record bytes start with room for `capacity` bytes (they grow as needed).
    init(capacity: Int = 0) {
        bytes = BinaryWriter(capacity: capacity)
    }

    /// Empties the buffers for the next record, keeping their storage; `values` becomes `startingValues` (nil: empty).
    @inline(__always)
    mutating func empty(startingValues: [Value]?) {
        if let startingValues {
            values = startingValues
        } else if !values.isEmpty {
            values = []
        }
        if !indexValues.isEmpty { indexValues.removeAll(keepingCapacity: true) }
        if !links.isEmpty { links.removeAll(keepingCapacity: true) }
    }
}
