import Foundation

/// Reads one stored object's attributes by slot, for the code the `@Entity` macro generates
/// (``EntityModel/init(from:)``). A slot is the attribute's position in ``EntityModel/entity``.
///
/// A record is read in place, field after field, from the store's memory map: no ``Value``, no dictionary.
/// A record of an older layout is read through its layout's projection, attribute by attribute: a field
/// read as it is, a default for a null field, a constant for an attribute added since, a narrower field
/// widened — so a value read through a newer type is exactly what the dynamic API reads.
///
/// A reader is valid only during the ``EntityModel/init(from:)`` call that receives it: it is not copyable, so it
/// cannot leave that call, and it holds the entity's binding and the context without counting references (both
/// outlive the call).
public struct ModelReader: ~Copyable {
    unowned(unsafe) let binding: EntityBinding
    unowned(unsafe) let context: ReadContext?
    /// The object's identifier.
    public let objectID: ObjectID
    /// The stored record (nil for decoded values).
    var record: RecordFields?
    /// The record's fields by slot, when they were all located (``RecordSlots``): plain fields are then read
    /// in place by code inlined into the model's `init(from:)`.
    @usableFromInline var slots = RecordSlots.none
    /// The attribute values, by slot, for an object of the dynamic API.
    private let values: [Value]?
    /// The entity's number of attributes (read without touching the binding).
    private let attributeCount: Int

    /// A reader over a stored record: checks its checksum and format; attributes are then read through its
    /// layout's projection (see ``RecordFields``).
    init(record bytes: UnsafeRawBufferPointer, id: UInt64, binding: __shared EntityBinding, context: __shared ReadContext?) throws {
        do {
            record = try RecordFields(bytes, id: id, entity: binding)
        } catch {
            throw StoreError.corruptedRecord(entity: binding.name, id: ObjectID(rawValue: id), reason: error.reason)
        }
        self.binding = binding
        self.attributeCount = binding.attributeCount
        self.context = context
        self.objectID = ObjectID(rawValue: id)
        self.values = nil
    }

    /// A reader over a stored record whose every field it locates at once into `offsets` (room for
    /// ``RecordFields/fieldCapacity(of:)``): checksum, format and the record's end are checked here.
    init(record bytes: UnsafeRawBufferPointer, id: UInt64, binding: __shared EntityBinding, context: __shared ReadContext?,
         offsets: UnsafeMutablePointer<Int>) throws {
        let located = try binding.locatedRecord(bytes, id: id, offsets: offsets)
        self.init(fields: located.fields, slots: located.slots, id: ObjectID(rawValue: id), binding: binding, context: context)
    }

    /// A reader over a record already opened (a borrowed view's: its checksum was checked when it was shown).
    init(fields: RecordFields, slots: RecordSlots, id: ObjectID, binding: __shared EntityBinding, context: __shared ReadContext?) {
        self.binding = binding
        self.attributeCount = binding.attributeCount
        self.context = context
        self.objectID = id
        self.record = fields
        self.slots = slots
        self.values = nil
    }

    /// A reader over attribute values already decoded (an object of the dynamic API).
    init(values: [Value], id: ObjectID, binding: __shared EntityBinding, context: __shared ReadContext?) {
        self.binding = binding
        self.attributeCount = binding.attributeCount
        self.context = context
        self.objectID = id
        self.record = nil
        self.values = values
    }

    private func corrupted(_ reason: String) -> StoreError {
        StoreError.corruptedRecord(entity: binding.name, id: objectID, reason: reason)
    }

    /// Checks that nothing follows the record's last field (after every attribute was read).
    mutating func finish() throws {
        do {
            try record?.checkEnd()
        } catch {
            throw corrupted(error.reason)
        }
    }

    /// Reads slot `slot`: in place from a field of type code `code` with `decode`, or, for decoded values and
    /// attributes an older layout projects, converted from a ``Value`` with `convert`. Nil when null.
    @inline(__always)
    mutating func read<T>(_ slot: Int, code: UInt8, _ decode: (inout BinaryReader) throws -> T,
                                  _ convert: (Value) -> T?) throws -> T? {
        if let values {
            guard slot < values.count else { throw corrupted("attribute \(slot) is missing") }
            let value = values[slot]
            if value.isNull { return nil }
            guard let converted = convert(value) else {
                throw StoreError.invalidValue(entity: binding.name, attribute: binding.attributeNames[slot],
                                              expected: "\(T.self)", actual: value.caseName).about(objectID)
            }
            return converted
        }
        guard slot < attributeCount else { throw corrupted("attribute \(slot) is missing") }
        do {
            return try record?.read(slot, of: binding, code: code, decode: decode, fromValue: convert) ?? nil
        } catch {
            switch error {
            case .damaged(let failure):
                throw corrupted(failure.reason)
            case .wrongType(let actual):
                throw StoreError.typeMismatch(expected: "a field of type code \(code) for \(binding.name).\(binding.attributeNames[slot])",
                                              actual: "type code \(actual)")
            case .notConvertible(let value):
                throw StoreError.invalidValue(entity: binding.name, attribute: binding.attributeNames[slot],
                                              expected: "\(T.self)", actual: value.caseName).about(objectID)
            }
        }
    }

    /// `value`, or the error for a required attribute that has none. Inlined into generated code (a generic
    /// call here would look up `Optional<T>`'s metadata for every field read); the error is built out of line.
    @inlinable @inline(__always)
    func required<T>(_ value: T?, _ slot: Int) throws -> T {
        guard let value else { throw missingRequiredValue(slot) }
        return value
    }

    @usableFromInline
    func missingRequiredValue(_ slot: Int) -> StoreError {
        // Decoded values (an inferred object a policy has not filled in yet) may lack a required value; a
        // stored record never does unless it is damaged.
        if values != nil {
            return StoreError.missingRequiredValue(entity: binding.name, attribute: binding.attributeNames[slot]).about(objectID)
        }
        return corrupted("required attribute \(binding.attributeNames[slot]) is null")
    }
}
