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
@_documentation(visibility: private)
public final class ModelRecordAccess {
    let binding: EntityBinding
    let context: ReadContext
    @exclusivity(unchecked) private var fields: RecordFields?
    @exclusivity(unchecked) private var lease: ReadLease
    /// The identifier of the object shown.
    @exclusivity(unchecked) public private(set) var objectID = ObjectID(rawValue: 0)

    @usableFromInline
    init(binding: EntityBinding, context: ReadContext) {
        self.binding = binding
        self.context = context
        self.lease = ReadLease(context.txn)
    }

    /// Shows the record of object `id` (its checksum checked).
    @usableFromInline
    func show(_ bytes: UnsafeRawBufferPointer, id: UInt64) throws {
        do {
            fields = try RecordFields(bytes, id: id, entity: binding)
        } catch {
            throw StoreError.corruptedRecord(entity: binding.name, id: ObjectID(rawValue: id), reason: error.reason)
        }
        objectID = ObjectID(rawValue: id)
        lease = ReadLease(context.txn)
    }

    /// Stops showing a record: the view's reads throw from now on.
    @usableFromInline
    func end() { fields = nil }

    /// Runs `body` with a reader over the shown record, after checking the view is still valid.
    @usableFromInline
    func reading<R>(_ body: (inout ModelReader) throws -> R) throws -> R {
        try lease.check()
        guard let shown = fields else { throw StoreError.transactionEnded }
        var reader = ModelReader(fields: shown, id: objectID, binding: binding, context: context)
        defer { fields = reader.record }
        return try body(&reader)
    }

    // Inlined into generated views, so the value type is concrete there (a generic read here would look up
    // `Optional<V>`'s metadata for every field read).
    @inlinable
    public func read<V: ModelScalar>(_ slot: Int) throws -> V {
        try reading { try $0.read(slot) }
    }

    @inlinable
    public func read<V: ModelScalar>(_ slot: Int) throws -> V? {
        try reading { try $0.read(slot) }
    }

    /// A string attribute in place (a projected value — a default or constant — as an owned string).
    public func string(_ slot: Int) throws -> BorrowedString {
        guard let s = try optionalString(slot) else {
            throw StoreError.corruptedRecord(entity: binding.name, id: objectID, reason: "required attribute \(binding.attributeNames[slot]) is null")
        }
        return s
    }

    public func optionalString(_ slot: Int) throws -> BorrowedString? {
        try lease.check()
        guard var shown = fields, let projection = shown.projection, slot < projection.readsFieldAsIs.count else {
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
        guard let name = T.propertyName(for: keyPath), let a = binding.attributeIndex[name] else {
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
        try forEachMatchingRecord { bytes, id in
            try access.show(bytes, id: id)
            try body(T.Record(access: access))
        }
    }

    /// Folds the matching objects' borrowed views into a result.
    @inlinable
    public func reduce<Result>(into initial: Result, _ update: (inout Result, T.Record) throws -> Void) throws -> Result {
        var result = initial
        try forEachRecord { try update(&result, $0) }
        return result
    }
}
