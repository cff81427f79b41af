import Foundation

/// A lazy query over the objects of one entity: filters, an attribute condition answered by an index when
/// there is one, sorting, offset and limit. Nothing is read until ``forEach(_:)``, ``fetch()``,
/// ``count()``, ``first()`` or ``makeCursor()`` runs it.
///
/// Without sorting, a query streams objects from a cursor: memory does not grow with the entity's size.
/// Sorting with a limit keeps only the best `limit + offset` objects (a heap); sorting without a limit
/// holds every matching object in memory.
///
/// ```swift
/// let recent = try context.objects("Post")
///     .filter { $0["softDelete"] == false }
///     .sorted(by: "date", ascending: false)
///     .limit(20)
///     .fetch()
/// ```
public struct ObjectQuery {
    let context: ReadContext
    let binding: EntityBinding
    var predicates: [(DynamicObject) throws -> Bool] = []
    var condition: AttributeCondition? = nil
    var sortKeys: [(attribute: Int, ascending: Bool)] = []
    var comparator: ((DynamicObject, DynamicObject) throws -> Bool)? = nil
    var limitCount: Int? = nil
    var offsetCount: Int = 0

    struct AttributeCondition {
        var attribute: Int
        var lower: Value?
        var lowerInclusive: Bool
        var upper: Value?
        var upperInclusive: Bool
        var equals: Value? { lower != nil && lowerInclusive && upperInclusive && lower == upper ? lower : nil }

        func matches(_ v: Value) -> Bool {
            if v.isNull { return false }
            if let eq = equals { return v == eq || v.compare(eq) == .orderedSame }
            if let lower {
                guard let c = v.compare(lower) else { return false }
                if c == .orderedAscending || (c == .orderedSame && !lowerInclusive) { return false }
            }
            if let upper {
                guard let c = v.compare(upper) else { return false }
                if c == .orderedDescending || (c == .orderedSame && !upperInclusive) { return false }
            }
            return true
        }

        /// Whether an index on an attribute of `type` can answer the condition. Index keys order the values
        /// of one kind only (integers of any width, floating-point numbers of either width, or the attribute's
        /// own type), so a bound of another kind (an integer attribute queried from `2.5`) needs a scan; and
        /// decimal keys are text, which answers equality but not ranges. A bound longer than the index's inline
        /// limit has a key ending in a hash, which does not order values sharing its prefix: ranges from or to
        /// it are scanned too. An encrypted store's index keys are keyed hashes (`hashedKeys`), which order
        /// nothing: they answer equality only, and ranges are scanned.
        func canUseIndex(for type: AttributeType, hashedKeys: Bool) -> Bool {
            if (type == .decimal || hashedKeys) && equals == nil { return false }
            for bound in [lower, upper] {
                guard let bound else { continue }
                if equals == nil && IndexKey.isHashed(IndexKey.encode(bound)) { return false }
                switch bound {
                case .int64, .int32, .int16: if !type.isInteger { return false }
                case .double, .float: if type != .double && type != .float { return false }
                case .codable: if case .codable = type {} else { return false }
                default: if bound.storageType != type { return false }
                }
            }
            return true
        }
    }

    init(context: ReadContext, binding: EntityBinding) {
        self.context = context
        self.binding = binding
    }

    // MARK: Building

    /// Keeps the objects for which `isIncluded` returns true.
    public func filter(_ isIncluded: @escaping (DynamicObject) throws -> Bool) -> ObjectQuery {
        var q = self
        q.predicates.append(isIncluded)
        return q
    }

    /// Keeps the objects whose `attribute` equals `value`; answered by the attribute's index when it has one.
    ///
    /// `where(name, equals: nil)` keeps the objects whose attribute is null (null values are not indexed,
    /// so this scans).
    public func `where`(_ attribute: String, equals value: Value) throws -> ObjectQuery {
        let a = try binding.attribute(attribute)
        if value.isNull { return filter { $0.values[a].isNull } }
        let v = binding.attributeTypes[a].coerce(value) ?? value
        return try adding(AttributeCondition(attribute: a, lower: v, lowerInclusive: true, upper: v, upperInclusive: true))
    }

    /// Keeps the objects whose `attribute` lies in `lower...upper` (either bound may be nil; `upper` is
    /// excluded unless `upperInclusive`). Answered by the attribute's index when it has one, in index order
    /// (except ranges over decimals, and bounds of another kind than the attribute's, which are scanned).
    public func `where`(_ attribute: String, from lower: Value?, to upper: Value?, upperInclusive: Bool = false) throws -> ObjectQuery {
        let a = try binding.attribute(attribute)
        let type = binding.attributeTypes[a]
        return try adding(AttributeCondition(attribute: a, lower: lower.map { type.coerce($0) ?? $0 }, lowerInclusive: true,
                                             upper: upper.map { type.coerce($0) ?? $0 }, upperInclusive: upperInclusive))
    }

    private func adding(_ c: AttributeCondition) throws -> ObjectQuery {
        var q = self
        if q.condition == nil {
            q.condition = c
        } else {
            q.predicates.append { c.matches($0.values[c.attribute]) }
        }
        return q
    }

    /// Sorts by an attribute (later calls add secondary keys). Nulls sort first in ascending order.
    public func sorted(by attribute: String, ascending: Bool = true) throws -> ObjectQuery {
        var q = self
        q.sortKeys.append((try binding.attribute(attribute), ascending))
        return q
    }

    /// Sorts with a comparator (replaces attribute sort keys).
    public func sorted(by areInIncreasingOrder: @escaping (DynamicObject, DynamicObject) throws -> Bool) -> ObjectQuery {
        var q = self
        q.comparator = areInIncreasingOrder
        return q
    }

