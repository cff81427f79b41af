import Foundation

/// Aggregates of a model query — `count`, `sum`, `min`, `max`, `average` of a property — computed from the
/// records in place: the query's key-path conditions are evaluated on fields (an index answers an equality or a
/// range on an indexed attribute), and only the aggregated field is read from each matching record; no model
/// value is built (a condition given as a closure over model values is the exception: it needs them).
///
/// ```swift
/// let views = try context.objects(Post.self).filter(\.softDelete == false).sum(\.views)
/// let newest = try context.objects(Post.self).max(\.date)
/// ```
///
/// Values follow the store's order (numbers numerically, strings by their UTF-8 bytes, as queries sort them);
/// nil values are left out of `sum`, `min`, `max` and `average`. A query's `offset` and `limit` apply (to the
/// objects in identifier order, or in its sort order when it has one).
extension ModelQuery {
    /// The sum of an integer property over the matching objects (0 when none).
    /// - Throws: ``StoreError/Code-swift.struct/invalidValue`` when the sum overflows `V`.
    @inlinable
    public func sum<V: ModelScalar & FixedWidthInteger>(_ keyPath: KeyPath<T, V>) throws -> V {
        try integerSum(keyPath)
    }

    /// The sum of an optional integer property over the matching objects that have a value (0 when none).
    @inlinable
    public func sum<V: ModelScalar & FixedWidthInteger>(_ keyPath: KeyPath<T, V?>) throws -> V {
        try integerSum(keyPath)
    }

    /// The sum of an integer property over the matching objects, added up in a wider type `R` (as SQL's `SUM`
    /// returns 64-bit integers): `sum(\.views, as: Int64.self)` over `Int32` views that would overflow `Int32`.
    /// - Throws: ``StoreError/Code-swift.struct/invalidValue`` when the sum overflows `R`.
    @inlinable
    public func sum<V: ModelScalar & FixedWidthInteger, R: FixedWidthInteger>(_ keyPath: KeyPath<T, V>, as type: R.Type) throws -> R {
        try integerSum(keyPath, as: R.self, V.self)
    }

    /// The sum of an optional integer property (nil values left out), added up in a wider type `R`.
    /// - Throws: ``StoreError/Code-swift.struct/invalidValue`` when the sum overflows `R`.
    @inlinable
    public func sum<V: ModelScalar & FixedWidthInteger, R: FixedWidthInteger>(_ keyPath: KeyPath<T, V?>, as type: R.Type) throws -> R {
        try integerSum(keyPath, as: R.self, V.self)
    }

    /// The sum of a floating-point property over the matching objects, added in identifier order (0 when none).
    @inlinable
    public func sum<V: ModelScalar & BinaryFloatingPoint>(_ keyPath: KeyPath<T, V>) throws -> V {
        var total: V = 0
        try fold(keyPath) { (v: V) in total += v }
        return total
    }

    /// The sum of an optional floating-point property over the matching objects that have a value.
    @inlinable
    public func sum<V: ModelScalar & BinaryFloatingPoint>(_ keyPath: KeyPath<T, V?>) throws -> V {
        var total: V = 0
        try fold(keyPath) { (v: V) in total += v }
        return total
    }

    /// The sum of a decimal property over the matching objects (0 when none).
    @inlinable
    public func sum(_ keyPath: KeyPath<T, Decimal>) throws -> Decimal {
        var total = Decimal(0)
        try fold(keyPath) { (v: Decimal) in total += v }
        return total
    }

    /// The sum of an optional decimal property over the matching objects that have a value.
    @inlinable
    public func sum(_ keyPath: KeyPath<T, Decimal?>) throws -> Decimal {
        var total = Decimal(0)
        try fold(keyPath) { (v: Decimal) in total += v }
        return total
    }

    /// The least value of a property among the matching objects (nil when none), in the store's order.
    @inlinable
    public func min<V: ModelScalar & Comparable>(_ keyPath: KeyPath<T, V>) throws -> V? {
        try extreme(keyPath, least: true)
    }

