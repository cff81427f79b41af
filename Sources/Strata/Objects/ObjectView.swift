import Foundation

/// A view of one stored object that reads its fields straight from the store's memory map, without
/// building a ``DynamicObject``: for scans of large entities that read a few attributes, or hash, sum or
/// compare bytes, at close to LMDB's own speed.
///
/// A view is valid only inside the closure of ``ReadContext/forEachView(of:_:)`` that receives it, for the
/// object it is showing; it is reused for the next object. Used afterwards it throws
/// ``StoreError/transactionEnded``. Copy what you need, or call ``object()``.
///
/// ```swift
/// var bytes = 0
/// try store.read { context in
///     try context.forEachView(of: "Post") { post in
///         bytes += try post.withBytes(of: "content") { $0.count } ?? 0
///     }
/// }
/// ```
///
/// Each record's checksum is verified before its view is handed over, as for every read.
public final class ObjectView {
    let binding: EntityBinding
    // Only the thread running the scan touches a view: no dynamic exclusivity checks on these.
    /// The record shown, read through the one record reader; nil before the first record.
    @exclusivity(unchecked) private var record: RecordFields?
    /// The record's fields by attribute (``RecordSlots``), located when it was shown.
    @exclusivity(unchecked) private var slots = RecordSlots.none
    /// Each field's start in the record (-1 for a null field), in one buffer reused for every record.
    let offsets: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var valid = false
    @exclusivity(unchecked) private var hint = 0
    /// The object's identifier.
    public var id: ObjectID { shownID }
    // Stored under another name, as ``ModelRecordAccess/objectID`` is: read as a public stored property, the
    // caller's module would check its exclusivity dynamically for every record.
    @exclusivity(unchecked) private var shownID = ObjectID(rawValue: 0)

    init(binding: EntityBinding) {
        self.binding = binding
        offsets = .allocate(capacity: RecordFields.fieldCapacity(of: binding))
    }

    deinit { offsets.deallocate() }

    /// The name of the object's entity.
    public var entityName: String { binding.name }

    /// Points the view at a record, after verifying its checksum and locating every field (a damaged record
    /// throws here, before the closure sees it).
    func show(_ bytes: UnsafeRawBufferPointer, id: UInt64) throws {
        valid = false
        let (fields, slots) = try binding.locatedRecord(bytes, id: id, offsets: offsets)
        present(fields, slots, id: id)
    }

    /// Points the view at a record already opened and located into ``offsets`` (by the scan loop).
    @inline(__always)
    func present(_ fields: RecordFields, _ slots: RecordSlots, id: UInt64) {
        record = fields
        self.slots = slots
        shownID = ObjectID(rawValue: id)
        valid = true
    }

    func invalidate() {
        valid = false
        slots = .none
    }

    /// The position of an attribute (the previous lookup's position is tried first: scans read the same
    /// attributes in the same order).
    @inline(__always)
    private func position(_ name: String) throws -> Int {
        guard valid else { throw StoreError.transactionEnded }
        let names = binding.attributeNames
        let next = hint + 1 < names.count ? hint + 1 : 0
        if names[next] == name { hint = next; return next }
        guard let a = binding.position(of: name) else { throw StoreError.unknownAttribute(entity: binding.name, name: name) }
        hint = a
        return a
    }

    /// The start of attribute `a`'s field and its type code, or nil when the attribute is not in a field as it
    /// is stored (null, or a constant, default, widening or reshape of the layout's projection).
    @inline(__always)
    private func field(_ a: Int) -> (start: Int, code: UInt8)? {
        // Every field was located when the record was shown: three loads, no walk.
        guard a < slots.slotCount else { return nil }
        let s = slots.slots[a]
        guard s.readsAsIs, s.field >= 0 else { return nil }
        let start = slots.offsets[Int(s.field)]
        return start < 0 ? nil : (start, s.code)
    }

    /// The record's bytes.
    private var bytes: UnsafeRawBufferPointer { slots.bytes }

    /// A value that is not read in place: nil when null, else `extract`'s result or a type mismatch.
    private func converted<T>(_ v: Value, expected: String, _ extract: (Value) -> T?) throws -> T? {
        if v.isNull { return nil }
        guard let t = extract(v) else { throw StoreError.typeMismatch(expected: expected, actual: v.caseName) }
        return t
    }

    private func corrupted(_ reason: String) -> StoreError {
        StoreError.corruptedRecord(entity: binding.name, id: id, reason: reason)
    }

    /// The value of an attribute.
    public func value(_ attribute: String) throws -> Value {
        let a = try position(attribute)
        do {
            return try record?.value(of: a, type: binding.attributeTypes[a]) ?? .null
        } catch {
            throw corrupted(error.reason)
        }
    }

    /// Calls `body` with the bytes of a string, URL, data, decimal or Codable attribute, in place (UTF-8 for
    /// text, the JSON of Codable values); returns nil when the attribute is null.
    @inlinable
    public func withBytes<T>(of attribute: String, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        // Generic only here, inlined where it is called (unspecialized, the result went through value witnesses
        // for every record a scan reads); the bytes are found by ``attributeBytes(of:)``.
        switch try attributeBytes(of: attribute) {
        case .inPlace(let bytes): return try body(bytes)
        case .copied(let bytes): return try bytes.withUnsafeBytes(body)
        case .null: return nil
        }
    }

