/// How an entity's new records are written, worked out once when the model is bound: the record's header
/// (format byte, layout ID, an empty null bitmap) as bytes to copy, and for each field and each attribute what
/// an encoder needs to know.
///
/// Both encoders use it: ``EntityBinding/encodeBody(_:into:)`` and ``EntityBinding/encodeExactly(_:into:)``
/// (the dynamic API's rows of ``Value``) walk ``fields``; ``ModelWriter`` (the code the `@Entity` macro
/// generates) looks up ``slots`` as each property is written. A record is built in the write context's one
/// reused ``BinaryWriter``: the header is one copy, fixed-width fields are stores, strings and data one
/// `memcpy` each, and the checksum one pass at the end (``RecordCodec/seal(_:entityTag:id:)``).
///
/// A plan is a value of pointers into memory its ``Storage`` owns (the binding keeps both): copying it counts
/// no references, which is what an encoder running once per record wants.
struct RecordWritePlan: @unchecked Sendable {
    /// A field of the current layout: the attribute it holds and its type code (``TypeCode``).
    struct Field {
        var attribute: Int32
        var code: UInt8
        /// The attribute is required: null is refused.
        var isRequired: Bool
    }

    /// An attribute (by position in the model): the field holding it (-1: none, a transient attribute), that
    /// field's type code, and whether an index needs its value.
    struct Slot {
        var field: Int32
        var code: UInt8
        var isIndexed: Bool
    }

    /// The fields of the current layout, in record order.
    let fields: UnsafeBufferPointer<Field>
    /// One per attribute of the entity.
    let slots: UnsafeBufferPointer<Slot>
    /// The format byte, the layout ID and a zeroed null bitmap, as ``RecordCodec/begin(_:into:)`` writes them.
    let header: UnsafeRawBufferPointer
    /// The offset of the null bitmap in the header.
    let bitmapOffset: Int
    /// Every attribute is stored in a field (none is transient).
    let storesEveryAttribute: Bool

    /// Starts a record in `w`: the header, with every field not null.
    @inline(__always)
    func begin(_ w: inout BinaryWriter) {
        w.reset()
        w.raw(header)
    }

    /// The memory a plan points into: allocated once, freed with the binding.
    // @unchecked: written once, in `init`, and only read afterwards.
    final class Storage: @unchecked Sendable {
        let plan: RecordWritePlan
        private let fieldMemory: UnsafeMutablePointer<Field>
        private let slotMemory: UnsafeMutablePointer<Slot>
        private let headerMemory: UnsafeMutableRawPointer

        /// The plan for records of `layout`, whose field `f` holds attribute `fieldAttributes[f]`.
        init(layout: RecordLayout, fieldAttributes: [Int], attributeCount: Int, required: [Int], indexed: [Int]) {
            var w = BinaryWriter(capacity: 16)
            let bitmapOffset = RecordCodec.begin(layout, into: &w)
            headerMemory = .allocate(byteCount: max(1, w.count), alignment: 8)
            headerMemory.copyMemory(from: w.buffer.baseAddress!, byteCount: w.count)
            let codes = layout.fieldTypes.map(TypeCode.code)
            let fields = UnsafeMutablePointer<Field>.allocate(capacity: max(1, codes.count))
            let slots = UnsafeMutablePointer<Slot>.allocate(capacity: max(1, attributeCount))
            for a in 0..<attributeCount { (slots + a).initialize(to: Slot(field: -1, code: 0, isIndexed: false)) }
            // Which attributes are required, by position, on the stack: a `Set` here was the first use of `Set`'s
            // code at a process's first open (about 8 % of its time, most of it page faults; `perf`).
            withUnsafeTemporaryAllocation(of: Bool.self, capacity: max(1, attributeCount)) { isRequired in
                isRequired.initialize(repeating: false)
                for a in required where a >= 0 && a < attributeCount { isRequired[a] = true }
                for (f, code) in codes.enumerated() {
                    let a = fieldAttributes[f]
                    (fields + f).initialize(to: Field(attribute: Int32(a), code: code, isRequired: isRequired[a]))
                    slots[a].field = Int32(f)
                    slots[a].code = code
                }
            }
            fieldMemory = fields
            slotMemory = slots
            for a in indexed where a < attributeCount { slotMemory[a].isIndexed = true }
            plan = RecordWritePlan(fields: UnsafeBufferPointer(start: fieldMemory, count: codes.count),
                                   slots: UnsafeBufferPointer(start: slotMemory, count: attributeCount),
                                   header: UnsafeRawBufferPointer(start: headerMemory, count: w.count),
                                   bitmapOffset: bitmapOffset,
                                   storesEveryAttribute: codes.count == attributeCount)
        }

        deinit {
            fieldMemory.deallocate()
            slotMemory.deallocate()
            headerMemory.deallocate()
        }
    }
}
