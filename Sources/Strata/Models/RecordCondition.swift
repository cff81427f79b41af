import Foundation

/// A query's key-path conditions compiled to attribute positions, evaluated on a stored record's fields in place:
/// no model value is built to decide whether a record matches (strings are compared as their stored UTF-8
/// bytes, numbers read from their fields). What a ``ModelQuery``'s aggregates and borrowed scans filter with.
struct RecordCondition {
    indirect enum Term {
        case compare(attribute: Int, op: ComparisonOperator, value: Value, utf8: [UInt8]?)
        /// A comparison of a fixed-width attribute, compared where its field lies when it is read as stored.
        case scalar(ScalarComparison, value: Value)
        case and(Term, Term)
        case or(Term, Term)
        case not(Term)
        case always
    }

    let term: Term
    /// The condition when it is one ``ScalarComparison`` (the usual filter): evaluated without looking into `term`.
    let single: ScalarComparison?

    /// No condition: every record satisfies it.
    static var always: RecordCondition { RecordCondition(term: .always) }

    private init(term: Term) {
        self.term = term
        single = nil
    }

    /// The conditions of `predicates` (all of them) on `binding`'s attributes, or nil when one names a key path
    /// that is not a stored attribute (the query then decides on model values).
    init?<T: EntityModel>(_ predicates: [ModelPredicate<T>], binding: EntityBinding) {
        var all: Term = .always
        for p in predicates {
            guard let t = Self.compile(p.term, T.self, binding) else { return nil }
            if case .always = all { all = t } else { all = .and(all, t) }
        }
        term = all
        if case .scalar(let c, _) = all { single = c } else { single = nil }
    }

    private static func compile<T: EntityModel>(_ term: ModelPredicate<T>.Term, _ type: T.Type, _ binding: EntityBinding) -> Term? {
        switch term {
        case .comparison(let c):
            guard let name = T.propertyName(for: c.keyPath), let a = binding.position(of: name) else { return nil }
            let value = binding.attributeTypes[a].coerce(c.value) ?? c.value
            if let scalar = ScalarComparison(attribute: a, type: binding.attributeTypes[a], op: c.op, value: value) {
                return .scalar(scalar, value: value)
            }
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
        try Self.evaluate(term, .none, &record, binding)
    }

    /// Whether the record, whose every field `slots` located, satisfies the condition: fixed-width attributes read
    /// as stored are compared where they lie (no ``Value`` is made); the rest as ``matches(_:_:)`` compares them.
    func matches(_ slots: RecordSlots, _ record: inout RecordFields, _ binding: EntityBinding) throws(DecodeFailure) -> Bool {
        if let c = single {
            // The usual condition (one comparison) without recursion.
            let o = slots.offset(ofSlot: c.attribute, code: c.code)
            if o >= 0 { return c.matches(slots.bytes, at: o) }
            if o == -1 { return c.matchesNull }
        }
        return try Self.evaluate(term, slots, &record, binding)
    }

    private static func evaluate(_ term: Term, _ slots: RecordSlots, _ record: inout RecordFields, _ binding: EntityBinding) throws(DecodeFailure) -> Bool {
        switch term {
        case .always:
            return true
        case .and(let l, let r):
            if try !evaluate(l, slots, &record, binding) { return false }
            return try evaluate(r, slots, &record, binding)
        case .or(let l, let r):
            if try evaluate(l, slots, &record, binding) { return true }
            return try evaluate(r, slots, &record, binding)
        case .not(let t):
            return try !evaluate(t, slots, &record, binding)
        case .scalar(let c, let value):
            let o = slots.offset(ofSlot: c.attribute, code: c.code)
            if o >= 0 { return c.matches(slots.bytes, at: o) }
            if o == -1 { return c.matchesNull }
            // Not located, or not read as stored (a projection of an older layout): through the attribute's value.
            return c.op.matches(try record.value(of: c.attribute, type: binding.attributeTypes[c.attribute]), value)
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

/// `attribute op value` on a fixed-width attribute (an integer, Boolean, floating-point number or date), compiled
/// so that a located field is compared where it lies: one load and one comparison, in the order
/// ``ComparisonOperator/matches(_:_:)`` gives the same values as ``Value``s (integers numerically; doubles and
/// floats with NaN after every number and equal to any NaN; dates chronologically; false before true; null only
/// equal to null). A record whose attribute is not its own plain field (an older layout's projection) is compared
/// through its value, as before.
struct ScalarComparison {
    let attribute: Int
    /// The type code of the field the attribute is read from as stored.
    let code: UInt8
    let op: ComparisonOperator
    /// The wanted value: integers and Booleans (0, 1) here…
    let integer: Int64
    /// … numbers and dates here.
    let real: Double
    /// Whether a null attribute satisfies the comparison.
    let matchesNull: Bool

    /// The comparison, or nil when the attribute is not of a fixed-width type or `value` (coerced to the
    /// attribute's type) is not of that type: such comparisons stay general.
    init?(attribute: Int, type: AttributeType, op: ComparisonOperator, value: Value) {
        var integer: Int64 = 0
        var real = 0.0
        switch (type, value) {
        case (.int64, .int64(let v)): integer = v
        case (.int32, .int32(let v)): integer = Int64(v)
        case (.int16, .int16(let v)): integer = Int64(v)
        case (.bool, .bool(let v)): integer = v ? 1 : 0
        case (.double, .double(let v)): real = v
        case (.float, .float(let v)): real = Double(v)
        case (.date, .date(let v)): real = v.timeIntervalSinceReferenceDate
        default: return nil
        }
        self.attribute = attribute
        self.code = TypeCode.code(type)
        self.op = op
        self.integer = integer
        self.real = real
        self.matchesNull = op.matches(.null, value)
    }

    /// Whether the field of type ``code`` at `offset` in `record` satisfies the comparison.
    @inline(__always)
    func matches(_ record: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        let order: Int
        let bitsEqual: Bool
        switch code {
        case 1, 2, 3, 6:
            let v: Int64
            switch code {
            case 1: v = Int64(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: Int64.self))
            case 2: v = Int64(Int32(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: Int32.self)))
            case 3: v = Int64(Int16(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: Int16.self)))
            default: v = Int64(record.load(fromByteOffset: offset, as: UInt8.self))
            }
            order = v < integer ? -1 : (v == integer ? 0 : 1)
            bitsEqual = order == 0
        case 4, 5:
            let v = code == 4 ? Double(bitPattern: UInt64(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
                : Double(Float(bitPattern: UInt32(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: UInt32.self))))
            if v.isNaN || real.isNaN {
                order = v.isNaN ? (real.isNaN ? 0 : 1) : -1
            } else {
                order = v < real ? -1 : (v == real ? 0 : 1)
            }
            bitsEqual = v.bitPattern == real.bitPattern
        default:
            // A date: ordered as `Date`s compare (no special place for NaN).
            let v = Double(bitPattern: UInt64(littleEndian: record.loadUnaligned(fromByteOffset: offset, as: UInt64.self)))
            order = v < real ? -1 : (v == real ? 0 : 1)
            bitsEqual = v.bitPattern == real.bitPattern
        }
        switch op {
        case .equal: return bitsEqual || order == 0
        case .notEqual: return !(bitsEqual || order == 0)
        case .less: return order < 0
        case .lessOrEqual: return order <= 0
        case .greater: return order > 0
        case .greaterOrEqual: return order >= 0
        }
    }
}
