import SwiftCompilerPlugin
import SwiftSyntaxMacros

/// The compiler plugin of `StrataModels`: `@Entity` generates a model type's schema entity and record code;
/// `@Field` and `@Related` only mark properties for it.
@main
struct StrataMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [EntityMacro.self, FieldMacro.self, RelatedMacro.self]
}
