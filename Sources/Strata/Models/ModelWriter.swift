import Foundation

/// Writes one object's attributes by slot, for the code the `@Entity` macro generates
/// (``EntityModel/write(to:)``): fields go straight into the record's bytes in the entity's current
/// layout, with no ``Value`` in between (values of indexed attributes are kept for their indexes).
///
/// A writer is valid only during the ``EntityModel/write(to:)`` call that receives it: it is not copyable, so it
/// cannot leave that call, and it holds the entity's binding without counting references.
public struct ModelWriter: ~Copyable {
    unowned(unsafe) let binding: EntityBinding
    /// Fields are appended in slot order (the current layout lists the stored attributes in model order).
    let isDirect: Bool
    /// The binding's write plan: where each attribute goes (kept alive by the binding).
    private let plan: RecordWritePlan
    private var nextField = 0
    /// What the writer fills, lent by the write context (see ``ModelWriteBuffers``).
    private var buffers: ModelWriteBuffers

    /// The record's bytes (format byte, layout, bitmap, fields), without its checksum.
    var bytes: BinaryWriter {
        _read { yield buffers.bytes }
        _modify { yield &buffers.bytes }
    }
    /// The attribute values, for a current layout in another order than the model's (then encoded at the end).
    var values: [Value] {
        _read { yield buffers.values }
        _modify { yield &buffers.values }
    }
    /// Values of indexed attributes, by slot.
    var indexValues: RefillableList<(slot: Int, value: Value)> {
        _read { yield buffers.indexValues }
        _modify { yield &buffers.indexValues }
    }
    /// Relationship positions and the objects they link to.
    var links: RefillableList<(position: Int, targets: [UInt64])> {
        _read { yield buffers.links }
        _modify { yield &buffers.links }
    }

    /// A writer for `binding`'s records into `buffers` (emptied here; their storage is kept); call ``begin()``
    /// before writing. With `collectingValues`, it only collects the attribute values (in ``values``), whatever
    /// the layout.
    init(binding: __shared EntityBinding, collectingValues: Bool = false, buffers: consuming ModelWriteBuffers = ModelWriteBuffers()) {
        self.binding = binding
        self.isDirect = binding.currentFollowsModelOrder && !collectingValues
        self.plan = binding.writePlan
        self.buffers = buffers
        self.buffers.empty(startingValues: isDirect ? nil : binding.initialValues)
    }

    /// Ends the writer, giving its buffers back (to be lent to the next writer).
    consuming func returningBuffers() -> ModelWriteBuffers {
        buffers
    }

    /// Starts the record in ``bytes``.
    mutating func begin() {
        if isDirect {
            plan.begin(&bytes)
        } else {
            bytes.reset()
        }
    }

    /// Checks that every stored attribute was written (direct mode).
    func finish() throws {
        if isDirect && nextField != plan.fields.count {
            throw StoreError.typeMismatch(expected: "\(plan.fields.count) attributes for \(binding.name)",
                                          actual: "\(nextField) written")
        }
    }

    /// The field `slot` writes next in direct mode; records the value for an index.
    @inline(__always)
    private mutating func field(_ slot: Int, code: UInt8, _ value: @autoclosure () -> Value) throws -> Int {
        guard slot >= 0, slot < plan.slots.count else { throw outOfOrder(slot) }
        let s = plan.slots[slot]
        if s.isIndexed { indexValues.append((slot, value())) }
        // A transient attribute has field -1: never the next one.
        guard Int(s.field) == nextField, s.code == code else { throw outOfOrder(slot) }
        nextField += 1
        return Int(s.field)
    }

    private func outOfOrder(_ slot: Int) -> StoreError {
        StoreError.typeMismatch(expected: "the attributes of \(binding.name) in model order with their types",
                                actual: "attribute \(slot) out of order or of another type")
    }

    @inline(__always)
    mutating func put(_ slot: Int, code: UInt8, _ value: @autoclosure () -> Value, _ encode: (inout BinaryWriter) -> Void) throws {
        guard isDirect else {
            guard slot < values.count else { throw StoreError.unknownAttribute(entity: binding.name, name: "#\(slot)") }
            values[slot] = value()
            if binding.isIndexedSlot(slot) { indexValues.append((slot, values[slot])) }
            return
        }
        _ = try field(slot, code: code, value())
        encode(&bytes)
    }

    @inline(__always)
    mutating func putNull(_ slot: Int, code: UInt8) throws {
        guard isDirect else {
            guard slot < values.count else { throw StoreError.unknownAttribute(entity: binding.name, name: "#\(slot)") }
            values[slot] = .null
            return
        }
        let f = try field(slot, code: code, .null)
        RecordCodec.markNull(field: f, bitmapOffset: plan.bitmapOffset, in: &bytes)
    }
}
