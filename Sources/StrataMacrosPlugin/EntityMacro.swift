import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxMacros

/// `@Entity`: the schema entity and the record code of a model struct.
///
/// Members (inside the struct, where the struct's sibling types are in scope): `objectID` when the struct has
/// none, `entityName`, `entity`, `propertyName(for:)` and `write(to:)`. Extension: the `EntityModel`
/// conformance and `init(from:)` (outside the struct, so that the struct keeps its memberwise initializer).
/// Problems are reported once, by the member expansion; with any, nothing is generated.
public struct EntityMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let model = ModelDescription(declaration: declaration, attribute: node)
        for diagnostic in model.diagnostics { context.diagnose(diagnostic) }
        guard !model.hasErrors else { return [] }
        return model.members()
    }

    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        let model = ModelDescription(declaration: declaration, attribute: node)
        guard !model.hasErrors else { return [] }
        let initializer = model.readingInitializer()
        let decl: DeclSyntax = """
        extension \(type.trimmed): Strata.EntityModel {
            \(initializer)
        }
        """
        guard let ext = decl.as(ExtensionDeclSyntax.self) else { return [] }
        return [ext]
    }
}

/// `@Field`: a marker that `@Entity` reads; it generates nothing itself.
public struct FieldMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        []
    }
}

/// `@Related`: a marker that `@Entity` reads; it generates nothing itself.
public struct RelatedMacro: PeerMacro {
    public static func expansion(of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
                                 in context: some MacroExpansionContext) throws -> [DeclSyntax] {
        []
    }
}
