import SwiftDiagnostics
import SwiftSyntax

/// What an `@Entity` struct declares, read from its syntax: the entity's attributes and relationships, and
/// every problem found (each a diagnostic on the property it concerns).
struct ModelDescription {
    /// How an attribute's values are stored.
    enum Storage {
        /// A type Strata stores as it is (a `ModelScalar`, which the compiler checks); the Swift type's text.
        case scalar(type: String)
        /// `Codable` JSON under a shape name (a Swift string literal's text) of the Swift type `swiftType`
        /// (whose ``CodableShapeDescribing`` conformance, if any, gives the attribute its shape).
        case codable(shape: String, swiftType: String)
        /// A `RawRepresentable` value's raw value; the Swift type's text.
        case raw(type: String)
    }

    struct AttributeDescription {
        var name: String
        var storage: Storage
        var isOptional: Bool
        /// The Swift expression of the default ``Value``, if any.
        var defaultValue: String?
        var isUnique = false
        var isIndexed = false
        var isTransient = false
        /// `@Field(.preserveValueOnDeletion)`: the value is kept in the change history's tombstones.
        var preservesValueOnDeletion = false
        /// Swift expressions passed through (string literals in practice).
        var originalName: String?
        var hashModifier: String?
    }

    struct RelationshipDescription {
        var name: String
        /// The destination model type, as written in the inverse key path's root.
        var destinationType: String
        var inverse: String
        /// Whether the inverse was given as a key path (the compiler checked it); a name is checked by a key
        /// path in the generated code.
        var inverseIsChecked = false
        var isToMany: Bool
        /// Swift expressions passed through.
        var deleteRule: String?
        var minCount: String?
        var maxCount: String?
        var originalName: String?
        var hashModifier: String?
    }

    /// A stored property, in declaration order: what a memberwise initializer takes.
    struct StoredProperty {
        var name: String
        var type: String
        /// The initial value's source, if any.
        var initialValue: String?
        var isOptional: Bool
        var isLet: Bool
    }

    var typeName: String
    /// The Swift expression of the entity's name (a string literal).
    var entityName: String
    var originalName: String?
    var hashModifier: String?
    /// The access modifier the generated members take (`public `, `package ` or nothing).
    var access: String
    var declaresObjectID = false
    /// Whether the struct declares an initializer (then no memberwise initializer is generated).
    var declaresInitializer = false
    var storedProperties: [StoredProperty] = []
    var attributes: [AttributeDescription] = []
    var relationships: [RelationshipDescription] = []
    var diagnostics: [Diagnostic] = []

    var hasErrors: Bool { !diagnostics.isEmpty }
}

