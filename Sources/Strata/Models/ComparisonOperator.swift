import Foundation

/// How a condition compares a stored value with a given one, in the store's order of values.
enum ComparisonOperator: Sendable {
    case equal, notEqual, less, lessOrEqual, greater, greaterOrEqual

    /// Whether a stored value satisfies `op value` (the store's order; null only equals null).
    func matches(_ v: Value, _ value: Value) -> Bool {
        let op = self
        switch op {
        case .equal:
            if v.isNull || value.isNull { return v.isNull && value.isNull }
            return v == value || v.compare(value) == .orderedSame
        case .notEqual:
            return !ComparisonOperator.equal.matches(v, value)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard !v.isNull, !value.isNull, let c = v.compare(value) else { return false }
            switch op {
            case .less: return c == .orderedAscending
            case .lessOrEqual: return c != .orderedDescending
            case .greater: return c == .orderedDescending
            default: return c != .orderedAscending
            }
        }
    }
}
