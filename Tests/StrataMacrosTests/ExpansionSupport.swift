import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import SwiftSyntaxMacrosGenericTestSupport
import StrataMacrosPlugin
import Testing

/// The macros under test, as the compiler registers them.
let strataMacros: [String: MacroSpec] = [
    "Entity": MacroSpec(type: EntityMacro.self, conformances: ["EntityModel"]),
    "Field": MacroSpec(type: FieldMacro.self),
    "Related": MacroSpec(type: RelatedMacro.self),
]

/// `assertMacroExpansion` reporting through Swift Testing.
func expectExpansion(
    _ source: String, expandedSource: String, diagnostics: [DiagnosticSpec] = [], applyFixIts: [String]? = nil,
    fixedSource: String? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    assertMacroExpansion(
        source, expandedSource: expandedSource, diagnostics: diagnostics, macroSpecs: strataMacros,
        applyFixIts: applyFixIts, fixedSource: fixedSource, indentationWidth: .spaces(4),
        failureHandler: { failure in
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        })
}
