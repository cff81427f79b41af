/// A stored record opened for reading attributes by slot in constant time: what the lean readers (borrowed
/// records, typed decoding, aggregates) keep per record after ``RecordFields`` checked its checksum and located
/// every field in one walk.
///
/// Finding an attribute is three loads (its field, the field's type code, the field's start) with no reference
/// counting; a fixed-width field is then one unaligned load (``ModelScalar/inPlace(_:at:)``). An attribute that
/// is not a plain field of its own type (a default, a constant, a widening or reshape of an older layout's
/// projection) is reported as such, and the caller reads it through the general path
/// (``RecordFields/read(_:types:code:decode:fromValue:)``), exactly as before.
///
/// Points into the transaction's memory, the projection's and the caller's offset table: it never outlives the
/// read of the record.
@usableFromInline
struct RecordSlots {
    /// The whole record (checksum included).
    @usableFromInline let bytes: UnsafeRawBufferPointer
    /// Each field's start (-1 when null), filled by ``RecordFields/checkEnd()``.
    @usableFromInline let offsets: UnsafePointer<Int>
    /// Where each attribute is (``LayoutProjection/slots``): read here when it is read as its field stores it.
    @usableFromInline let slots: UnsafePointer<LayoutProjection.Slot>
    @usableFromInline let slotCount: Int

    /// No record (every slot reads through the general path).
    @usableFromInline static var none: RecordSlots { RecordSlots() }

    private init() {
        bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        offsets = Self.nothing()
        slots = Self.nothing()
        slotCount = 0
    }

    /// A pointer where nothing is ever read (a table of no entries: every read is guarded by ``slotCount`` first).
    /// Made from its alignment rather than kept in a global, so that opening a record runs no lazy initializer.
    @inline(__always)
    private static func nothing<T>() -> UnsafePointer<T> {
        UnsafePointer(bitPattern: MemoryLayout<T>.alignment).unsafelyUnwrapped
    }

    /// The slots of `fields`, whose every field was located into `offsets` (after ``RecordFields/checkEnd()``).
    @inline(__always)
    init(_ fields: RecordFields, offsets: UnsafeMutablePointer<Int>) {
        bytes = fields.bytes
        self.offsets = UnsafePointer(offsets)
        if let base = fields.slots.baseAddress {
            slots = base
            slotCount = fields.slots.count
        } else {
            slots = Self.nothing()
            slotCount = 0
        }
    }

    /// Where the attribute at `slot` starts when it is a plain field of type code `code`: its start (≥ 0), -1 when
    /// the field is null, -2 when it must be read through the general path.
    @inlinable @inline(__always)
    func offset(ofSlot slot: Int, code: UInt8) -> Int {
        guard slot >= 0 && slot < slotCount else { return -2 }
        let s = slots[slot]
        guard s.readsAsIs, s.field >= 0, s.code == code else { return -2 }
        return offsets[Int(s.field)]
    }

    /// The bytes of the length-prefixed field at `offset` (a string's UTF-8, data), or nil when its length takes
    /// more than two bytes (the general path reads it). The walk that located the field checked its bounds.
    @inlinable @inline(__always)
    func lengthPrefixed(at offset: Int) -> UnsafeRawBufferPointer? {
        Self.lengthPrefixed(bytes, at: offset)
    }

    /// See ``lengthPrefixed(at:)``.
    @inlinable @inline(__always)
    static func lengthPrefixed(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UnsafeRawBufferPointer? {
        let b0 = Int(bytes.load(fromByteOffset: offset, as: UInt8.self))
        if b0 < 0x80 {
            return UnsafeRawBufferPointer(rebasing: bytes[(offset + 1)..<(offset + 1 + b0)])
        }
        let b1 = Int(bytes.load(fromByteOffset: offset + 1, as: UInt8.self))
        guard b1 < 0x80, b1 != 0 else { return nil }
        let n = (b0 & 0x7F) | b1 << 7
        return UnsafeRawBufferPointer(rebasing: bytes[(offset + 2)..<(offset + 2 + n)])
    }
}

extension RecordFields {
    /// Locates every field into the offset table this reader was opened with and checks that the record ends
    /// after its last one: the walk ``RecordSlots`` needs.
    @inline(__always)
    mutating func slots(offsets: UnsafeMutablePointer<Int>) throws(DecodeFailure) -> RecordSlots {
        try locateAll()
        return RecordSlots(self, offsets: offsets)
    }
}