extension ModelDescription {
    /// Reads `declaration` (the struct `@Entity` is attached to).
    init(declaration: some DeclGroupSyntax, attribute: AttributeSyntax) {
        typeName = declaration.as(StructDeclSyntax.self)?.name.text ?? "?"
        entityName = "\"\(typeName)\""
        access = ""
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            diagnostics.append(Diagnostic(node: attribute, message: ModelDiagnostic.notAStruct.message()))
            return
        }
        if structDecl.genericParameterClause != nil {
            diagnostics.append(Diagnostic(node: structDecl.name, message: ModelDiagnostic.genericStruct.message()))
        }
        for modifier in structDecl.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.public), .keyword(.open): access = "public "
            case .keyword(.package): access = "package "
            default: break
            }
        }
        if let arguments = attribute.arguments?.as(LabeledExprListSyntax.self) {
            for argument in arguments {
                switch argument.label?.text {
                case nil: entityName = argument.expression.trimmedDescription
                case "originalName": originalName = argument.expression.trimmedDescription
                case "hashModifier": hashModifier = argument.expression.trimmedDescription
                default: break
                }
            }
        }
        for member in structDecl.memberBlock.members {
            if member.decl.is(InitializerDeclSyntax.self) { declaresInitializer = true }
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            read(variable)
        }
    }

    private mutating func report(_ node: some SyntaxProtocol, _ kind: ModelDiagnostic, _ detail: String = "", fixIts: [FixIt] = []) {
        diagnostics.append(Diagnostic(node: node, message: kind.message(detail), fixIts: fixIts))
    }

    /// The `@Field` and `@Related` attributes of a declaration.
    private func markers(_ variable: VariableDeclSyntax) -> (field: AttributeSyntax?, related: AttributeSyntax?, count: Int) {
        var field: AttributeSyntax?
        var related: AttributeSyntax?
        var count = 0
        for element in variable.attributes {
            guard let attribute = element.as(AttributeSyntax.self) else { continue }
            let name = attribute.attributeName.trimmedDescription
            if name == "Field" || name == "StrataModels.Field" { field = attribute; count += 1 }
            if name == "Related" || name == "StrataModels.Related" { related = attribute; count += 1 }
        }
        return (field, related, count)
    }

    private mutating func read(_ variable: VariableDeclSyntax) {
        if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) }) {
            return
        }
        let (field, related, markerCount) = markers(variable)
        let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
        if variable.bindings.count > 1 {
            let names = variable.bindings.compactMap { $0.pattern.as(IdentifierPatternSyntax.self)?.identifier.text }
            if variable.bindings.contains(where: { !Self.isComputed($0) }) {
                report(variable, .multipleBindings, names.joined(separator: ", "))
            }
            return
        }
        guard let binding = variable.bindings.first,
              let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text else { return }
        if Self.isComputed(binding) {
            if markerCount > 0 { report(variable, .fieldOnComputedProperty, name) }
            return
        }
        if variable.modifiers.contains(where: { $0.name.tokenKind == .keyword(.lazy) }) {
            report(variable, .lazyProperty, name)
            return
        }
        if markerCount > 1 {
            report(variable, .duplicateAttribute, name)
            return
        }
        if isLet, binding.initializer != nil {
            let fixIt = FixIt(message: ModelFixIt(message: "make '\(name)' a 'var'"), changes: [
                .replace(oldNode: Syntax(variable.bindingSpecifier),
                         newNode: Syntax(TokenSyntax.keyword(.var, leadingTrivia: variable.bindingSpecifier.leadingTrivia,
                                                             trailingTrivia: variable.bindingSpecifier.trailingTrivia))),
            ])
            report(variable, .letWithInitialValue, name, fixIts: [fixIt])
            return
        }
        if name == "objectID" {
            declaresObjectID = true
            storedProperties.append(StoredProperty(name: name, type: binding.typeAnnotation?.type.trimmedDescription ?? "Strata.ObjectID?",
                                                   initialValue: binding.initializer?.value.trimmedDescription,
                                                   isOptional: true, isLet: isLet))
            let type = binding.typeAnnotation?.type
            let ok = type.map { t in
                guard let wrapped = PropertyType(t).optionalWrapped else { return false }
                return PropertyType(wrapped).baseName == "ObjectID"
            } ?? false
            if !ok || markerCount > 0 { report(variable, .objectIDType) }
            return
        }
        let initializer = binding.initializer?.value
        // The type: annotated, or inferred from a literal initial value.
        let typeSyntax: TypeSyntax
        if let annotated = binding.typeAnnotation?.type {
            typeSyntax = annotated
        } else if let initializer, let inferred = DefaultLiteral.inferredType(of: initializer) {
            typeSyntax = TypeSyntax(IdentifierTypeSyntax(name: .identifier(inferred)))
        } else {
            report(binding.pattern, .missingType, name)
            return
        }
        let type = PropertyType(typeSyntax)
        storedProperties.append(StoredProperty(name: name, type: typeSyntax.trimmedDescription,
                                               initialValue: initializer?.trimmedDescription,
                                               isOptional: type.optionalWrapped != nil, isLet: isLet))
        if let related {
            readRelationship(variable, name: name, type: type, attribute: related)
            return
        }
        if type.isObjectIDLink {
            report(variable, .relationshipWithoutRelated, name)
            return
        }
        readAttribute(variable, name: name, type: type, typeSyntax: typeSyntax, initializer: initializer, field: field)
    }

    /// Whether a binding is computed (a getter, or a body of accessors other than observers).
    private static func isComputed(_ binding: PatternBindingSyntax) -> Bool {
        guard let block = binding.accessorBlock else { return false }
        switch block.accessors {
        case .getter: return true
        case .accessors(let list):
            return list.contains { accessor in
                switch accessor.accessorSpecifier.tokenKind {
                case .keyword(.willSet), .keyword(.didSet): return false
                default: return true
                }
            }
        }
    }

    private mutating func readAttribute(_ variable: VariableDeclSyntax, name: String, type: PropertyType, typeSyntax: TypeSyntax,
                                        initializer: ExprSyntax?, field: AttributeSyntax?) {
        let options = FieldArguments(field)
        let base = type.optionalWrapped.map(PropertyType.init) ?? type
        let isOptional = type.optionalWrapped != nil
        let storage: Storage
        if options.codable {
            if options.rawValue {
                report(variable, .conflictingOptions, name)
                return
            }
            storage = .codable(shape: options.codableShape ?? "\"\(base.syntax.trimmedDescription)\"",
                               swiftType: base.syntax.trimmedDescription)
        } else if options.rawValue {
            storage = .raw(type: base.syntax.trimmedDescription)
        } else if base.isPlainName && !base.isCollection && UnstoredNumber.replacement(for: base.baseName) == nil {
            storage = .scalar(type: base.syntax.trimmedDescription)
        } else {
            reportUnsupported(variable, name: name, type: base)
            return
        }
        var attribute = AttributeDescription(name: name, storage: storage, isOptional: isOptional, defaultValue: nil)
        attribute.isUnique = options.unique
        attribute.isIndexed = options.indexed || options.unique
        attribute.isTransient = options.transient
        attribute.preservesValueOnDeletion = options.preserveValueOnDeletion
        attribute.originalName = options.originalName
        attribute.hashModifier = options.hashModifier
        if let initializer {
            switch DefaultLiteral.value(of: initializer, storage: storage, typeText: base.syntax.trimmedDescription) {
            case .value(let expression):
                attribute.defaultValue = expression
            case .none:
                break
            case .notALiteral:
                let fixIt = FixIt(message: ModelFixIt(message: "remove the initial value"), changes: [
                    .replace(oldNode: Syntax(variable), newNode: Syntax(Self.removingInitializer(variable))),
                ])
                report(initializer, .nonLiteralDefault, name, fixIts: [fixIt])
                return
            }
        } else if attribute.isTransient {
            report(variable, .transientWithoutDefault, name)
            return
        }
        attributes.append(attribute)
    }

    private static func removingInitializer(_ variable: VariableDeclSyntax) -> VariableDeclSyntax {
        var copy = variable
        copy.bindings = PatternBindingListSyntax(variable.bindings.map { binding in
            var b = binding
            b.initializer = nil
            if var annotation = b.typeAnnotation {
                annotation.type = annotation.type.trimmed
                b.typeAnnotation = annotation
            }
            return b
        })
        return copy
    }

    /// The diagnostic for a type Strata does not store, with the fix-its that are obvious.
    private mutating func reportUnsupported(_ variable: VariableDeclSyntax, name: String, type: PropertyType) {
        let text = type.syntax.trimmedDescription
        let addCodable = FixIt(message: ModelFixIt(message: "store '\(name)' as Codable JSON"), changes: [
            .replace(oldNode: Syntax(variable), newNode: Syntax(Self.adding("@Field(.codable)", to: variable))),
        ])
        if let replacement = UnstoredNumber.replacement(for: type.baseName), type.isPlainName {
            let fixIt = FixIt(message: ModelFixIt(message: "use '\(replacement)'"), changes: [
                .replace(oldNode: Syntax(type.syntax), newNode: Syntax(IdentifierTypeSyntax(name: .identifier(replacement))
                    .with(\.leadingTrivia, type.syntax.leadingTrivia).with(\.trailingTrivia, type.syntax.trailingTrivia))),
            ])
            let kind: ModelDiagnostic = ["Float16", "Float80", "CGFloat"].contains(type.baseName) ? .unsupportedFloatingType : .unsupportedIntegerType
            report(type.syntax, kind, text, fixIts: [fixIt])
        } else if type.isCollection {
            report(type.syntax, .collectionNeedsCodable, text, fixIts: [addCodable])
        } else {
            let addRaw = FixIt(message: ModelFixIt(message: "store '\(name)' as its raw value"), changes: [
                .replace(oldNode: Syntax(variable), newNode: Syntax(Self.adding("@Field(.rawValue)", to: variable))),
            ])
            report(type.syntax, .unsupportedType, text, fixIts: [addCodable, addRaw])
        }
    }

    private static func adding(_ attribute: String, to variable: VariableDeclSyntax) -> VariableDeclSyntax {
        // The new attribute takes the declaration's leading trivia (its line break and indentation).
        let leading = variable.leadingTrivia
        var copy = variable.with(\.leadingTrivia, [])
        let parsed = AttributeSyntax(stringLiteral: attribute).with(\.leadingTrivia, leading).with(\.trailingTrivia, .space)
        copy.attributes = AttributeListSyntax([.attribute(parsed)] + Array(copy.attributes))
        return copy
    }

    private mutating func readRelationship(_ variable: VariableDeclSyntax, name: String, type: PropertyType, attribute: AttributeSyntax) {
        let isToMany: Bool
        if let element = type.arrayElement, PropertyType(element).baseName == "ObjectID" {
            isToMany = true
        } else if let wrapped = type.optionalWrapped, PropertyType(wrapped).baseName == "ObjectID" {
            isToMany = false
        } else if type.baseName == "ObjectID" {
            let optional = OptionalTypeSyntax(wrappedType: type.syntax.trimmed)
            let fixIt = FixIt(message: ModelFixIt(message: "make '\(name)' optional"), changes: [
                .replace(oldNode: Syntax(type.syntax), newNode: Syntax(optional.with(\.leadingTrivia, type.syntax.leadingTrivia)
                    .with(\.trailingTrivia, type.syntax.trailingTrivia))),
            ])
            report(type.syntax, .toOneNotOptional, name, fixIts: [fixIt])
            return
        } else {
            report(type.syntax, .relatedOnNonRelationship, type.syntax.trimmedDescription)
            return
        }
        var relationship = RelationshipDescription(name: name, destinationType: "", inverse: "", isToMany: isToMany)
        for argument in attribute.arguments?.as(LabeledExprListSyntax.self) ?? [] {
            let text = argument.expression.trimmedDescription
            switch argument.label?.text {
            case "inverse":
                if let keyPath = argument.expression.as(KeyPathExprSyntax.self), let root = keyPath.root,
                   let last = keyPath.components.last?.component.as(KeyPathPropertyComponentSyntax.self) {
                    relationship.destinationType = root.trimmedDescription
                    relationship.inverse = last.declName.baseName.text
                    relationship.inverseIsChecked = true
                } else if let string = argument.expression.as(StringLiteralExprSyntax.self),
                          string.segments.count == 1, let segment = string.segments.first?.as(StringSegmentSyntax.self) {
                    relationship.inverse = segment.content.text
                } else {
                    report(argument.expression, .relationshipInverseNotKeyPath)
                    return
                }
            case "to":
                var text = argument.expression.trimmedDescription
                if text.hasSuffix(".self") { text.removeLast(5) }
                relationship.destinationType = text
            case "deleteRule": relationship.deleteRule = text
            case "minCount": relationship.minCount = text
            case "maxCount": relationship.maxCount = text
            case "originalName": relationship.originalName = text
            case "hashModifier": relationship.hashModifier = text
            default: break
            }
        }
        guard !relationship.inverse.isEmpty, !relationship.destinationType.isEmpty else {
            report(attribute, .relationshipInverseNotKeyPath)
            return
        }
        relationships.append(relationship)
    }
}

