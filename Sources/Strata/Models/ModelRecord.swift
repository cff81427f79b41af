import Foundation

/// A stored object of a model type read in place — a *borrowed record*: each property is decoded from the
/// store's memory map when it is read, strings are ``BorrowedString``s compared where they lie, and nothing is
/// built for the properties a scan does not read. The `@Entity` macro generates each model's view
/// (`Post.Record`, a property per stored property, throwing); ``ModelQuery/forEachRecord(_:)`` and
/// ``ModelQuery/reduce(into:_:)`` hand them over.
///
/// A view is valid only inside the closure that receives it, for the object it shows: read afterwards (or, in
/// a write, after the write changes anything), its properties throw ``StoreError/transactionEnded``. Call
/// `model()` for an owned value.
public protocol ModelRecordView {
    associatedtype Model: EntityModel
    /// A view reading through `access` (generated code).
    init(access: ModelRecordAccess)
}

/// The borrowed view of a model type that declares none (a hand-written ``EntityModel``): properties by key path.
public struct ModelRecord<Model: EntityModel>: ModelRecordView {
    let access: ModelRecordAccess
    public init(access: ModelRecordAccess) { self.access = access }

    /// The object's identifier.
    public var objectID: ObjectID { access.objectID }

    /// The stored property `keyPath` names.
    public subscript<V: ModelScalar>(_ keyPath: KeyPath<Model, V>) -> V {
        get throws { try access.read(try access.slot(of: keyPath)) }
    }

    /// The optional stored property `keyPath` names.
    public subscript<V: ModelScalar>(_ keyPath: KeyPath<Model, V?>) -> V? {
        get throws { try access.read(try access.slot(of: keyPath)) }
    }

    /// The object as an owned value.
    public func model() throws -> Model { try access.model(Model.self) }
}

/// Reads the record a borrowed view shows (the API generated views call). One per scan, moved from record to
/// record.
///
/// Showing a record checks its checksum and locates every field in one walk, into an offset table the scan
/// reuses (``RecordSlots``); a property read is then a validity check (two loads and a comparison: no reference
/// is counted) and, for a plain field, an unaligned load inlined into the app's code. Anything else (a projected
/// attribute of an older layout, a Codable or raw value, a damaged field) goes through the general path.
@_documentation(visibility: private)
public final class ModelRecordAccess {
    let binding: EntityBinding
    let context: ReadContext
    /// The transaction the scan reads in (one reference for the whole scan, none per record or property).
    @usableFromInline let txn: Transaction
    // Only the thread running the scan touches an access: no dynamic exclusivity checks on these.
    @exclusivity(unchecked) private var fields: RecordFields?
    /// The shown record's fields by slot.
    @usableFromInline @exclusivity(unchecked) var slots = RecordSlots.none
    /// Whether a record is shown (false before the first and after the scan).
    @usableFromInline @exclusivity(unchecked) var isShowing = false
    /// The transaction's change count when the record was shown: a change since may have moved its bytes.
    @usableFromInline @exclusivity(unchecked) var changes = 0
    /// Each field's start in the shown record, in one buffer reused for every record.
    private let offsets: UnsafeMutablePointer<Int>
    /// The identifier of the object shown.
    public var objectID: ObjectID { shownID }
    // Stored under another name: a public stored property is read in the caller's module, which checks its
    // exclusivity dynamically (`swift_beginAccess`, about 75 instructions for every record a scan shows) even
    // though it is marked unchecked here.
    @exclusivity(unchecked) private var shownID = ObjectID(rawValue: 0)

    @usableFromInline
    init(binding: EntityBinding, context: ReadContext) {
        self.binding = binding
        self.context = context
        self.txn = context.txn
        self.offsets = .allocate(capacity: RecordFields.fieldCapacity(of: binding))
    }

    deinit { offsets.deallocate() }

    /// Shows the record of object `id`: its checksum checked, every field located.
    @usableFromInline
    func show(_ bytes: UnsafeRawBufferPointer, id: UInt64) throws {
        isShowing = false
        (fields, slots) = try binding.locatedRecord(bytes, id: id, offsets: offsets)
        shownID = ObjectID(rawValue: id)
        changes = txn.changes
        isShowing = true
    }

