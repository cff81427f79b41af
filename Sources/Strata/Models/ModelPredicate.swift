import Foundation

/// A condition on the objects of a model type, written with key paths and checked by the compiler:
/// `\.softDelete == false`, `\.date >= start && \.date < end`, `\.subtitle == nil`, `!(\.rank > 3)`.
///
/// Values compare as the store orders them (and as the dynamic API's conditions do): numbers numerically,
/// strings by their UTF-8 bytes, dates chronologically; a nil property matches only `== nil` and `!= value`.
/// An equality or a range on an indexed attribute, at the top of the condition or in an `&&`, is answered
/// by the attribute's index; the rest is checked on each candidate object.
///
/// ## Topics
/// ### Combining
/// - ``&&(_:_:)``
/// - ``||(_:_:)``
/// - ``!(_:)``
public struct ModelPredicate<Root: EntityModel> {
    typealias Operator = ComparisonOperator

    /// One comparison of a stored property with a value.
    struct Comparison {
        let keyPath: AnyKeyPath
        let op: Operator
        let value: Value
    }

    indirect enum Term {
        case comparison(Comparison)
        case and(Term, Term)
        case or(Term, Term)
        case not(Term)
    }

    let term: Term
    let evaluate: (Root) -> Bool

    init(_ comparison: Comparison, _ read: @escaping (Root) -> Value) {
        term = .comparison(comparison)
        let op = comparison.op, value = comparison.value
        evaluate = { root in ModelPredicate.matches(read(root), op, value) }
    }

    init(term: Term, evaluate: @escaping (Root) -> Bool) {
        self.term = term
        self.evaluate = evaluate
    }

    /// Whether a stored value satisfies `op value` (the store's order; null only equals null).
    static func matches(_ v: Value, _ op: Operator, _ value: Value) -> Bool { op.matches(v, value) }

    /// Both conditions.
    public static func && (lhs: ModelPredicate, rhs: ModelPredicate) -> ModelPredicate {
        let (l, r) = (lhs.evaluate, rhs.evaluate)
        return ModelPredicate(term: .and(lhs.term, rhs.term)) { l($0) && r($0) }
    }

    /// Either condition.
    public static func || (lhs: ModelPredicate, rhs: ModelPredicate) -> ModelPredicate {
        let (l, r) = (lhs.evaluate, rhs.evaluate)
        return ModelPredicate(term: .or(lhs.term, rhs.term)) { l($0) || r($0) }
    }

    /// The opposite condition.
    public static prefix func ! (predicate: ModelPredicate) -> ModelPredicate {
        let e = predicate.evaluate
        return ModelPredicate(term: .not(predicate.term)) { !e($0) }
    }

    /// The comparisons that must all hold (the top-level terms joined by `&&`), for choosing an index.
    var conjuncts: [Comparison] {
        var out: [Comparison] = []
        func collect(_ t: Term) {
            switch t {
            case .comparison(let c): out.append(c)
            case .and(let a, let b): collect(a); collect(b)
            case .or, .not: break
            }
        }
        collect(term)
        return out
    }
}

/// A Swift type whose values a ``ModelPredicate`` compares and a ``ModelQuery`` sorts by: the types of stored
/// attributes. Conform a `RawRepresentable` type stored with `@Field(.rawValue)` by declaring the conformance
/// (`extension Color: ModelQueryable {}`): its raw value is compared.
public protocol ModelQueryable {
    /// The value as the store holds it.
    var queryValue: Value { get }
}

extension ModelQueryable where Self: RawRepresentable, RawValue: ModelQueryable {
    public var queryValue: Value { rawValue.queryValue }
}

// The stored scalar types conform through ``ModelScalar`` (Models/ModelScalar.swift).
extension Optional: ModelQueryable where Wrapped: ModelQueryable {
    public var queryValue: Value { self?.queryValue ?? .null }
}

// MARK: Comparisons of key paths with values

private func comparison<Root: EntityModel, V: ModelQueryable>(_ keyPath: KeyPath<Root, V>, _ op: ModelPredicate<Root>.Operator,
                                                               _ value: Value) -> ModelPredicate<Root> {
    ModelPredicate(.init(keyPath: keyPath, op: op, value: value)) { $0[keyPath: keyPath].queryValue }
}

/// The objects whose property equals `value`.
public func == <Root: EntityModel, V: ModelQueryable & Equatable>(lhs: KeyPath<Root, V>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .equal, rhs.queryValue)
}
/// The objects whose property differs from `value`.
public func != <Root: EntityModel, V: ModelQueryable & Equatable>(lhs: KeyPath<Root, V>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .notEqual, rhs.queryValue)
}
public func < <Root: EntityModel, V: ModelQueryable & Comparable>(lhs: KeyPath<Root, V>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .less, rhs.queryValue)
}
public func <= <Root: EntityModel, V: ModelQueryable & Comparable>(lhs: KeyPath<Root, V>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .lessOrEqual, rhs.queryValue)
}
public func > <Root: EntityModel, V: ModelQueryable & Comparable>(lhs: KeyPath<Root, V>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .greater, rhs.queryValue)
}
public func >= <Root: EntityModel, V: ModelQueryable & Comparable>(lhs: KeyPath<Root, V>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .greaterOrEqual, rhs.queryValue)
}

/// The objects whose optional property equals `value` (`== nil`: those where it is nil).
public func == <Root: EntityModel, V: ModelQueryable & Equatable>(lhs: KeyPath<Root, V?>, rhs: V?) -> ModelPredicate<Root> {
    comparison(lhs, .equal, rhs.queryValue)
}
/// The objects whose optional property differs from `value` (`!= nil`: those where it is set).
public func != <Root: EntityModel, V: ModelQueryable & Equatable>(lhs: KeyPath<Root, V?>, rhs: V?) -> ModelPredicate<Root> {
    comparison(lhs, .notEqual, rhs.queryValue)
}
public func < <Root: EntityModel, V: ModelQueryable & Comparable>(lhs: KeyPath<Root, V?>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .less, rhs.queryValue)
}
public func <= <Root: EntityModel, V: ModelQueryable & Comparable>(lhs: KeyPath<Root, V?>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .lessOrEqual, rhs.queryValue)
}
public func > <Root: EntityModel, V: ModelQueryable & Comparable>(lhs: KeyPath<Root, V?>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .greater, rhs.queryValue)
}
public func >= <Root: EntityModel, V: ModelQueryable & Comparable>(lhs: KeyPath<Root, V?>, rhs: V) -> ModelPredicate<Root> {
    comparison(lhs, .greaterOrEqual, rhs.queryValue)
}