    /// The least value of an optional property among the matching objects that have one.
    @inlinable
    public func min<V: ModelScalar & Comparable>(_ keyPath: KeyPath<T, V?>) throws -> V? {
        try extreme(keyPath, least: true)
    }

    /// The greatest value of a property among the matching objects (nil when none), in the store's order.
    @inlinable
    public func max<V: ModelScalar & Comparable>(_ keyPath: KeyPath<T, V>) throws -> V? {
        try extreme(keyPath, least: false)
    }

    /// The greatest value of an optional property among the matching objects that have one.
    @inlinable
    public func max<V: ModelScalar & Comparable>(_ keyPath: KeyPath<T, V?>) throws -> V? {
        try extreme(keyPath, least: false)
    }

    /// The mean of an integer property over the matching objects (nil when none), computed in `Double`.
    @inlinable
    public func average<V: ModelScalar & BinaryInteger>(_ keyPath: KeyPath<T, V>) throws -> Double? {
        try mean(keyPath) { (v: V) in Double(v) }
    }

    /// The mean of an optional integer property over the matching objects that have a value.
    @inlinable
    public func average<V: ModelScalar & BinaryInteger>(_ keyPath: KeyPath<T, V?>) throws -> Double? {
        try mean(keyPath) { (v: V) in Double(v) }
    }

    /// The mean of a floating-point property over the matching objects (nil when none), computed in `Double`.
    @inlinable
    public func average<V: ModelScalar & BinaryFloatingPoint>(_ keyPath: KeyPath<T, V>) throws -> Double? {
        try mean(keyPath) { (v: V) in Double(v) }
    }

    /// The mean of an optional floating-point property over the matching objects that have a value.
    @inlinable
    public func average<V: ModelScalar & BinaryFloatingPoint>(_ keyPath: KeyPath<T, V?>) throws -> Double? {
        try mean(keyPath) { (v: V) in Double(v) }
    }

    // MARK: Folding

    @inlinable
    func integerSum<V: ModelScalar & FixedWidthInteger, P>(_ keyPath: KeyPath<T, P>) throws -> V {
        try integerSum(keyPath, as: V.self, V.self)
    }

    /// Adds up the `V` values of `keyPath` in `R`; a value `R` cannot hold counts as an overflow.
    @inlinable
    func integerSum<V: ModelScalar & FixedWidthInteger, R: FixedWidthInteger, P>(
        _ keyPath: KeyPath<T, P>, as: R.Type, _ stored: V.Type
    ) throws -> R {
        var total: R = 0
        var overflowed = false
        try fold(keyPath) { (v: V) in
            guard let w = R(exactly: v) else { overflowed = true; return }
            let (s, o) = total.addingReportingOverflow(w)
            total = s
            overflowed = overflowed || o
        }
        if overflowed { throw try sumOverflow(keyPath, type: "\(R.self)") }
        return total
    }

    /// The error of a sum that does not fit in its type.
    @usableFromInline
    func sumOverflow<P>(_ keyPath: KeyPath<T, P>, type: String) throws -> StoreError {
        StoreError.invalidValue(entity: binding.name, attribute: try attributeName(keyPath),
                                expected: "a sum that fits in \(type)", actual: "an overflow")
    }

    @inlinable
    func mean<V: ModelScalar, P>(_ keyPath: KeyPath<T, P>, _ double: (V) -> Double) throws -> Double? {
        var total = 0.0
        var n = 0
        try fold(keyPath) { (v: V) in total += double(v); n += 1 }
        return n == 0 ? nil : total / Double(n)
    }

    @inlinable
    func extreme<V: ModelScalar & Comparable, P>(_ keyPath: KeyPath<T, P>, least: Bool) throws -> V? {
        if let found: V? = try extremeFromIndex(keyPath, least: least) { return found }
        var best: V?
        if V.self == String.self {
            // Strings order by their UTF-8 bytes in the store (as queries compare them), not by `String`'s `<`.
            try fold(keyPath) { (v: V) in
                guard let b = best else { best = v; return }
                if least ? Self.storeOrders(v, before: b) : Self.storeOrders(b, before: v) { best = v }
            }
        } else {
            // Compared directly (no comparison closure called per record).
            try fold(keyPath) { (v: V) in
                guard let b = best else { best = v; return }
                if least ? v < b : b < v { best = v }
            }
        }
        return best
    }

