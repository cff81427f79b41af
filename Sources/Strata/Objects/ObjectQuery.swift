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
        /// it are scanned too.
        func canUseIndex(for type: AttributeType) -> Bool {
            if type == .decimal && equals == nil { return false }
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
        let cursor = try makeCursor()
        while let object = try cursor.next() { try body(object) }
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

/// Iterates the objects of a query, one at a time, from an LMDB cursor.
public final class ObjectCursor {
    private enum Source {
        case entity(Cursor)
        case index(Cursor, ObjectQuery.AttributeCondition, [UInt8]?)
        case sorted([DynamicObject], Int)
    }

    private let context: ReadContext
    private var source: Source
    private let query: ObjectQuery?
    private var started = false
    private var skipped = 0
    private var returned = 0
    private var finished = false
    /// The last object decoded from the entity, whose value storage the next one reuses.
    private var recycled: DynamicObject?
    /// Whether the next object is decoded into the storage of the previous one (in place when the caller
    /// kept no copy of it). Off for callers that keep every object, which would pay a copy each time.
    var recyclesStorage = true
    /// Set for a query with no condition, filter, offset or limit: every object of the entity, in order,
    /// read without going through the query (a struct that would be copied for every object) or the
    /// `source` enum.
    private let plain: (binding: EntityBinding, cursor: Cursor)?

    init(sorted: [DynamicObject], context: ReadContext) {
        self.context = context
        self.source = .sorted(sorted, 0)
        self.query = nil
        self.plain = nil
    }

    init(query: ObjectQuery) throws {
        self.context = query.context
        self.query = query
        if let c = query.condition, c.canUseIndex(for: query.binding.attributeTypes[c.attribute]),
           let index = query.binding.index(on: c.attribute) {
            source = .index(try query.context.txn.cursor(index.dbi), c, c.upper.map { IndexKey.encode($0) })
        } else {
            source = .entity(try query.context.txn.cursor(query.binding.dbi))
        }
        let isPlain = query.condition == nil && query.predicates.isEmpty && query.offsetCount == 0 && query.limitCount == nil
        if isPlain, case .entity(let cursor) = source { plain = (query.binding, cursor) } else { plain = nil }
    }

    /// The next object, or nil at the end.
    public func next() throws -> DynamicObject? {
        if finished { return nil }
        if let plain {
            guard let object = try nextFromEntity(plain.cursor, plain.binding) else { finished = true; return nil }
            return object
        }
        if case .sorted(let objects, let i) = source {
            guard i < objects.count else { finished = true; return nil }
            source = .sorted(objects, i + 1)
            return objects[i]
        }
        guard let query else { return nil }
        if let limit = query.limitCount, returned >= limit { finished = true; return nil }
        while let object = try nextCandidate(query) {
            var keep = true
            if let c = query.condition, !c.matches(object.values[c.attribute]) { keep = false }
            if keep {
                for p in query.predicates where try !p(object) { keep = false; break }
            }
            guard keep else { continue }
            if skipped < query.offsetCount { skipped += 1; continue }
            returned += 1
            return object
        }
        finished = true
        return nil
    }

    /// The next record of the entity's cursor as an object, or nil at its end.
    @inline(__always)
    private func nextFromEntity(_ cursor: Cursor, _ binding: EntityBinding) throws -> DynamicObject? {
        guard let entry = started ? try cursor.next() : try cursor.first() else { return nil }
        started = true
        let id = try decodeKey(entry.key)
        // Decode into the previous object's storage: in place when the caller kept no copy of it.
        var values = recycled?.values ?? []
        recycled = nil
        try binding.decodeValues(entry.value, id: id, into: &values)
        let object = DynamicObject(id: ObjectID(rawValue: id), binding: binding, values: values)
        if recyclesStorage { recycled = object }
        return object
    }

    private func nextCandidate(_ query: ObjectQuery) throws -> DynamicObject? {
        switch source {
        case .sorted: return nil
        case .entity(let cursor):
            return try nextFromEntity(cursor, query.binding)
        case .index(let cursor, let c, let upperKey):
            while true {
                let entry: Entry?
                if !started {
                    started = true
                    if let lower = c.lower {
                        entry = try IndexKey.encode(lower).withUnsafeBytes { try cursor.seek($0) }
                    } else {
                        entry = try cursor.first()
                    }
                } else {
                    entry = try cursor.next()
                }
                guard let entry else { return nil }
                // Past the upper bound's key: done. (The condition itself is checked on each object.)
                if let upperKey, upperKey.lexicographicallyPrecedes(Array(entry.key)) { return nil }
                let id = try decodeKey(entry.value)
                guard let object = try context.object(id, query.binding) else { continue }
                return object
            }
        }
    }

    private func decodeKey(_ bytes: UnsafeRawBufferPointer) throws -> UInt64 {
        do { return try ObjectKey.decode(bytes) } catch {
            throw StoreError.corrupted(path: context.txn.environment.path, reason: .structure("an object key of \(bytes.count) bytes"))
        }
    }
}

/// Keeps the `capacity` smallest elements seen (by `areInIncreasingOrder`).
struct BoundedHeap<Element> {
    private var elements: [Element] = []
    let capacity: Int
    let areInIncreasingOrder: (Element, Element) throws -> Bool

    init(capacity: Int, _ areInIncreasingOrder: @escaping (Element, Element) throws -> Bool) {
        self.capacity = capacity
        self.areInIncreasingOrder = areInIncreasingOrder
    }

    /// Max-heap on the order: the root is the largest kept element.
    mutating func insert(_ e: Element) throws {
        guard capacity > 0 else { return }
        if elements.count < capacity {
            elements.append(e)
            var i = elements.count - 1
            while i > 0 {
                let p = (i - 1) / 2
                guard try areInIncreasingOrder(elements[p], elements[i]) else { break }
                elements.swapAt(p, i)
                i = p
            }
        } else if try areInIncreasingOrder(e, elements[0]) {
            elements[0] = e
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var largest = i
                if l < elements.count, try areInIncreasingOrder(elements[largest], elements[l]) { largest = l }
                if r < elements.count, try areInIncreasingOrder(elements[largest], elements[r]) { largest = r }
                if largest == i { break }
                elements.swapAt(i, largest)
                i = largest
            }
        }
    }

    func sortedElements() throws -> [Element] { try elements.sorted(by: areInIncreasingOrder) }
}
