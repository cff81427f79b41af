import SwiftSyntax

/// A stored property's initial value as the attribute's default: literals only, written as a `Value` in the
/// attribute's own type (an `Int16` property's `= 5` is `.int16(5)`, as the schema DSL normalizes it).
enum DefaultLiteral {
    enum Result {
        /// The Swift expression of the default `Value`.
        case value(String)
        /// `nil`: no default.
        case none
        /// Not a literal: a diagnostic.
        case notALiteral
    }

    /// The type a literal initial value gives a property without a type annotation.
    static func inferredType(of expression: ExprSyntax) -> String? {
        if expression.is(IntegerLiteralExprSyntax.self) { return "Int" }
        if expression.is(FloatLiteralExprSyntax.self) { return "Double" }
        if expression.is(BooleanLiteralExprSyntax.self) { return "Bool" }
        if let string = expression.as(StringLiteralExprSyntax.self), isPlain(string) { return "String" }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return inferredType(of: prefix.expression)
        }
        return nil
    }

    static func value(of expression: ExprSyntax, storage: ModelDescription.Storage, typeText: String) -> Result {
        if expression.is(NilLiteralExprSyntax.self) { return .none }
        switch storage {
        case .scalar:
            return scalarValue(expression, typeText: typeText)
        case .codable:
            guard isLiteralTree(expression) else { return .notALiteral }
            return .value("Strata.ModelSupport.codableDefault(\(expression.trimmedDescription) as \(typeText))")
        case .raw:
            guard expression.is(MemberAccessExprSyntax.self) || isLiteralTree(expression) else { return .notALiteral }
            return .value("Strata.ModelSupport.rawDefault(\(expression.trimmedDescription) as \(typeText))")
        }
    }

    /// A literal as the property's type stores it: the library's `ModelScalar` conformance of `typeText` turns
    /// the literal into a value of its attribute type (an `Int16` property's `= 5` is `.int16(5)`, a `Decimal`'s
    /// `= 0.1` exactly 0.1), as the schema DSL normalizes defaults.
    private static func scalarValue(_ expression: ExprSyntax, typeText: String) -> Result {
        let text = expression.trimmedDescription
        let literal: String
        switch numberLiteral(expression) {
        case .integer?: literal = ".integer(\(text))"
        case .floating?: literal = ".floating(\"\(text)\")"
        case nil:
            if expression.is(BooleanLiteralExprSyntax.self) {
                literal = ".boolean(\(text))"
            } else if let string = expression.as(StringLiteralExprSyntax.self), isPlain(string) {
                literal = ".string(\(text))"
            } else {
                return .notALiteral
            }
        }
        return .value("Strata.ModelSupport.defaultValue(\(literal), of: \(typeText).self)")
    }

    private enum NumberKind { case integer, floating }

    private static func numberLiteral(_ expression: ExprSyntax) -> NumberKind? {
        if expression.is(IntegerLiteralExprSyntax.self) { return .integer }
        if expression.is(FloatLiteralExprSyntax.self) { return .floating }
        if let prefix = expression.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-" {
            return numberLiteral(prefix.expression)
        }
        return nil
    }

    /// A string literal without interpolation.
    private static func isPlain(_ string: StringLiteralExprSyntax) -> Bool {
        string.segments.allSatisfy { $0.is(StringSegmentSyntax.self) }
    }

    /// A literal, or an array or dictionary literal of literals (a Codable default such as `[]` or `["a": 1]`).
    private static func isLiteralTree(_ expression: ExprSyntax) -> Bool {
        if numberLiteral(expression) != nil || expression.is(BooleanLiteralExprSyntax.self) || expression.is(NilLiteralExprSyntax.self) {
            return true
        }
        if let string = expression.as(StringLiteralExprSyntax.self) { return isPlain(string) }
        if let array = expression.as(ArrayExprSyntax.self) { return array.elements.allSatisfy { isLiteralTree($0.expression) } }
        if let dictionary = expression.as(DictionaryExprSyntax.self) {
            switch dictionary.content {
            case .colon: return true
            case .elements(let elements): return elements.allSatisfy { isLiteralTree($0.key) && isLiteralTree($0.value) }
            }
        }
        return false
    }
}
