import Foundation

/// Iterates the objects of a query, one at a time, from an LMDB cursor.
public final class ObjectCursor {
    private enum Source {
        case entity(Cursor)
        case index(IndexRangeWalk)
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
        if let c = query.condition, let index = try query.conditionIndex() {
            source = .index(try IndexRangeWalk(c, index: index.dbi, in: query.context.txn))
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
        case .index(let walk):
            // Candidates only: the condition itself is checked on each object (``next()``).
            while let id = try walk.next() {
                if let object = try context.object(id, query.binding) { return object }
            }
            return nil
        }
    }

    private func decodeKey(_ bytes: UnsafeRawBufferPointer) throws -> UInt64 {
        try context.txn.objectID(ofKey: bytes)
    }
}
