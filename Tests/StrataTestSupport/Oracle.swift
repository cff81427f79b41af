import Foundation
import Strata

/// An independent record of what a store should hold: every object's entity and attribute values, and every
/// link, kept in plain dictionaries. Tests mirror each change they make to a store here, then ask for the
/// differences with ``mismatches(in:checkIndexes:)``.
///
/// Everything the oracle holds comes from the test's own inputs (the values it gave `insert`, the links it
/// made, the model it declared), never from what the store returned, so a store that fills defaults or
/// converts values wrongly disagrees with it.
///
/// Links are kept per side (`"Entity.relationship"` → source → targets) and both sides are updated
/// together, following the model's rules: linking through a to-one relationship (on either side) replaces
/// the previous link.
///
/// For migrations, the oracle is rewritten with the model changes of each step (``renameAttribute(_:from:to:)``,
/// ``addAttribute(_:_:value:)``, …) and compared with the migrated store.
public final class Oracle: @unchecked Sendable {
    public struct Object: Hashable, Sendable {
        public var entity: String
        public var values: [String: Value]
    }

    /// The model the oracle follows (relationship cardinalities and inverses).
    public private(set) var schema: Schema
    public private(set) var objects: [ObjectID: Object] = [:]
    /// `"Entity.relationship"` → source ID → target IDs.
    public private(set) var links: [String: [ObjectID: Set<ObjectID>]] = [:]

    public init(schema: Schema) { self.schema = schema }

    /// An independent copy (to follow a transaction that may still fail).
    public func copy() -> Oracle {
        let c = Oracle(schema: schema)
        c.objects = objects
        c.links = links
        return c
    }

    // MARK: Recording changes

    /// Records an inserted object from the values the test gave `insert`: attributes left out take the
    /// default the oracle's model declares, or null; numbers take the attribute's type by the oracle's own
    /// rules (``expected(_:as:)``). Nothing the store returned is recorded.
    public func insert(_ entity: String, id: ObjectID, _ values: [String: Value]) {
        var full: [String: Value] = [:]
        for a in schema.entity(named: entity)?.attributes ?? [] {
            full[a.name] = Oracle.expected(values[a.name] ?? a.defaultValue ?? .null, as: a.type)
        }
        objects[id] = Object(entity: entity, values: full)
    }

    /// Records a value the test set on an object.
    public func set(_ id: ObjectID, _ attribute: String, _ value: Value) {
        guard let entity = objects[id]?.entity, let a = schema.entity(named: entity)?.attribute(named: attribute) else {
            preconditionFailure("the oracle has no \(attribute) of \(id)")
        }
        objects[id]?.values[attribute] = Oracle.expected(value, as: a.type)
    }

    /// The value an attribute of `type` holds after being given `value`, by the documented rule (the oracle's
    /// own copy of it, not the store's code): a number given to another numeric type is converted when the
    /// conversion is exact — integers between widths, integers and `float` to `double`, a `double` to
    /// `float` (NaN included); anything else is kept as given (the store refuses what does not fit).
    public static func expected(_ value: Value, as type: AttributeType) -> Value {
        switch (type, value) {
        case (.int64, .int32(let v)): return .int64(Int64(v))
        case (.int64, .int16(let v)): return .int64(Int64(v))
        case (.int32, .int64(let v)): return Int32(exactly: v).map(Value.int32) ?? value
        case (.int32, .int16(let v)): return .int32(Int32(v))
        case (.int16, .int64(let v)): return Int16(exactly: v).map(Value.int16) ?? value
        case (.int16, .int32(let v)): return Int16(exactly: v).map(Value.int16) ?? value
        case (.double, .float(let v)): return .double(Double(v))
        case (.double, .int64(let v)): return Double(exactly: v).map(Value.double) ?? value
        case (.float, .double(let v)): return v.isNaN ? .float(.nan) : Float(exactly: v).map(Value.float) ?? value
        default: return value
        }
    }