    /// Returns at most `count` objects.
    public func limit(_ count: Int) -> ObjectQuery {
        var q = self
        q.limitCount = max(0, count)
        return q
    }

    /// Skips the first `count` objects.
    public func offset(_ count: Int) -> ObjectQuery {
        var q = self
        q.offsetCount = max(0, count)
        return q
    }

    // MARK: Running

    /// Calls `body` with each object, in order, streaming when the query is not sorted.
    public func forEach(_ body: (DynamicObject) throws -> Void) throws {
        if isSorted {
            for object in try sortedObjects() { try body(object) }
            return
        }
        if condition != nil, try conditionIndex() != nil {
            let cursor = try makeCursor()
            while let object = try cursor.next() { try body(object) }
            return
        }
        try forEachScanned(body)
    }

    /// The index that answers the query's attribute condition, when there is one that can.
    func conditionIndex() throws -> IndexBinding? {
        guard let c = condition, c.canUseIndex(for: binding.attributeTypes[c.attribute], hashedKeys: context.txn.hasHashedIndexKeys) else {
            return nil
        }
        return try context.queryableIndex(binding, on: c.attribute)
    }

    /// Streams the matching objects of an unsorted query that follows no index, from the one scan loop
    /// (``EntityBinding/forEachStoredRecord(in:_:)``), honouring the condition, filters, offset and limit. Each
    /// record is decoded into the previous object's value storage (in place when `body` kept no copy of it).
    private func forEachScanned(_ body: (DynamicObject) throws -> Void) throws {
        if let limitCount, limitCount == 0 { return }
        let binding = self.binding
        let limit = limitCount ?? Int.max, offset = offsetCount
        // Decided once, not per record.
        let hasCondition = condition != nil
        let condition = self.condition ?? AttributeCondition(attribute: 0, lower: nil, lowerInclusive: true, upper: nil, upperInclusive: true)
        let hasPredicates = !predicates.isEmpty
        var skipped = 0
        var returned = 0
        var values: [Value] = []
        try binding.forEachStoredRecord(in: context.txn) { id, bytes in
            try binding.decodeValues(bytes, id: id, into: &values)
            if hasCondition, !condition.matches(values[condition.attribute]) { return true }
            let object = DynamicObject(id: ObjectID(rawValue: id), binding: binding, values: values)
            if hasPredicates {
                for p in predicates where try !p(object) { return true }
            }
            if skipped < offset { skipped += 1; return true }
            try body(object)
            returned += 1
            return returned < limit
        }
    }

    /// The matching objects, as an array.
    public func fetch() throws -> [DynamicObject] {
        if isSorted { return try sortedObjects() }
        // Every object is kept: each gets storage of its own rather than a copy of the previous one's.
        let cursor = try unsortedCursor(recyclingStorage: false)
        var out: [DynamicObject] = []
        while let object = try cursor.next() { out.append(object) }
        return out
    }

    /// The identifiers of the matching objects.
    public func ids() throws -> [ObjectID] {
        var out: [ObjectID] = []
        try forEach { out.append($0.id) }
        return out
    }

    /// The first matching object.
    public func first() throws -> DynamicObject? {
        // At most one, but never more than the query's own limit (a `limit(0)` query has no first object).
        try limit(min(limitCount ?? 1, 1)).fetch().first
    }

    /// The number of matching objects (constant time when the query has no condition or filter).
    public func count() throws -> Int {
        if predicates.isEmpty && condition == nil {
            let n = max(0, try context.txn.entryCount(binding.dbi) - offsetCount)
            return limitCount.map { min($0, n) } ?? n
        }
        var n = 0
        let cursor = try unsortedCursor()
        while try cursor.next() != nil { n += 1 }
        return n
    }

    /// A cursor over the matching objects. For a sorted query the matches are sorted first.
    public func makeCursor() throws -> ObjectCursor {
        if isSorted { return ObjectCursor(sorted: try sortedObjects(), context: context) }
        return try unsortedCursor()
    }

    private var isSorted: Bool { comparator != nil || !sortKeys.isEmpty }

    private func unsortedCursor(recyclingStorage: Bool = true) throws -> ObjectCursor {
        let cursor = try ObjectCursor(query: self)
        cursor.recyclesStorage = recyclingStorage
        return cursor
    }

    private func areInIncreasingOrder(_ a: DynamicObject, _ b: DynamicObject) throws -> Bool {
        if let comparator { return try comparator(a, b) }
        for key in sortKeys {
            let c = a.values[key.attribute].compare(b.values[key.attribute]) ?? .orderedSame
            if c == .orderedSame { continue }
            return key.ascending ? c == .orderedAscending : c == .orderedDescending
        }
        return a.id < b.id
    }

    private func sortedObjects() throws -> [DynamicObject] {
        var unsorted = self
        unsorted.sortKeys = []
        unsorted.comparator = nil
        unsorted.limitCount = nil
        unsorted.offsetCount = 0
        let cursor = try unsorted.unsortedCursor(recyclingStorage: false)
        var result: [DynamicObject]
        if let limit = limitCount {
            // Keep the best `offset + limit` in a max-heap of the worst kept on top.
            let keep = limit + offsetCount
            var heap = BoundedHeap<DynamicObject>(capacity: keep) { try self.areInIncreasingOrder($0, $1) }
            while let object = try cursor.next() { try heap.insert(object) }
            result = try heap.sortedElements()
        } else {
            var all: [DynamicObject] = []
            while let object = try cursor.next() { all.append(object) }
            result = try all.sorted { try areInIncreasingOrder($0, $1) }
        }
        let start = min(offsetCount, result.count)
        let end = limitCount.map { min(result.count, start + $0) } ?? result.count
        return Array(result[start..<end])
    }
}
