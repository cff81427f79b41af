import Foundation

/// Writes one object's attributes by slot, for the code the `@Entity` macro generates
/// (``EntityModel/write(to:)``): fields go straight into the record's bytes in the entity's current
/// layout, with no ``Value`` in between (values of indexed attributes are kept for their indexes).
///
/// A writer is valid only during the ``EntityModel/write(to:)`` call that receives it.
public struct ModelWriter {
    let binding: EntityBinding
    /// The record's bytes (format byte, layout, bitmap, fields), without its checksum.
    var bytes: BinaryWriter
    /// Fields are appended in slot order (the current layout lists the stored attributes in model order).
    let isDirect: Bool
    /// The attribute values, for a current layout in another order than the model's (then encoded at the end).
    var values: [Value]
    private let bitmapOffset: Int
    private var nextField = 0
    /// Values of indexed attributes, by slot.
    var indexValues: [(slot: Int, value: Value)] = []
    /// Relationship positions and the objects they link to.
    var links: [(position: Int, targets: [UInt64])] = []

    /// A writer whose buffer is empty until ``begin()``: swap a reusable buffer into ``bytes`` first. With
    /// `collectingValues`, it only collects the attribute values (in ``values``), whatever the layout.
    init(binding: EntityBinding, collectingValues: Bool = false) {
        self.binding = binding
        self.isDirect = binding.currentFollowsModelOrder && !collectingValues
        self.bytes = BinaryWriter(capacity: 0)
        self.values = isDirect ? [] : binding.initialValues
        self.bitmapOffset = RecordCodec.headerSize(binding.current.layout)
    }

    /// Starts the record in ``bytes``.
    mutating func begin() {
        if isDirect {
            _ = RecordCodec.begin(binding.current.layout, into: &bytes)
        } else {
            bytes.reset()
        }
    }

    /// Checks that every stored attribute was written (direct mode).
    func finish() throws {
        if isDirect && nextField != binding.current.fieldCodes.count {
            throw StoreError.typeMismatch(expected: "\(binding.current.fieldCodes.count) attributes for \(binding.name)",
                                          actual: "\(nextField) written")
        }
    }

    /// The field `slot` writes next in direct mode; records the value for an index.
    @inline(__always)
    private mutating func field(_ slot: Int, code: UInt8, _ value: @autoclosure () -> Value) throws -> Int {
        if binding.isIndexedSlot(slot) { indexValues.append((slot, value())) }
        guard slot < binding.current.attributeFields.count, let f = binding.current.attributeFields[slot], f == nextField,
              binding.current.fieldCodes[f] == code else {
            throw StoreError.typeMismatch(expected: "the attributes of \(binding.name) in model order with their types",
                                          actual: "attribute \(slot) out of order or of another type")
        }
        nextField = f + 1
        return f
    }

