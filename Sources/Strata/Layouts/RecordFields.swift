import Foundation

/// One stored record, read in place from the store's memory map: the one reader of records of any layout.
/// Dynamic objects, record views, model types, queries, verification and the background maintenance all read
/// records through it.
///
/// Opening a record checks its checksum and format and finds its layout's ``LayoutProjection``; fields are then
/// located as they are read (each field's start is found by skipping the ones before it, forward from the last
/// one read), and each attribute is read through the projection: in place when its source is a plain field,
/// otherwise as its ``FieldSource`` says (a default for null, a constant, a widening, a reshape).
///
/// A value of this type points into the transaction's memory: it never outlives the read that made it.
struct RecordFields {
    /// The whole record, checksum included.
    let bytes: UnsafeRawBufferPointer
    /// The layout's projection, for reads of attributes (nil for byte-level rewrites, which read fields only).
    /// Not counted: a record reader lives inside a read of the store, whose bound model holds the projection.
    unowned(unsafe) let projection: LayoutProjection?
    /// The projection's slots (``LayoutProjection/slots``; empty without a projection): attributes read as they
    /// are stored are found through them without touching the projection (and ``RecordSlots`` needs no reference
    /// to it).
    let slots: UnsafeBufferPointer<LayoutProjection.Slot>
    let layoutID: UInt32
    /// Each field's type code (``TypeCode``), in memory the projection (or the transcoder's program) owns.
    let fieldCodes: UnsafeBufferPointer<UInt8>
    private let bitmapStart: Int
    private let fieldsStart: Int
    /// Where the checksum begins.
    private let end: Int
    /// The next field to locate, and where it starts.
    private var nextField = 0
    private var nextOffset: Int
    /// When set, the start of every field located so far (-1 for null), so that reading an earlier field does
    /// not walk the record again (record views, which read attributes in any order).
    private let offsets: UnsafeMutablePointer<Int>?