    /// Shows the record of object `id` and tells whether it satisfies `condition` (true without one).
    func show(_ bytes: UnsafeRawBufferPointer, id: UInt64, matching condition: RecordCondition?) throws -> Bool {
        try show(bytes, id: id)
        guard let condition else { return true }
        return try matches(condition)
    }

    /// Shows each of the entity's records in identifier order, through the one scan loop
    /// (``EntityBinding/forEachLocatedRecord(in:offsets:_:)``: checksum checked, every field located), and calls
    /// `body` for those that satisfy `condition` (all without one) while the record is shown: the loop of borrowed
    /// records, aggregates and counts with no sort, offset, limit or index to follow. The condition is evaluated on
    /// the located fields; no closure, existential or reference count per record besides `body`, which is given the
    /// record's located fields.
    func showEach(matching condition: RecordCondition?, _ body: (RecordSlots) throws -> Void) throws {
        // Everything the loop uses, in locals and unwrapped once: no reference or optional is copied per record.
        let txn = self.txn, binding = self.binding
        let filters = condition != nil
        let condition = condition ?? .always
        try binding.forEachLocatedRecord(in: txn, offsets: offsets) { id, shown, located in
            shownID = ObjectID(rawValue: id)
            changes = txn.changes
            slots = located
            isShowing = true
            var matched = true
            if filters {
                do throws(DecodeFailure) { matched = try condition.matches(located, &shown, binding) } catch {
                    throw StoreError.corruptedRecord(entity: binding.name, id: objectID, reason: error.reason)
                }
            }
            fields = shown
            if matched { try body(located) }
            isShowing = false
            return true
        }
    }

    /// Stops showing a record: the view's reads throw from now on.
    @usableFromInline
    func end() {
        isShowing = false
        fields = nil
        slots = .none
    }

    /// Whether the shown record may still be read: it is shown, and the transaction made no change since.
    @inlinable @inline(__always)
    var isValid: Bool { isShowing && txn.changes == changes }

    /// The lease borrowed strings hold: valid until the transaction ends or changes something.
    /// (Inlinable: the generated views read strings through inlined code that makes the lease.)
    @inlinable
    var lease: ReadLease { ReadLease(txn: txn, changes: changes) }

    /// Runs `body` with a reader over the shown record, after checking the view is still valid.
    @usableFromInline
    func reading<R>(_ body: (inout ModelReader) throws -> R) throws -> R {
        guard isValid, let shown = fields else { throw StoreError.transactionEnded }
        var reader = ModelReader(fields: shown, slots: slots, id: objectID, binding: binding, context: context)
        defer { fields = reader.record }
        return try body(&reader)
    }

    /// Whether the shown record satisfies a compiled condition (on its fields, in place).
    func matches(_ condition: RecordCondition) throws -> Bool {
        guard isValid, var shown = fields else { throw StoreError.transactionEnded }
        defer { fields = shown }
        do {
            return try condition.matches(slots, &shown, binding)
        } catch {
            throw StoreError.corruptedRecord(entity: binding.name, id: objectID, reason: error.reason)
        }
    }

    // Inlined into generated views, so the value type is concrete there: a plain field is read with one load;
    // everything else (and every error) goes through the general path.
    @inlinable
    public func read<V: ModelScalar>(_ slot: Int) throws -> V {
        if isValid {
            let o = slots.offset(ofSlot: slot, code: V.fieldCode)
            if o >= 0, let v = V.inPlace(slots.bytes, at: o) { return v }
        }
        return try readGenerally(slot)
    }

    @inlinable
    public func read<V: ModelScalar>(_ slot: Int) throws -> V? {
        if isValid {
            let o = slots.offset(ofSlot: slot, code: V.fieldCode)
            if o >= 0, let v = V.inPlace(slots.bytes, at: o) { return v }
            if o == -1 { return nil }
        }
        return try readOptionalGenerally(slot)
    }

    @usableFromInline
    func readGenerally<V: ModelScalar>(_ slot: Int) throws -> V {
        try reading { r in
            let v = try V.read(slot, from: &r)
            return try r.required(v, slot)
        }
    }

    @usableFromInline
    func readOptionalGenerally<V: ModelScalar>(_ slot: Int) throws -> V? {
        try reading { try V.read(slot, from: &$0) }
    }