    @inline(__always)
    private mutating func put(_ slot: Int, code: UInt8, _ value: @autoclosure () -> Value, _ encode: (inout BinaryWriter) -> Void) throws {
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
    private mutating func putNull(_ slot: Int, code: UInt8) throws {
        guard isDirect else {
            guard slot < values.count else { throw StoreError.unknownAttribute(entity: binding.name, name: "#\(slot)") }
            values[slot] = .null
            return
        }
        let f = try field(slot, code: code, .null)
        RecordCodec.markNull(field: f, bitmapOffset: bitmapOffset, in: &bytes)
    }

    // MARK: Scalars

    public mutating func write(_ slot: Int, _ v: Int) throws { try write(slot, Int64(v)) }
    public mutating func write(_ slot: Int, _ v: Int?) throws { try write(slot, v.map(Int64.init)) }
    public mutating func write(_ slot: Int, _ v: Int64) throws { try put(slot, code: 1, .int64(v)) { $0.fixed(v) } }
    public mutating func write(_ slot: Int, _ v: Int64?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 1) }
    }
    public mutating func write(_ slot: Int, _ v: Int32) throws { try put(slot, code: 2, .int32(v)) { $0.fixed(v) } }
    public mutating func write(_ slot: Int, _ v: Int32?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 2) }
    }
    public mutating func write(_ slot: Int, _ v: Int16) throws { try put(slot, code: 3, .int16(v)) { $0.fixed(v) } }
    public mutating func write(_ slot: Int, _ v: Int16?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 3) }
    }
    public mutating func write(_ slot: Int, _ v: Double) throws { try put(slot, code: 4, .double(v)) { $0.fixed(v.bitPattern) } }
    public mutating func write(_ slot: Int, _ v: Double?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 4) }
    }
    public mutating func write(_ slot: Int, _ v: Float) throws { try put(slot, code: 5, .float(v)) { $0.fixed(v.bitPattern) } }
    public mutating func write(_ slot: Int, _ v: Float?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 5) }
    }
    public mutating func write(_ slot: Int, _ v: Bool) throws { try put(slot, code: 6, .bool(v)) { $0.u8(v ? 1 : 0) } }
    public mutating func write(_ slot: Int, _ v: Bool?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 6) }
    }
    public mutating func write(_ slot: Int, _ v: String) throws {
        try put(slot, code: 7, .string(v)) { w in
            var s = v
            s.withUTF8 { w.lengthPrefixed($0) }
        }
    }
    public mutating func write(_ slot: Int, _ v: String?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 7) }
    }
    public mutating func write(_ slot: Int, _ v: Date) throws {
        try put(slot, code: 8, .date(v)) { $0.fixed(v.timeIntervalSinceReferenceDate.bitPattern) }
    }
    public mutating func write(_ slot: Int, _ v: Date?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 8) }
    }
    public mutating func write(_ slot: Int, _ v: Data) throws {
        try put(slot, code: 9, .data(v)) { w in
            w.varint(UInt64(v.count))
            v.withUnsafeBytes { w.raw($0) }
        }
    }
    public mutating func write(_ slot: Int, _ v: Data?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 9) }
    }
    public mutating func write(_ slot: Int, _ v: UUID) throws {
        try put(slot, code: 10, .uuid(v)) { w in withUnsafeBytes(of: v.uuid) { w.raw($0) } }
    }
    public mutating func write(_ slot: Int, _ v: UUID?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 10) }
    }
    public mutating func write(_ slot: Int, _ v: URL) throws {
        try put(slot, code: 11, .url(v)) { w in
            var s = v.absoluteString
            s.withUTF8 { w.lengthPrefixed($0) }
        }
    }
    public mutating func write(_ slot: Int, _ v: URL?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 11) }
    }
    public mutating func write(_ slot: Int, _ v: Decimal) throws {
        try put(slot, code: 12, .decimal(v)) { w in
            var s = v.isNaN ? "NaN" : v.description
            s.withUTF8 { w.lengthPrefixed($0) }
        }
    }
    public mutating func write(_ slot: Int, _ v: Decimal?) throws {
        if let v { try write(slot, v) } else { try putNull(slot, code: 12) }
    }

    // MARK: Codable and raw values

    /// A `Codable` value, stored as canonical JSON (sorted keys).
    public mutating func writeCodable<T: Encodable>(_ slot: Int, _ v: T) throws {
        let data = try CanonicalJSON.encode(v)
        try put(slot, code: 13, .codable(data)) { w in
            w.varint(UInt64(data.count))
            data.withUnsafeBytes { w.raw($0) }
        }
    }
    public mutating func writeCodable<T: Encodable>(_ slot: Int, _ v: T?) throws {
        if let v { try writeCodable(slot, v) } else { try putNull(slot, code: 13) }
    }

    /// A `RawRepresentable` value, stored as its raw value.
    public mutating func writeRaw<T: RawRepresentable>(_ slot: Int, _ v: T) throws where T.RawValue: ModelRawValue {
        try v.rawValue.write(slot, to: &self)
    }
    public mutating func writeRaw<T: RawRepresentable>(_ slot: Int, _ v: T?) throws where T.RawValue: ModelRawValue {
        if let v { try v.rawValue.write(slot, to: &self) } else { try putNull(slot, code: TypeCode.code(T.RawValue.attributeType)) }
    }

    // MARK: Relationships

    /// The objects a to-many relationship (at `position` among the entity's relationships) links to.
    public mutating func relate(_ position: Int, _ targets: [ObjectID]) {
        links.append((position, targets.map(\.rawValue)))
    }

    /// The object a to-one relationship links to (nil: none).
    public mutating func relate(_ position: Int, _ target: ObjectID?) {
        links.append((position, target.map { [$0.rawValue] } ?? []))
    }
}