    public func relationship(_ entity: String, _ name: String) -> Relationship {
        guard let r = schema.entity(named: entity)?.relationship(named: name) else {
            preconditionFailure("the oracle's model has no relationship \(entity).\(name)")
        }
        return r
    }

    /// The targets of `id` through `relationship`.
    public func targets(_ id: ObjectID, _ relationship: String) -> Set<ObjectID> {
        guard let entity = objects[id]?.entity else { return [] }
        return links["\(entity).\(relationship)"]?[id] ?? []
    }

    /// Links `source` to `target` (and back), replacing previous links of to-one sides.
    public func link(_ source: ObjectID, _ relationship: String, _ target: ObjectID) {
        guard let entity = objects[source]?.entity else { preconditionFailure("no object \(source)") }
        let r = self.relationship(entity, relationship)
        let inverse = self.relationship(r.destination, r.inverse)
        if !r.isToMany {
            for old in targets(source, relationship) where old != target { unlink(source, relationship, old) }
        }
        if !inverse.isToMany {
            for old in links["\(r.destination).\(r.inverse)"]?[target] ?? [] where old != source {
                unlink(old, relationship, target)
            }
        }
        links["\(entity).\(relationship)", default: [:]][source, default: []].insert(target)
        links["\(r.destination).\(r.inverse)", default: [:]][target, default: []].insert(source)
    }

    /// Removes the link between `source` and `target` (both sides).
    public func unlink(_ source: ObjectID, _ relationship: String, _ target: ObjectID) {
        guard let entity = objects[source]?.entity else { return }
        let r = self.relationship(entity, relationship)
        remove("\(entity).\(relationship)", source, target)
        remove("\(r.destination).\(r.inverse)", target, source)
    }

    private func remove(_ key: String, _ source: ObjectID, _ target: ObjectID) {
        links[key]?[source]?.remove(target)
        if links[key]?[source]?.isEmpty == true { links[key]?[source] = nil }
    }

    /// Removes an object and its links on both sides (delete rules are the test's business).
    public func remove(_ id: ObjectID) {
        guard let entity = objects[id]?.entity else { return }
        for r in schema.entity(named: entity)?.relationships ?? [] {
            for t in targets(id, r.name) { unlink(id, r.name, t) }
        }
        objects[id] = nil
    }

    /// Deletes `id` as the store does with nullify and cascade rules: cascades follow to linked objects.
    /// Returns every deleted identifier. (Deny rules are not modelled.)
    @discardableResult
    public func delete(_ id: ObjectID) -> Set<ObjectID> {
        var pending = [id]
        var deleted: Set<ObjectID> = []
        while let next = pending.popLast() {
            guard !deleted.contains(next), let entity = objects[next]?.entity else { continue }
            deleted.insert(next)
            for r in schema.entity(named: entity)?.relationships ?? [] where r.deleteRule == .cascade {
                pending.append(contentsOf: targets(next, r.name))
            }
            remove(next)
        }
        return deleted
    }

    /// The identifiers of the objects of `entity`.
    public func ids(of entity: String) -> [ObjectID] {
        objects.filter { $0.value.entity == entity }.map(\.key).sorted()
    }

    // MARK: Model changes (migrations)

    /// Follows the oracle to another model version; call the other model-change methods first or after.
    public func adopt(_ schema: Schema) { self.schema = schema }

    public func renameEntity(_ old: String, to new: String) {
        for (id, o) in objects where o.entity == old { objects[id]?.entity = new }
        for key in links.keys where key.hasPrefix(old + ".") {
            let rel = String(key.dropFirst(old.count + 1))
            links["\(new).\(rel)"] = links.removeValue(forKey: key)
        }
    }

    public func renameAttribute(_ entity: String, from old: String, to new: String) {
        for (id, o) in objects where o.entity == entity {
            objects[id]?.values[new] = o.values[old] ?? .null
            objects[id]?.values[old] = nil
        }
    }

