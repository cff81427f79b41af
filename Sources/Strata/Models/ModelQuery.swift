import Foundation

/// A lazy query over the objects of a model type: key-path conditions (``ModelPredicate``), sorting by key
/// paths, offset and limit. Nothing is read until ``forEach(_:)``, ``fetch()``, ``first()``, ``count()`` or
/// ``ids()`` runs it.
///
/// An equality or a range on an indexed attribute is answered by its index: only the objects the index
/// names are read. Objects are decoded straight from their records into `T`.
///
/// ```swift
/// let recent = try context.objects(Post.self)
///     .filter(\.softDelete == false && \.date >= lastWeek)
///     .sorted(by: \.date, ascending: false)
///     .limit(20)
///     .fetch()
/// ```
public struct ModelQuery<T: EntityModel> {
    @usableFromInline let context: ReadContext
    @usableFromInline let binding: EntityBinding
    var predicates: [ModelPredicate<T>] = []
    var filters: [(T) throws -> Bool] = []
    var sortKeys: [(read: (T) -> Value, ascending: Bool)] = []
    var limitCount: Int?
    var offsetCount = 0

    init(context: ReadContext, binding: EntityBinding) {
        self.context = context
        self.binding = binding
    }

    // MARK: Building

    /// Keeps the objects that satisfy `predicate` (several calls: all of them).
    public func filter(_ predicate: ModelPredicate<T>) -> ModelQuery<T> {
        var q = self
        q.predicates.append(predicate)
        return q
    }

    /// Keeps the values for which `isIncluded` returns true (checked on every candidate; no index).
    public func filter(_ isIncluded: @escaping (T) throws -> Bool) -> ModelQuery<T> {
        var q = self
        q.filters.append(isIncluded)
        return q
    }

    /// Sorts by a property (later calls add secondary keys), in the store's order of values; nil first when
    /// ascending. Ties keep identifier order.
    public func sorted<V: ModelQueryable>(by keyPath: KeyPath<T, V>, ascending: Bool = true) -> ModelQuery<T> {
        var q = self
        q.sortKeys.append(({ $0[keyPath: keyPath].queryValue }, ascending))
        return q
    }

    /// Returns at most `count` objects.
    public func limit(_ count: Int) -> ModelQuery<T> {
        var q = self
        q.limitCount = Swift.max(0, count)
        return q
    }

    /// Skips the first `count` objects.
    public func offset(_ count: Int) -> ModelQuery<T> {
        var q = self
        q.offsetCount = Swift.max(0, count)
        return q
    }

    // MARK: Running

    /// Calls `body` with each value, in order, streaming from a cursor when the query is not sorted.
    ///
    /// Inlined into the caller, so that `T` is concrete there: each value is built by `T`'s own reading
    /// initializer and handed over with no generic call or outlined copy per object.
    @inlinable
    public func forEach(_ body: (T) throws -> Void) throws {
        let streamed = try forEachMatchingReader { reader in
            let value = try T(from: &reader)
            try body(value)
        }
        if !streamed { try forEachGenerally(body) }
    }

    /// ``forEach(_:)`` for the queries ``forEachMatchingReader(_:)`` does not stream: sorted ones, those with
    /// closure filters, conditions on key paths that are not stored attributes, or an index to follow.
    @usableFromInline
    func forEachGenerally(_ body: (T) throws -> Void) throws {
        if !sortKeys.isEmpty {
            for value in try sortedValues() { try body(value) }
            return
        }
        var skipped = 0
        var returned = 0
        if let limitCount, limitCount == 0 { return }
        try scan { value in
            if skipped < offsetCount { skipped += 1; return true }
            try body(value)
            returned += 1
            return limitCount.map { returned < $0 } ?? true
        }
    }

    /// Streams the matching objects of an unsorted query whose conditions are all on stored attributes and that
    /// follows no index: calls `body` with a reader over each matching record (for `T`'s reading initializer), in
    /// identifier order, honouring offset and limit. Returns false, having read nothing, for any other query.
    ///
    /// Records come from the one scan loop (``EntityBinding/forEachLocatedRecord(in:offsets:_:)``: checksum checked,
    /// every field located once into the context's offset table); conditions are evaluated on the located fields
    /// (as ``count()`` and the aggregates evaluate them), so no value is built for a record that does not match or
    /// that the offset skips.
    @usableFromInline
    func forEachMatchingReader(_ body: (inout ModelReader) throws -> Void) throws -> Bool {
        guard sortKeys.isEmpty, filters.isEmpty else { return false }
        let compiled = RecordCondition(predicates, binding: binding)
        guard compiled != nil || predicates.isEmpty, try indexCondition() == nil else { return false }
        if let limitCount, limitCount == 0 { return true }
        // Everything the loop uses, in locals and unwrapped once.
        let binding = self.binding, context = self.context
        // (No predicate compiles to a condition every record satisfies: not evaluated per record.)
        let filters = compiled != nil && !predicates.isEmpty
        let condition = compiled ?? .always
        let limit = limitCount ?? Int.max, offset = offsetCount
        var skipped = 0
        var returned = 0
        let offsets = context.lendOffsets(RecordFields.fieldCapacity(of: binding))
        defer { context.returnOffsets(offsets) }
        try binding.forEachLocatedRecord(in: context.txn, offsets: offsets) { id, fields, slots in
            if filters {
                let matched: Bool
                do throws(DecodeFailure) { matched = try condition.matches(slots, &fields, binding) } catch {
                    throw StoreError.corruptedRecord(entity: binding.name, id: ObjectID(rawValue: id), reason: error.reason)
                }
                guard matched else { return true }
            }
            if skipped < offset { skipped += 1; return true }
            // Every field was located and the record's end checked: the reader needs no `finish()`.
            var reader = ModelReader(fields: fields, slots: slots, id: ObjectID(rawValue: id), binding: binding, context: context)
            try body(&reader)
            returned += 1
            return returned < limit
        }
        return true
    }