    /// Where the bytes of a string, URL, data, decimal or Codable attribute are (see ``withBytes(of:_:)``).
    @usableFromInline
    enum AttributeBytes {
        /// Null.
        case null
        /// In the record, in the memory map.
        case inPlace(UnsafeRawBufferPointer)
        /// Not stored as it reads (a constant, default or reshape of the layout's projection): a copy.
        case copied([UInt8])
    }

    /// The bytes of a string, URL, data, decimal or Codable attribute.
    @usableFromInline
    func attributeBytes(of attribute: String) throws -> AttributeBytes {
        let a = try position(attribute)
        guard let f = field(a) else {
            // Not stored as it reads (null, or a constant, default or reshape of the layout's projection).
            switch try value(attribute) {
            case .null: return .null
            case .string(let s): return .copied(Array(s.utf8))
            case .url(let u): return .copied(Array(u.absoluteString.utf8))
            case .data(let d), .codable(let d): return .copied(Array(d))
            case .decimal(let d): return .copied(Array(d.description.utf8))
            case let v: throw StoreError.typeMismatch(expected: "a string, URL, data, decimal or Codable attribute", actual: v.caseName)
            }
        }
        switch f.code {
        case 7, 9, 11, 12, 13: break
        default:
            throw StoreError.typeMismatch(expected: "a string, URL, data, decimal or Codable attribute", actual: binding.attributeTypes[a].name)
        }
        // A length of one or two bytes read where it lies (the walk that located the field checked its bounds);
        // longer ones through the reader.
        if let payload = slots.lengthPrefixed(at: f.start) { return .inPlace(payload) }
        var r = BinaryReader(bytes)
        r.offset = f.start
        do { return .inPlace(try r.lengthPrefixed()) } catch { throw corrupted("\(error)") }
    }

    /// An integer attribute of any width, or nil when null.
    public func int64(_ attribute: String) throws -> Int64? {
        let a = try position(attribute)
        guard let f = field(a) else { return try converted(value(attribute), expected: "an integer attribute") { $0.int64Value } }
        switch f.code {
        case 1: return Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: f.start, as: Int64.self))
        case 2: return Int64(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: f.start, as: Int32.self)))
        case 3: return Int64(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: f.start, as: Int16.self)))
        default: throw StoreError.typeMismatch(expected: "an integer attribute", actual: binding.attributeTypes[a].name)
        }
    }

    /// A numeric attribute as a `Double`, or nil when null.
    public func double(_ attribute: String) throws -> Double? {
        let a = try position(attribute)
        if let f = field(a) {
            switch f.code {
            case 4: return Double.inPlace(bytes, at: f.start)
            case 5: return Float.inPlace(bytes, at: f.start).map(Double.init)
            case 1: return Int64.inPlace(bytes, at: f.start).map(Double.init)
            case 2: return Int32.inPlace(bytes, at: f.start).map(Double.init)
            case 3: return Int16.inPlace(bytes, at: f.start).map(Double.init)
            default: break
            }
        }
        return try converted(try value(attribute), expected: "a numeric attribute") { $0.doubleValue }
    }

    /// A UUID attribute, or nil when null.
    public func uuid(_ attribute: String) throws -> UUID? {
        let a = try position(attribute)
        guard let f = field(a) else { return try converted(value(attribute), expected: "a UUID attribute") { $0.uuidValue } }
        guard f.code == 10 else { throw StoreError.typeMismatch(expected: "a UUID attribute", actual: binding.attributeTypes[a].name) }
        return UUID.inPlace(bytes, at: f.start)
    }

    /// A date attribute, or nil when null.
    public func date(_ attribute: String) throws -> Date? {
        let a = try position(attribute)
        guard let f = field(a) else { return try converted(value(attribute), expected: "a date attribute") { $0.dateValue } }
        guard f.code == 8 else { throw StoreError.typeMismatch(expected: "a date attribute", actual: binding.attributeTypes[a].name) }
        let bits = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: f.start, as: UInt64.self))
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }

    /// A Boolean attribute, or nil when null.
    public func bool(_ attribute: String) throws -> Bool? {
        if let f = field(try position(attribute)), f.code == 6 { return Bool.inPlace(bytes, at: f.start) }
        return try converted(try value(attribute), expected: "a Boolean attribute") { $0.boolValue }
    }

    /// A copy of the object, valid after the closure.
    public func object() throws -> DynamicObject {
        guard valid else { throw StoreError.transactionEnded }
        return DynamicObject(id: id, binding: binding, values: try binding.decodeValues(bytes, id: id.rawValue))
    }
}

extension ReadContext {
    /// Calls `body` with a view of every object of `entity`, in identifier order, without building objects:
    /// the fastest way to read a large entity. See ``ObjectView``.
    public func forEachView(of entity: String, _ body: (ObjectView) throws -> Void) throws {
        let binding = try binding(entity)
        let view = ObjectView(binding: binding)
        defer { view.invalidate() }
        try binding.forEachLocatedRecord(in: txn, offsets: view.offsets) { id, fields, slots in
            view.present(fields, slots, id: id)
            try body(view)
            return true
        }
    }
}
