import SwiftSyntax

/// A stored property's type, as written: optional or not, an array, a plain name.
struct PropertyType {
    let syntax: TypeSyntax

    init(_ syntax: TypeSyntax) { self.syntax = syntax }

    /// The wrapped type of `T?`, `Optional<T>` or `Swift.Optional<T>`.
    var optionalWrapped: TypeSyntax? {
        if let optional = syntax.as(OptionalTypeSyntax.self) { return optional.wrappedType }
        if let implicit = syntax.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return implicit.wrappedType }
        if baseName == "Optional", let argument = genericArguments.first, genericArguments.count == 1 { return argument }
        return nil
    }

    /// The element type of `[T]`, `Array<T>` or `Swift.Array<T>`.
    var arrayElement: TypeSyntax? {
        if let array = syntax.as(ArrayTypeSyntax.self) { return array.element }
        if baseName == "Array", let argument = genericArguments.first, genericArguments.count == 1 { return argument }
        return nil
    }

    /// Whether the type is an array, a dictionary or a set.
    var isCollection: Bool {
        syntax.is(ArrayTypeSyntax.self) || syntax.is(DictionaryTypeSyntax.self) || ["Array", "Dictionary", "Set"].contains(baseName)
    }

    /// `[ObjectID]` or `ObjectID?` (or a plain `ObjectID`): a property that links objects.
    var isObjectIDLink: Bool {
        if baseName == "ObjectID" { return true }
        if let element = arrayElement, PropertyType(element).baseName == "ObjectID" { return true }
        if let wrapped = optionalWrapped, PropertyType(wrapped).baseName == "ObjectID" { return true }
        return false
    }

    /// The type's name without module qualification (`Date` for `Foundation.Date`), or "" for other forms.
    var baseName: String {
        if let identifier = syntax.as(IdentifierTypeSyntax.self) { return identifier.name.text }
        if let member = syntax.as(MemberTypeSyntax.self) { return member.name.text }
        return ""
    }

    /// Whether the type is a name without generic arguments (`String`, `Foundation.Date`).
    var isPlainName: Bool {
        if let identifier = syntax.as(IdentifierTypeSyntax.self) { return identifier.genericArgumentClause == nil }
        if let member = syntax.as(MemberTypeSyntax.self) { return member.genericArgumentClause == nil }
        return false
    }

    private var genericArguments: [TypeSyntax] {
        let clause = syntax.as(IdentifierTypeSyntax.self)?.genericArgumentClause ?? syntax.as(MemberTypeSyntax.self)?.genericArgumentClause
        return clause?.arguments.compactMap { argument in
            if case .type(let type) = argument.argument { return type }
            return nil
        } ?? []
    }
}

/// Numeric types Strata does not store, and the stored type to use instead (the types Strata stores are the
/// library's `ModelScalar` conformances: generated code names the property's type and the compiler checks it).
enum UnstoredNumber {
    static func replacement(for name: String) -> String? {
        switch name {
        case "Int8", "UInt8": "Int16"
        case "UInt16": "Int32"
        case "UInt32", "UInt", "UInt64": "Int64"
        case "Float16": "Float"
        case "Float80", "CGFloat": "Double"
        default: nil
        }
    }
}