    /// Whether the store orders `a` before `b` (strings by their UTF-8 bytes).
    @usableFromInline
    static func storeOrders<V: ModelScalar>(_ a: V, before b: V) -> Bool {
        a.queryValue.compare(b.queryValue) == .orderedAscending
    }

    /// The least or greatest value straight from the attribute's index: its first or last key's object, when the
    /// query has no condition, offset or limit, and the index orders values as they compare (fixed-size keys).
    /// Nil when the index cannot answer (the caller scans); `.some(nil)` when the entity has no value. An encrypted
    /// store's index keys are keyed hashes, which order nothing: it always scans.
    @usableFromInline
    func extremeFromIndex<V: ModelScalar, P>(_ keyPath: KeyPath<T, P>, least: Bool) throws -> V?? {
        guard predicates.isEmpty, filters.isEmpty, offsetCount == 0, limitCount == nil, !context.txn.hasHashedIndexKeys else { return nil }
        let a = try attribute(keyPath)
        switch binding.attributeTypes[a] {
        case .int64, .int32, .int16, .double, .float, .date, .bool, .uuid: break
        default: return nil
        }
        guard let index = try context.queryableIndex(binding, on: a) else { return nil }
        let cursor = try context.txn.cursor(index.dbi)
        var entry = try least ? cursor.first() : cursor.last()
        while let e = entry {
            let id = try ObjectKey.decode(e.value)
            if let bytes = try ObjectKey.with(id, { try context.txn.get(binding.dbi, key: $0) }) {
                var reader = try ModelReader(record: bytes, id: id, binding: binding, context: context)
                if let v = try V.read(a, from: &reader) { return .some(v) }
            }
            entry = try least ? cursor.next() : cursor.previous()
        }
        return .some(nil)
    }

    /// Calls `body` with the value of `keyPath` (a property of type `V` or `V?`) of each matching object that has
    /// one, reading only that field of each record.
    /// Inlined into the caller, so that the value type is concrete there: a generic read here would look up
    /// `Optional<V>`'s metadata for every record.
    /// Each record is shown in a borrowed view's access (its checksum checked, its fields located once, a condition
    /// evaluated on them), and the field is read in place.
    @inlinable
    func fold<V: ModelScalar, P>(_ keyPath: KeyPath<T, P>, _ body: (V) throws -> Void) throws {
        let a = try attribute(keyPath)
        let access = ModelRecordAccess(binding: binding, context: context)
        defer { access.end() }
        try forEachShownRecord(access) { slots in
            // A plain field of `V` read where it lies (the record is shown: no validity check); the rest (an older
            // layout's projection, a text the general path decodes) through the access.
            let o = slots.offset(ofSlot: a, code: V.fieldCode)
            if o >= 0, let v = V.inPlace(slots.bytes, at: o) { return try body(v) }
            if o == -1 { return }
            if let v: V = try access.read(a) { try body(v) }
        }
    }

    /// Calls `body` with the located fields of each matching record while `access` shows it (see
    /// ``forEachMatchingRecord(showing:_:)``): with
    /// no sort, offset, limit, closure filter or index to follow, and conditions all on stored attributes, in one
    /// loop over the entity's records (``ModelRecordAccess/showEach(matching:_:)``).
    @usableFromInline
    func forEachShownRecord(_ access: ModelRecordAccess, _ body: (RecordSlots) throws -> Void) throws {
        if filters.isEmpty, offsetCount == 0, limitCount == nil {
            let condition = RecordCondition(predicates, binding: binding)
            if condition != nil || predicates.isEmpty, try indexCondition() == nil {
                // (No predicate compiles to a condition every record satisfies: not evaluated per record.)
                return try access.showEach(matching: predicates.isEmpty ? nil : condition, body)
            }
        }
        try forEachMatchingRecord(showing: access) { _, _ in try body(access.slots) }
    }