/// The arguments of a `@Field` attribute.
struct FieldArguments {
    var unique = false
    var indexed = false
    var transient = false
    var preserveValueOnDeletion = false
    var codable = false
    var codableShape: String?
    var rawValue = false
    var originalName: String?
    var hashModifier: String?

    init(_ attribute: AttributeSyntax?) {
        guard let arguments = attribute?.arguments?.as(LabeledExprListSyntax.self) else { return }
        for argument in arguments {
            switch argument.label?.text {
            case "originalName": originalName = argument.expression.trimmedDescription
            case "hashModifier": hashModifier = argument.expression.trimmedDescription
            case nil:
                if let member = argument.expression.as(MemberAccessExprSyntax.self) {
                    flag(member.declName.baseName.text)
                } else if let call = argument.expression.as(FunctionCallExprSyntax.self),
                          let member = call.calledExpression.as(MemberAccessExprSyntax.self),
                          member.declName.baseName.text == "codable" {
                    codable = true
                    codableShape = call.arguments.first?.expression.trimmedDescription
                }
            default: break
            }
        }
    }

    private mutating func flag(_ name: String) {
        switch name {
        case "unique": unique = true
        case "indexed": indexed = true
        case "transient": transient = true
        case "preserveValueOnDeletion": preserveValueOnDeletion = true
        case "codable": codable = true
        case "rawValue": rawValue = true
        default: break
        }
    }
}