    /// Gives every object of `entity` the attribute `name` with `value`.
    public func addAttribute(_ entity: String, _ name: String, value: Value) {
        for (id, o) in objects where o.entity == entity { objects[id]?.values[name] = value }
    }

    public func removeAttribute(_ entity: String, _ name: String) {
        for (id, o) in objects where o.entity == entity { objects[id]?.values[name] = nil }
    }

    /// Rewrites every value of an attribute.
    public func mapAttribute(_ entity: String, _ name: String, _ transform: (Value) -> Value) {
        for (id, o) in objects where o.entity == entity { objects[id]?.values[name] = transform(o.values[name] ?? .null) }
    }

    public func renameRelationship(_ entity: String, from old: String, to new: String) {
        links["\(entity).\(new)"] = links.removeValue(forKey: "\(entity).\(old)")
    }

    /// Forgets the links of one side of a relationship (call it for both sides of a removed pair).
    public func removeRelationship(_ entity: String, _ name: String) {
        links["\(entity).\(name)"] = nil
    }

    public func removeEntity(_ entity: String) {
        for (id, o) in objects where o.entity == entity { objects[id] = nil }
        for key in links.keys where key.hasPrefix(entity + ".") { links[key] = nil }
    }

    // MARK: Comparing

    /// Every difference between the oracle and the store, read on one snapshot with the store's model:
    /// objects missing or extra, attribute values, links from both sides, and — with `checkIndexes` — that
    /// every indexed value finds exactly the objects that hold it. Empty when they agree.
    public func mismatches(in store: Store, checkIndexes: Bool = true, limit: Int = 20) throws -> [String] {
        var out: [String] = []
        func note(_ s: String) { if out.count < limit { out.append(s) } }
        try store.read { ctx in
            for entity in ctx.schema.entities {
                let expected = Set(ids(of: entity.name))
                var seen: Set<ObjectID> = []
                try ctx.objects(entity.name).forEach { object in
                    seen.insert(object.id)
                    guard let o = objects[object.id], o.entity == entity.name else {
                        note("unexpected \(entity.name) \(object.id): \(object)")
                        return
                    }
                    for a in entity.attributes {
                        let want = o.values[a.name]
                        let got = object[a.name]
                        if want == nil { note("the oracle has no \(entity.name).\(a.name) for \(object.id) (store: \(got))") }
                        else if want != got { note("\(entity.name) \(object.id).\(a.name): expected \(want!), found \(got)") }
                    }
                    for r in entity.relationships {
                        let want = links["\(entity.name).\(r.name)"]?[object.id] ?? []
                        let got = Set(try ctx.related(object, r.name))
                        if want != got { note("\(entity.name) \(object.id).\(r.name): expected \(want.sorted()), found \(got.sorted())") }
                        if try ctx.relatedCount(object, r.name) != got.count {
                            note("\(entity.name) \(object.id).\(r.name): relatedCount differs from related")
                        }
                    }
                }
                for missing in expected.subtracting(seen).sorted() { note("missing \(entity.name) \(missing)") }
                if try ctx.count(entity.name) != expected.count {
                    note("count(\(entity.name)) = \(try ctx.count(entity.name)), expected \(expected.count)")
                }
                guard checkIndexes else { continue }
                for a in entity.attributes where a.isIndexed {
                    var holders: [Value: Set<ObjectID>] = [:]
                    for id in expected { if let v = objects[id]?.values[a.name], !v.isNull { holders[v, default: []].insert(id) } }
                    for (value, ids) in holders.sorted(by: { $0.value.min()! < $1.value.min()! }).prefix(400) {
                        let found = Set(try ctx.objects(entity.name).where(a.name, equals: value).ids())
                        if found != ids { note("lookup \(entity.name).\(a.name) == \(value): expected \(ids.sorted()), found \(found.sorted())") }
                    }
                }
            }
        }
        return out
    }
}