    /// The matching values.
    public func fetch() throws -> [T] {
        var out: [T] = []
        try forEach { out.append($0) }
        return out
    }

    /// The first matching value.
    public func first() throws -> T? {
        try limit(Swift.min(limitCount ?? 1, 1)).fetch().first
    }

    /// The identifiers of the matching objects.
    public func ids() throws -> [ObjectID] {
        var out: [ObjectID] = []
        try forEach { if let id = $0.objectID { out.append(id) } }
        return out
    }

    /// The number of matching objects (constant time without conditions).
    public func count() throws -> Int {
        if predicates.isEmpty && filters.isEmpty {
            let n = Swift.max(0, try context.txn.entryCount(binding.dbi) - offsetCount)
            return limitCount.map { Swift.min($0, n) } ?? n
        }
        // Conditions are checked on the records' fields, each record shown whole (checksum and every field
        // checked, as every read does): no value is built.
        let access = ModelRecordAccess(binding: binding, context: context)
        defer { access.end() }
        var n = 0
        try forEachShownRecord(access) { _ in n += 1 }
        return n
    }

    // MARK: Scanning

    /// Whether `value` passes every condition.
    @inline(__always)
    private func matches(_ value: T) throws -> Bool {
        for p in predicates where !p.evaluate(value) { return false }
        for f in filters where try !f(value) { return false }
        return true
    }

    /// Visits the matching values in identifier order (or index order), until `visit` returns false.
    func scan(_ visit: (T) throws -> Bool) throws {
        let txn = context.txn
        if let condition = try indexCondition(), let index = try context.queryableIndex(binding, on: condition.attribute) {
            let walk = try IndexRangeWalk(condition, index: index.dbi, in: txn)
            while let id = try walk.next() {
                if let bytes = try ObjectKey.with(id, { try txn.get(binding.dbi, key: $0) }) {
                    let value = try context.decodeModel(T.self, bytes, id: id, binding: binding)
                    if try matches(value), try !visit(value) { return }
                }
            }
            return
        }
        // The one scan loop: each record opened and located into the context's offset table, then built.
        let unfiltered = predicates.isEmpty && filters.isEmpty
        let entity = binding
        let offsets = context.lendOffsets(RecordFields.fieldCapacity(of: entity))
        defer { context.returnOffsets(offsets) }
        try entity.forEachLocatedRecord(in: txn, offsets: offsets) { id, fields, slots in
            var reader = ModelReader(fields: fields, slots: slots, id: ObjectID(rawValue: id), binding: entity, context: context)
            let value = try T(from: &reader)
            guard try unfiltered || matches(value) else { return true }
            return try visit(value)
        }
    }

    /// The index condition the query's predicates allow: an equality on an indexed attribute if any, else a
    /// range; nil when no top-level comparison can use an index.
    func indexCondition() throws -> ObjectQuery.AttributeCondition? {
        var best: ObjectQuery.AttributeCondition?
        var bounds: [Int: ObjectQuery.AttributeCondition] = [:]
        for comparison in predicates.flatMap(\.conjuncts) where !comparison.value.isNull {
            guard let name = T.propertyName(for: comparison.keyPath), let a = binding.position(of: name),
                  try context.queryableIndex(binding, on: a) != nil else { continue }
            var c = bounds[a] ?? ObjectQuery.AttributeCondition(attribute: a, lower: nil, lowerInclusive: true, upper: nil, upperInclusive: true)
            let v = binding.attributeTypes[a].coerce(comparison.value) ?? comparison.value
            switch comparison.op {
            case .equal:
                c.lower = v; c.lowerInclusive = true; c.upper = v; c.upperInclusive = true
            case .greater, .greaterOrEqual:
                if c.lower == nil || (c.lower.flatMap { v.compare($0) } == .orderedDescending) {
                    c.lower = v
                    c.lowerInclusive = comparison.op == .greaterOrEqual
                }
            case .less, .lessOrEqual:
                if c.upper == nil || (c.upper.flatMap { v.compare($0) } == .orderedAscending) {
                    c.upper = v
                    c.upperInclusive = comparison.op == .lessOrEqual
                }
            case .notEqual:
                continue
            }
            bounds[a] = c
        }
        for c in bounds.values.sorted(by: { $0.attribute < $1.attribute })
        where c.canUseIndex(for: binding.attributeTypes[c.attribute], hashedKeys: context.txn.hasHashedIndexKeys) {
            if c.equals != nil { return c }
            if best == nil { best = c }
        }
        return best
    }

    // MARK: Sorting

    private func areInIncreasingOrder(_ a: T, _ b: T) -> Bool {
        for key in sortKeys {
            let c = key.read(a).compare(key.read(b)) ?? .orderedSame
            if c == .orderedSame { continue }
            return key.ascending ? c == .orderedAscending : c == .orderedDescending
        }
        return (a.objectID?.rawValue ?? 0) < (b.objectID?.rawValue ?? 0)
    }

    private func sortedValues() throws -> [T] {
        var result: [T]
        if let limitCount {
            var heap = BoundedHeap<T>(capacity: limitCount + offsetCount) { self.areInIncreasingOrder($0, $1) }
            try scan { try heap.insert($0); return true }
            result = try heap.sortedElements()
        } else {
            var all: [T] = []
            try scan { all.append($0); return true }
            result = all.sorted { areInIncreasingOrder($0, $1) }
        }
        let start = Swift.min(offsetCount, result.count)
        let end = limitCount.map { Swift.min(result.count, start + $0) } ?? result.count
        return Array(result[start..<end])
    }
}
