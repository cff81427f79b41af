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
    @exclusivity(unchecked) private var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
    @exclusivity(unchecked) private var layout: LayoutBinding
    /// Start and end of each field in `bytes` (-1 for a null field), in one buffer reused for every record.
    @exclusivity(unchecked) private var offsets: UnsafeMutablePointer<Int>
    @exclusivity(unchecked) private var capacity: Int
    @exclusivity(unchecked) private var valid = false
    @exclusivity(unchecked) private var hint = 0
    /// The object's identifier.
    @exclusivity(unchecked) public private(set) var id = ObjectID(rawValue: 0)

    init(binding: EntityBinding) {
        self.binding = binding
        self.layout = binding.current
        capacity = max(1, binding.layouts.map(\.layout.fieldTypes.count).max() ?? 1)
        offsets = .allocate(capacity: 2 * capacity)
    }

    deinit { offsets.deallocate() }

    /// The name of the object's entity.
    public var entityName: String { binding.name }

    /// Points the view at a record (after verifying its checksum and locating its fields).
    func show(_ record: UnsafeRawBufferPointer, id: UInt64) throws {
        valid = false
        do {
            var (layoutID, r) = try RecordCodec.open(record, entityTag: binding.tag, id: id)
            if layoutID != layout.layout.id {
                guard let l = binding.layout(layoutID) else { throw DecodeFailure("unknown layout \(layoutID)") }
                layout = l
            }
            let codes = layout.fieldCodes
            let bitmap = try r.bytes(layout.layout.bitmapSize)
            if codes.count > capacity {
                offsets.deallocate()
                capacity = codes.count
                offsets = .allocate(capacity: 2 * capacity)
            }
            for i in 0..<codes.count {
                if bitmap[i >> 3] & (UInt8(1) << UInt8(i & 7)) != 0 {
                    offsets[2 * i] = -1
                    offsets[2 * i + 1] = -1
                    continue
                }
                offsets[2 * i] = r.offset
                switch codes[i] {
                case 1, 4, 8: try r.skip(8)
                case 2, 5: try r.skip(4)
                case 3: try r.skip(2)
                case 6:
                    if try r.u8() > 1 { throw DecodeFailure("invalid Boolean byte") }
                case 10: try r.skip(16)
                default: _ = try r.lengthPrefixed()
                }
                offsets[2 * i + 1] = r.offset
            }
            guard r.isAtEnd else { throw DecodeFailure("\(r.remaining) bytes after the last field") }
        } catch let failure as DecodeFailure {
            throw StoreError.corruptedRecord(entity: binding.name, id: ObjectID(rawValue: id), reason: failure.reason)
        } catch {
            throw StoreError.corruptedRecord(entity: binding.name, id: ObjectID(rawValue: id), reason: "\(error)")
        }
        bytes = record
        self.id = ObjectID(rawValue: id)
        valid = true
    }

    func invalidate() { valid = false }

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

    /// The field of attribute `a` and its type code, or nil when the attribute is not in a field (null, or
    /// a constant of the layout's projection).
    @inline(__always)
    private func field(_ a: Int) -> (start: Int, end: Int, code: UInt8)? {
        guard let f = layout.attributeFields[a], offsets[2 * f] >= 0 else { return nil }
        return (offsets[2 * f], offsets[2 * f + 1], layout.fieldCodes[f])
    }

    /// The value of attribute `a` when it is not in a field: the projection's constant, default, or null.
    private func projected(_ a: Int) -> Value {
        switch layout.sources[a] {
        case .constant(let v), .fieldOrDefault(_, let v): return v
        case .converted(_, let v), .reshaped(_, _, let v): return v ?? .null
        case .field: return .null
        }
    }

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
        guard let f = field(a) else { return projected(a) }
        var r = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[f.start..<f.end]))
        let value: Value
        do { value = try FieldCodec.decode(code: f.code, from: &r) } catch { throw corrupted("\(error)") }
        switch layout.sources[a] {
        case .converted: return RecordTranscoder.widen(value, to: binding.attributeTypes[a])
        case .reshaped(_, let reshape, _):
            do { return try reshape.apply(to: value) } catch { throw corrupted(error.reason) }
        default: return value
        }
    }

    /// Calls `body` with the bytes of a string, URL, data, decimal or Codable attribute, in place (UTF-8 for
    /// text, the JSON of Codable values); returns nil when the attribute is null.
    public func withBytes<T>(of attribute: String, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        let a = try position(attribute)
        guard let f = field(a) else {
            switch projected(a) {
            case .null: return nil
            case .string(let s): return try Array(s.utf8).withUnsafeBytes(body)
            case .url(let u): return try Array(u.absoluteString.utf8).withUnsafeBytes(body)
            case .data(let d), .codable(let d): return try d.withUnsafeBytes(body)
            case .decimal(let d): return try Array(d.description.utf8).withUnsafeBytes(body)
            case let v: throw StoreError.typeMismatch(expected: "a string, URL, data, decimal or Codable attribute", actual: v.caseName)
            }
        }
        if case .reshaped = layout.sources[a] {
            // JSON of an older shape: handed over as the current shape reads it.
            guard case .codable(let data) = try value(attribute) else { return nil }
            return try data.withUnsafeBytes(body)
        }
        guard [7, 9, 11, 12, 13].contains(f.code) else {
            throw StoreError.typeMismatch(expected: "a string, URL, data, decimal or Codable attribute", actual: binding.attributeTypes[a].name)
        }
        var r = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[f.start..<f.end]))
        let payload: UnsafeRawBufferPointer
        do { payload = try r.lengthPrefixed() } catch { throw corrupted("\(error)") }
        return try body(payload)
    }

    /// An integer attribute of any width, or nil when null.
    public func int64(_ attribute: String) throws -> Int64? {
        let a = try position(attribute)
        guard let f = field(a) else { return try converted(projected(a), expected: "an integer attribute") { $0.int64Value } }
        switch f.code {
        case 1: return Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: f.start, as: Int64.self))
        case 2: return Int64(Int32(littleEndian: bytes.loadUnaligned(fromByteOffset: f.start, as: Int32.self)))
        case 3: return Int64(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: f.start, as: Int16.self)))
        default: throw StoreError.typeMismatch(expected: "an integer attribute", actual: binding.attributeTypes[a].name)
        }
    }

    /// A numeric attribute as a `Double`, or nil when null.
    public func double(_ attribute: String) throws -> Double? {
        try converted(try value(attribute), expected: "a numeric attribute") { $0.doubleValue }
    }

    /// A UUID attribute, or nil when null.
    public func uuid(_ attribute: String) throws -> UUID? {
        let a = try position(attribute)
        guard let f = field(a) else { return try converted(projected(a), expected: "a UUID attribute") { $0.uuidValue } }
        guard f.code == 10 else { throw StoreError.typeMismatch(expected: "a UUID attribute", actual: binding.attributeTypes[a].name) }
        return UUID(bytes: UnsafeRawBufferPointer(rebasing: bytes[f.start..<f.end]))
    }

    /// A date attribute, or nil when null.
    public func date(_ attribute: String) throws -> Date? {
        let a = try position(attribute)
        guard let f = field(a) else { return try converted(projected(a), expected: "a date attribute") { $0.dateValue } }
        guard f.code == 8 else { throw StoreError.typeMismatch(expected: "a date attribute", actual: binding.attributeTypes[a].name) }
        let bits = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: f.start, as: UInt64.self))
        return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
    }

    /// A Boolean attribute, or nil when null.
    public func bool(_ attribute: String) throws -> Bool? {
        try converted(try value(attribute), expected: "a Boolean attribute") { $0.boolValue }
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
        let cursor = try txn.cursor(binding.dbi)
        let view = ObjectView(binding: binding)
        defer { view.invalidate() }
        var entry = try cursor.first()
        while let e = entry {
            let id: UInt64
            do { id = try ObjectKey.decode(e.key) } catch {
                throw StoreError.corrupted(path: txn.environment.path, reason: .structure("an object key of \(e.key.count) bytes"))
            }
            try view.show(e.value, id: id)
            try body(view)
            entry = try cursor.next()
        }
    }
}
