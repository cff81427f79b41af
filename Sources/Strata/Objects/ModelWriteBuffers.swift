/// What a typed write fills (``ModelWriter``): the record's bytes, the attribute values of a layout in another
/// order than the model's, the values of indexed attributes and the links. A write context keeps one set between
/// its writes and lends it to each, so that a bulk insert allocates them once and counts no references per value.
struct ModelWriteBuffers: ~Copyable {
    var bytes: BinaryWriter
    var values: [Value] = []
    var indexValues = RefillableList<(slot: Int, value: Value)>()
    var links = RefillableList<(position: Int, targets: [UInt64])>()

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
        indexValues.empty()
        links.empty()
    }
}

/// A list a writer fills again for every record, emptied in constant time: its elements stay in place (and
/// their references counted) until the next record overwrites them, so that emptying it frees nothing and
/// filling it again allocates nothing. (`removeAll(keepingCapacity:)` on an array of such tuples costs about 200
/// instructions per record, more than writing a small record's fields.)
struct RefillableList<Element>: RandomAccessCollection {
    private var storage: [Element] = []
    /// The number of elements of the current record (the first `count` of the storage).
    private(set) var count = 0

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    subscript(position: Int) -> Element {
        assert(position < count, "an element of an earlier record")
        return storage[position]
    }

    @inline(__always)
    mutating func append(_ element: Element) {
        if count < storage.count {
            storage[count] = element
        } else {
            storage.append(element)
        }
        count += 1
    }

    /// Forgets the elements, keeping them allocated for the next record.
    @inline(__always)
    mutating func empty() {
        count = 0
    }
}