    /// A string attribute in place (a projected value — a default or constant — as an owned string).
    @inlinable
    public func string(_ slot: Int) throws -> BorrowedString {
        if isValid {
            let o = slots.offset(ofSlot: slot, code: 7)
            if o >= 0, let utf8 = slots.lengthPrefixed(at: o) { return BorrowedString(bytes: utf8, lease: lease) }
        }
        return try stringGenerally(slot)
    }

    @inlinable
    public func optionalString(_ slot: Int) throws -> BorrowedString? {
        if isValid {
            let o = slots.offset(ofSlot: slot, code: 7)
            if o >= 0, let utf8 = slots.lengthPrefixed(at: o) { return BorrowedString(bytes: utf8, lease: lease) }
            if o == -1 { return nil }
        }
        return try optionalStringGenerally(slot)
    }

    @usableFromInline
    func stringGenerally(_ slot: Int) throws -> BorrowedString {
        guard let s = try optionalStringGenerally(slot) else {
            throw StoreError.corruptedRecord(entity: binding.name, id: objectID, reason: "required attribute \(binding.attributeNames[slot]) is null")
        }
        return s
    }

    @usableFromInline
    func optionalStringGenerally(_ slot: Int) throws -> BorrowedString? {
        guard isValid, var shown = fields, let projection = shown.projection, slot < projection.readsFieldAsIs.count else {
            throw StoreError.transactionEnded
        }
        if projection.readsFieldAsIs[slot], let f = projection.attributeFields[slot], projection.fieldCodes[f] == 7 {
            defer { fields = shown }
            do {
                guard var r = try shown.reader(atField: f) else { return nil }
                return BorrowedString(bytes: try r.lengthPrefixed(), lease: lease)
            } catch {
                throw StoreError.corruptedRecord(entity: binding.name, id: objectID, reason: "\(error)")
            }
        }
        let owned: String? = try reading { try $0.read(slot) }
        return owned.map { BorrowedString(owned: $0, lease: lease) }
    }

    public func codable<T: Decodable>(_ slot: Int) throws -> T {
        try reading { try $0.codable(slot) }
    }

    public func optionalCodable<T: Decodable>(_ slot: Int) throws -> T? {
        try reading { try $0.optionalCodable(slot) }
    }

    public func raw<T: RawRepresentable>(_ slot: Int) throws -> T where T.RawValue: ModelScalar {
        try reading { try $0.raw(slot) }
    }

    public func optionalRaw<T: RawRepresentable>(_ slot: Int) throws -> T? where T.RawValue: ModelScalar {
        try reading { try $0.optionalRaw(slot) }
    }

    public func related(_ position: Int) throws -> [ObjectID] {
        try reading { try $0.related(position) }
    }

    public func relatedOne(_ position: Int) throws -> ObjectID? {
        try reading { try $0.relatedOne(position) }
    }

    /// The object as an owned value of `T`.
    public func model<T: EntityModel>(_ type: T.Type) throws -> T {
        try reading { reader in
            let value = try T(from: &reader)
            try reader.finish()
            return value
        }
    }

    /// The slot of the stored property `keyPath` names.
    func slot<T: EntityModel, P>(of keyPath: KeyPath<T, P>) throws -> Int {
        guard let name = T.propertyName(for: keyPath), let a = binding.position(of: name) else {
            throw StoreError.unknownAttribute(entity: binding.name, name: "\(keyPath)")
        }
        return a
    }
}

extension ModelQuery {
    /// Calls `body` with a borrowed view of each matching object (see ``ModelRecordView``): the fast path for
    /// scans that read a few properties or fold them. Conditions on stored properties are checked on fields.
    ///
    /// ```swift
    /// var words = 0
    /// try context.objects(Post.self).filter(\.softDelete == false).forEachRecord { post in
    ///     words += try post.content.utf8Count / 6
    /// }
    /// ```
    @inlinable
    public func forEachRecord(_ body: (T.Record) throws -> Void) throws {
        let access = ModelRecordAccess(binding: binding, context: context)
        defer { access.end() }
        // One view for the whole scan: a view holds nothing but the access, which shows each record in turn (made
        // per record, the view retained and released the access for every record).
        let record = T.Record(access: access)
        try forEachShownRecord(access) { _ in try body(record) }
    }

    /// Folds the matching objects' borrowed views into a result.
    @inlinable
    public func reduce<Result>(into initial: Result, _ update: (inout Result, T.Record) throws -> Void) throws -> Result {
        var result = initial
        try forEachRecord { try update(&result, $0) }
        return result
    }
}