    /// Opens the record of object `id` of the entity tagged `entityTag`, checking its checksum and format;
    /// `projection` gives each of the entity's layouts' projection.
    /// - Parameter offsets: room for one offset per field of the record's layout, for readers that read fields in
    ///   any order.
    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer, id: UInt64, entityTag: UInt32, projection: (UInt32) -> LayoutProjection?,
         offsets: UnsafeMutablePointer<Int>? = nil) throws(DecodeFailure) {
        let (layoutID, r) = try RecordCodec.open(bytes, entityTag: entityTag, id: id)
        guard let projection = projection(layoutID) else { throw DecodeFailure("unknown layout \(layoutID)") }
        try self.init(bytes, layoutID: layoutID, projection: projection, body: r, offsets: offsets)
    }

    /// Opens the record of object `id` of the entity tagged `entityTag` for reading its fields only (byte-level
    /// rewrites), `codes` giving each layout's field type codes.
    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer, id: UInt64, entityTag: UInt32,
         codes: (UInt32) -> UnsafeBufferPointer<UInt8>?) throws(DecodeFailure) {
        let (layoutID, r) = try RecordCodec.open(bytes, entityTag: entityTag, id: id)
        guard let fieldCodes = codes(layoutID) else { throw DecodeFailure("unknown layout \(layoutID)") }
        try self.init(bytes, layoutID: layoutID, codes: fieldCodes, bitmapSize: (fieldCodes.count + 7) / 8,
                      projection: nil, body: r, offsets: nil)
    }

    /// Opens a record whose checksum and format ``RecordCodec/open(_:entityTag:id:)`` checked (`r` at its null
    /// bitmap), of the layout `projection` reads.
    @inline(__always)
    init(_ bytes: UnsafeRawBufferPointer, layoutID: UInt32, projection: LayoutProjection, body r: BinaryReader,
         offsets: UnsafeMutablePointer<Int>?) throws(DecodeFailure) {
        // The buffer has room for one code at least: a layout without fields has none.
        let codes = UnsafeBufferPointer(rebasing: projection.codeBuffer[0..<projection.fieldCodes.count])
        try self.init(bytes, layoutID: layoutID, codes: codes, bitmapSize: projection.layout.bitmapSize,
                      projection: projection, body: r, offsets: offsets)
    }

    @inline(__always)
    private init(_ bytes: UnsafeRawBufferPointer, layoutID: UInt32, codes: UnsafeBufferPointer<UInt8>, bitmapSize: Int,
                 projection: LayoutProjection?, body r: BinaryReader, offsets: UnsafeMutablePointer<Int>?) throws(DecodeFailure) {
        guard r.end - r.offset >= bitmapSize else { throw DecodeFailure("the null bitmap runs past the end") }
        self.bytes = bytes
        self.projection = projection
        self.slots = projection?.slots ?? UnsafeBufferPointer(start: nil, count: 0)
        self.layoutID = layoutID
        self.fieldCodes = codes
        self.bitmapStart = r.offset
        self.fieldsStart = r.offset + bitmapSize
        self.end = r.end
        self.nextOffset = r.offset + bitmapSize
        self.offsets = offsets
    }

    @inline(__always)
    func isNull(field f: Int) -> Bool {
        bytes[bitmapStart + f >> 3] & (UInt8(1) << UInt8(f & 7)) != 0
    }

    /// The start of field `f`'s bytes, or nil when the field is null.
    @inline(__always)
    mutating func offset(ofField f: Int) throws(DecodeFailure) -> Int? {
        if f < nextField {
            if let offsets {
                let o = offsets[f]
                return o < 0 ? nil : o
            }
            nextField = 0
            nextOffset = fieldsStart
        }
        let codes = fieldCodes
        var r = BinaryReader(bytes, end: end)
        r.offset = nextOffset
        let start: Int?
        do {
            while nextField < f {
                if isNull(field: nextField) {
                    offsets?[nextField] = -1
                } else {
                    offsets?[nextField] = r.offset
                    _ = try FieldCodec.skip(code: codes[nextField], in: &r)
                }
                nextField += 1
            }
            // Field `f` itself is passed too: the next field starts after it.
            if isNull(field: f) {
                start = nil
            } else {
                start = r.offset
                _ = try FieldCodec.skip(code: codes[f], in: &r)
            }
        } catch let failure as DecodeFailure {
            throw failure
        } catch {
            throw DecodeFailure("\(error)")
        }
        offsets?[f] = start ?? -1
        nextField = f + 1
        nextOffset = r.offset
        return start
    }

    /// A reader over the record from field `f`'s start (nil when the field is null).
    @inline(__always)
    mutating func reader(atField f: Int) throws(DecodeFailure) -> BinaryReader? {
        guard let start = try offset(ofField: f) else { return nil }
        var r = BinaryReader(bytes, end: end)
        r.offset = start
        return r
    }

    /// Checks that the record ends after its last field.
    mutating func checkEnd() throws(DecodeFailure) {
        let count = fieldCodes.count
        if count > 0 && nextField < count { _ = try offset(ofField: count - 1) }
        guard nextOffset == end else { throw DecodeFailure("\(end - nextOffset) bytes after the last field") }
    }

    /// Locates every field into the offset table the reader was opened with (-1 for null) and checks that the
    /// record ends after its last field, in one pass: the walk of the lean readers (``RecordSlots``). Fixed-width
    /// fields are stepped over by their size, lengths of one byte read inline; bounds are checked for each field.
    mutating func locateAll() throws(DecodeFailure) {
        guard let offsets else { return try checkEnd() }
        guard let base = bytes.baseAddress else { throw DecodeFailure("an empty record") }
        // Everything the loop reads, in locals: stores into `offsets` could otherwise alias them.
        let count = fieldCodes.count
        guard let codes = fieldCodes.baseAddress else { return try checkEnd() }
        let bitmap = base + bitmapStart
        let end = self.end
        var o = fieldsStart
        var f = 0
        while f < count {
            if bitmap.load(fromByteOffset: f >> 3, as: UInt8.self) & (UInt8(1) << UInt8(f & 7)) != 0 {
                offsets[f] = -1
                f += 1
                continue
            }
            offsets[f] = o
            switch codes[f] {
            case 1, 4, 8: o += 8
            case 2, 5: o += 4
            case 3: o += 2
            case 10: o += 16
            case 6:
                guard o < end else { throw DecodeFailure("truncated at byte \(o)") }
                let b = base.load(fromByteOffset: o, as: UInt8.self)
                if b > 1 { throw DecodeFailure("invalid Boolean byte \(b)") }
                o += 1
            case 7, 9, 11, 12, 13:
                guard o < end else { throw DecodeFailure("truncated varint at byte \(o)") }
                let b = base.load(fromByteOffset: o, as: UInt8.self)
                if b < 0x80 {
                    o += 1 + Int(b)
                } else {
                    var r = BinaryReader(bytes, end: end)
                    r.offset = o
                    do { _ = try r.lengthPrefixed() } catch let failure as DecodeFailure { throw failure } catch { throw DecodeFailure("\(error)") }
                    o = r.offset
                }
            case let code: throw DecodeFailure("unknown field type code \(code)")
            }
            guard o <= end else { throw DecodeFailure("field \(f) runs past the end of the record") }
            f += 1
        }
        nextField = count
        nextOffset = o
        guard o == end else { throw DecodeFailure("\(end - o) bytes after the last field") }
    }

    /// Locates every field: `fields[i]` is field i's byte range, nil when null (the byte-level rewrite's walk).
    mutating func locateAll(into fields: inout [Range<Int>?]) throws(DecodeFailure) {
        let count = fieldCodes.count
        if fields.count < count { fields = [Range<Int>?](repeating: nil, count: count) }
        var r = BinaryReader(bytes, end: end)
        r.offset = fieldsStart
        do {
            for i in 0..<count {
                fields[i] = isNull(field: i) ? nil : try FieldCodec.skip(code: fieldCodes[i], in: &r)
            }
        } catch let failure as DecodeFailure {
            throw failure
        } catch {
            throw DecodeFailure("\(error)")
        }
        nextField = count
        nextOffset = r.offset
        guard r.isAtEnd else { throw DecodeFailure("\(r.remaining) bytes after the last field") }
    }

    // MARK: Attributes

    /// The stored value of field `f` (null when the field is null).
    @inline(__always)
    mutating func storedValue(ofField f: Int) throws(DecodeFailure) -> Value {
        guard var r = try reader(atField: f) else { return .null }
        do {
            return try FieldCodec.decode(code: fieldCodes[f], from: &r)
        } catch let failure as DecodeFailure {
            throw failure
        } catch {
            throw DecodeFailure("\(error)")
        }
    }

    /// The value of attribute `a` (of `type`), through the projection.
    mutating func value(of a: Int, type: AttributeType) throws(DecodeFailure) -> Value {
        guard let projection else { throw DecodeFailure("no projection to read attributes through") }
        let source = projection.sources[a]
        guard let f = source.field else { return source.valueWhenFieldIsNull }
        return try source.project(try storedValue(ofField: f), to: type)
    }

    /// Why ``read(_:code:decode:fromValue:)`` could not read an attribute.
    enum ReadFailure: Error {
        /// The record is damaged.
        case damaged(DecodeFailure)
        /// The attribute's field has another type code.
        case wrongType(actual: UInt8)
        /// The projected value is not of the requested type.
        case notConvertible(Value)
    }

    /// Reads attribute `a` (of `attributeTypes[a]`) as `T`: decoded in place from a field of type code `code` with `decode` when the
    /// attribute is a plain field, otherwise projected and converted with `fromValue`. Nil when null.
    @inline(__always)
    mutating func read<T>(_ a: Int, types attributeTypes: () -> [AttributeType], code: UInt8, decode: (inout BinaryReader) throws -> T,
                          fromValue: (Value) -> T?) throws(ReadFailure) -> T? {
        if a < slots.count, slots[a].readsAsIs {
            let slot = slots[a]
            guard slot.field >= 0 else { return nil }
            guard slot.code == code else { throw ReadFailure.wrongType(actual: slot.code) }
            do {
                guard var r = try reader(atField: Int(slot.field)) else { return nil }
                return try decode(&r)
            } catch let failure as DecodeFailure {
                throw ReadFailure.damaged(failure)
            } catch {
                throw ReadFailure.damaged(DecodeFailure("\(error)"))
            }
        }
        guard let projection else { throw ReadFailure.damaged(DecodeFailure("no projection to read attributes through")) }
        let source = projection.sources[a]
        let value: Value
        do {
            switch source {
            case .field, .fieldOrDefault:
                // A field of the attribute's own type: decoded in place unless null.
                guard let f = source.field else { return nil }
                guard projection.fieldCodes[f] == code else { throw ReadFailure.wrongType(actual: projection.fieldCodes[f]) }
                if var r = try reader(atField: f) { return try decode(&r) }
                value = source.valueWhenFieldIsNull
            case .constant(let v):
                value = v
            case .converted(let f, _):
                // A narrower field: decoded with its own type, widened to the attribute's.
                value = try source.project(try storedValue(ofField: f), to: attributeTypes()[a])
            case .reshaped(let f, let reshape, _):
                guard var r = try reader(atField: f) else { value = source.valueWhenFieldIsNull; break }
                value = .codable(try reshape.apply(toJSON: Data(try r.lengthPrefixed())))
            }
        } catch let failure as ReadFailure {
            throw failure
        } catch let failure as DecodeFailure {
            throw ReadFailure.damaged(failure)
        } catch {
            throw ReadFailure.damaged(DecodeFailure("\(error)"))
        }
        if value.isNull { return nil }
        guard let converted = fromValue(value) else { throw ReadFailure.notConvertible(value) }
        return converted
    }

    /// Decodes every attribute into `values`, in one pass over the record (one value per attribute, reusing the array's storage when
    /// it is not shared: scans decode every object into the same array when the caller keeps none of them).
    mutating func decodeAll(initialValues: [Value], types attributeTypes: [AttributeType], into values: inout [Value]) throws(DecodeFailure) {
        // The projection's buffer, not its array (and no reference to the projection): nothing retained per record.
        guard let fieldAttributes = projection?.fieldAttributeBuffer else { throw DecodeFailure("no projection to read attributes through") }
        let codes = fieldCodes
        let count = initialValues.count
        var r = BinaryReader(bytes, end: end)
        r.offset = fieldsStart
        do {
            if count <= 64 {
                // Attributes start null and fields overwrite theirs; those no field filled take their initial
                // value afterwards. (Starting from a copy of `initialValues` would copy it at the first write.)
                if values.count != count {
                    values = []
                    values.reserveCapacity(count)
                    for _ in 0..<count { values.append(.null) }
                }
                var filled: UInt64 = 0
                for i in 0..<codes.count {
                    let null = isNull(field: i)
                    let a = fieldAttributes[i]
                    if a >= 0 {
                        values[a] = null ? .null : try FieldCodec.decode(code: codes[i], from: &r)
                        filled |= UInt64(1) << UInt64(a)
                    } else if !null {
                        _ = try FieldCodec.skip(code: codes[i], in: &r)
                    }
                }
                let all: UInt64 = count == 64 ? .max : (UInt64(1) << UInt64(count)) - 1
                if filled != all {
                    for a in 0..<count where filled & (UInt64(1) << UInt64(a)) == 0 { values[a] = initialValues[a] }
                }
            } else {
                values = initialValues
                for i in 0..<codes.count {
                    let null = isNull(field: i)
                    let a = fieldAttributes[i]
                    if a >= 0 {
                        values[a] = null ? .null : try FieldCodec.decode(code: codes[i], from: &r)
                    } else if !null {
                        _ = try FieldCodec.skip(code: codes[i], in: &r)
                    }
                }
            }
        } catch let failure as DecodeFailure {
            throw failure
        } catch {
            throw DecodeFailure("\(error)")
        }
        guard r.isAtEnd else { throw DecodeFailure("\(r.remaining) bytes after the last field") }
        // Checked before the projection is bound: a record of the current layout binds (and retains) nothing.
        if projection?.isDirect == false, let projection {
            for (a, source) in projection.sources.enumerated() where !source.isPlainField {
                values[a] = try source.project(source.field == nil ? .null : values[a], to: attributeTypes[a])
            }
        }
    }
}
