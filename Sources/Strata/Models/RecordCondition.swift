import Foundation

/// A query's key-path conditions compiled to attribute positions, evaluated on a stored record's fields in place:
/// no model value is built to decide whether a record matches (strings are compared as their stored UTF-8
/// bytes, numbers read from their fields). What a ``ModelQuery``'s aggregates and borrowed scans filter with.
struct RecordCondition {
    indirect enum Term {
        case compare(attribute: Int, op: ComparisonOperator, value: Value, utf8: [UInt8]?)
        case and(Term, Term)
        case or(Term, Term)
        case not(Term)
        case always
    }

    let term: Term

    /// The conditions of `predicates` (all of them) on `binding`'s attributes, or nil when one names a key path
    /// that is not a stored attribute (the query then decides on model values).
    init?<T: EntityModel>(_ predicates: [ModelPredicate<T>], binding: EntityBinding) {
        var all: Term = .always
        for p in predicates {
            guard let t = Self.compile(p.term, T.self, binding) else { return nil }
            if case .always = all { all = t } else { all = .and(all, t) }
        }
        term = all
    }

    private static func compile<T: EntityModel>(_ term: ModelPredicate<T>.Term, _ type: T.Type, _ binding: EntityBinding) -> Term? {
        switch term {
        case .comparison(let c):
            guard let name = T.propertyName(for: c.keyPath), let a = binding.attributeIndex[name] else { return nil }
            let value = binding.attributeTypes[a].coerce(c.value) ?? c.value
            var utf8: [UInt8]? = nil
            if case .string(let s) = value, binding.attributeTypes[a] == .string { utf8 = Array(s.utf8) }
            return .compare(attribute: a, op: c.op, value: value, utf8: utf8)
        case .and(let l, let r):
            guard let l = compile(l, type, binding), let r = compile(r, type, binding) else { return nil }
            return .and(l, r)
        case .or(let l, let r):
            guard let l = compile(l, type, binding), let r = compile(r, type, binding) else { return nil }
            return .or(l, r)
        case .not(let t):
            return compile(t, type, binding).map(Term.not)
        }
    }

    /// Whether the record satisfies the condition.
    func matches(_ record: inout RecordFields, _ binding: EntityBinding) throws(DecodeFailure) -> Bool {
        try Self.evaluate(term, &record, binding)
    }

    private static func evaluate(_ term: Term, _ record: inout RecordFields, _ binding: EntityBinding) throws(DecodeFailure) -> Bool {
        switch term {
        case .always:
            return true
        case .and(let l, let r):
            if try !evaluate(l, &record, binding) { return false }
            return try evaluate(r, &record, binding)
        case .or(let l, let r):
            if try evaluate(l, &record, binding) { return true }
            return try evaluate(r, &record, binding)
        case .not(let t):
            return try !evaluate(t, &record, binding)
        case .compare(let a, let op, let value, let utf8):
            if let utf8, let projection = record.projection, projection.readsFieldAsIs[a], let f = projection.attributeFields[a] {
                // A string field read as it is: compared as UTF-8 bytes, in place.
                guard var r = try record.reader(atField: f) else { return op.matches(.null, value) }
                let stored: UnsafeRawBufferPointer
                do { stored = try r.lengthPrefixed() } catch let failure as DecodeFailure { throw failure } catch { throw DecodeFailure("\(error)") }
                return Self.compare(stored, utf8, op)
            }
            return op.matches(try record.value(of: a, type: binding.attributeTypes[a]), value)
        }
    }

    /// `stored op wanted` by UTF-8 bytes (the order strings compare in).
    private static func compare(_ stored: UnsafeRawBufferPointer, _ wanted: [UInt8], _ op: ComparisonOperator) -> Bool {
        let order: Int = wanted.withUnsafeBytes { w in
            let n = min(stored.count, w.count)
            if n > 0, let a = stored.baseAddress, let b = w.baseAddress {
                let c = memcmp(a, b, n)
                if c != 0 { return c < 0 ? -1 : 1 }
            }
            return stored.count == w.count ? 0 : (stored.count < w.count ? -1 : 1)
        }
        switch op {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        }
    }
}