    /// The position of the stored attribute a key path names.
    @usableFromInline
    func attribute<P>(_ keyPath: KeyPath<T, P>) throws -> Int {
        try binding.attribute(try attributeName(keyPath))
    }

    @usableFromInline
    func attributeName<P>(_ keyPath: KeyPath<T, P>) throws -> String {
        guard let name = T.propertyName(for: keyPath), binding.position(of: name) != nil else {
            throw StoreError.unknownAttribute(entity: binding.name, name: "\(keyPath)")
        }
        return name
    }

    /// Calls `body` with each matching record and its object's identifier, in identifier order (or index order;
    /// in the query's sort order when it sorts and limits), honouring offset and limit. Conditions on stored
    /// attributes are evaluated on the record's fields; closure filters, and conditions on other key paths, on
    /// model values.
    /// - Parameter access: when given, each candidate record is shown in it (checksum checked, fields located)
    ///   before its conditions are evaluated, on the located fields, and `body` reads it there.
    @usableFromInline
    func forEachMatchingRecord(showing access: ModelRecordAccess? = nil, _ body: (UnsafeRawBufferPointer, UInt64) throws -> Void) throws {
        if !sortKeys.isEmpty && (limitCount != nil || offsetCount > 0) {
            // Which objects count depends on the sort: take them as values, then read each record.
            for value in try limit(limitCount ?? Int.max).offset(offsetCount).fetch() {
                guard let id = value.objectID?.rawValue,
                      let bytes = try ObjectKey.with(id, { try context.txn.get(binding.dbi, key: $0) }) else { continue }
                try access?.show(bytes, id: id)
                try body(bytes, id)
            }
            return
        }
        if let limitCount, limitCount == 0 { return }
        let condition = RecordCondition(predicates, binding: binding)
        var skipped = 0
        var returned = 0
        // Decided once, not per record: in this generic type, asking an array of `T`'s closures whether it is
        // empty looks up its metadata every time.
        let checksModels = condition == nil && !predicates.isEmpty
        let hasFilters = !filters.isEmpty
        try scanRecords { bytes, id in
            if let access {
                guard try access.show(bytes, id: id, matching: condition) else { return true }
            } else if let condition {
                var reader = try ModelReader(record: bytes, id: id, binding: binding, context: context)
                guard try reader.matches(condition) else { return true }
            }
            if checksModels {
                guard try matchesModel(bytes, id) else { return true }
            }
            if hasFilters {
                let value = try context.decodeModel(T.self, bytes, id: id, binding: binding)
                for f in filters where try !f(value) { return true }
            }
            if skipped < offsetCount { skipped += 1; return true }
            try body(bytes, id)
            returned += 1
            if let limitCount { return returned < limitCount }
            return true
        }
    }

    private func matchesModel(_ bytes: UnsafeRawBufferPointer, _ id: UInt64) throws -> Bool {
        let value = try context.decodeModel(T.self, bytes, id: id, binding: binding)
        return predicates.allSatisfy { $0.evaluate(value) }
    }

    /// Visits the candidate records (all of the entity's, or those an index condition names) until `visit`
    /// returns false.
    private func scanRecords(_ visit: (UnsafeRawBufferPointer, UInt64) throws -> Bool) throws {
        let txn = context.txn
        if let condition = try indexCondition(), let index = try context.queryableIndex(binding, on: condition.attribute) {
            let walk = try IndexRangeWalk(condition, index: index.dbi, in: txn)
            while let id = try walk.next() {
                if let bytes = try ObjectKey.with(id, { try txn.get(binding.dbi, key: $0) }), try !visit(bytes, id) { return }
            }
            return
        }
        try binding.forEachStoredRecord(in: txn) { id, bytes in try visit(bytes, id) }
    }
}

extension ModelReader {
    /// Whether the record satisfies a compiled condition (on its fields, in place).
    mutating func matches(_ condition: RecordCondition) throws -> Bool {
        guard var fields = record else { return true }
        defer { record = fields }
        do {
            return try condition.matches(&fields, binding)
        } catch {
            throw StoreError.corruptedRecord(entity: binding.name, id: objectID, reason: error.reason)
        }
    }
}
