import SwiftDiagnostics

/// The diagnostics of `@Entity`, each attached to the property (or struct) it concerns.
enum ModelDiagnostic: String, DiagnosticMessage {
    case notAStruct
    case genericStruct
    case unsupportedType
    case unsupportedIntegerType
    case unsupportedFloatingType
    case collectionNeedsCodable
    case nonLiteralDefault
    case missingType
    case relationshipWithoutRelated
    case relatedOnNonRelationship
    case toOneNotOptional
    case transientWithoutDefault
    case letWithInitialValue
    case lazyProperty
    case fieldOnComputedProperty
    case conflictingOptions
    case duplicateAttribute
    case relationshipInverseNotKeyPath
    case objectIDType
    case multipleBindings

    /// The diagnostic's text, with the property's name and type where they help.
    struct Message: DiagnosticMessage {
        let message: String
        let diagnosticID: MessageID
        let severity: DiagnosticSeverity
    }

    func message(_ detail: String = "") -> Message {
        let text: String
        switch self {
        case .notAStruct:
            text = "@Entity applies to a struct: models are values (classes, enums and actors are not supported)"
        case .genericStruct:
            text = "@Entity does not support generic structs: an entity has one fixed layout"
        case .unsupportedType:
            text = "Strata cannot store a property of type '\(detail)': store it as Codable JSON with @Field(.codable), or as its raw value with @Field(.rawValue)"
        case .unsupportedIntegerType:
            text = "Strata stores Int, Int64, Int32 and Int16, not '\(detail)'"
        case .unsupportedFloatingType:
            text = "Strata stores Double and Float, not '\(detail)'"
        case .collectionNeedsCodable:
            text = "a collection ('\(detail)') is stored as Codable JSON: mark it @Field(.codable), or make it a relationship"
        case .nonLiteralDefault:
            text = "the initial value of '\(detail)' is the attribute's default and is recorded in the schema, so it must be a literal (a number, a string, true, false or nil); set other values in an initializer"
        case .missingType:
            text = "'\(detail)' needs a type annotation (its type is the attribute's type)"
        case .relationshipWithoutRelated:
            text = "'\(detail)' links objects: mark it @Related(inverse: \\Destination.property)"
        case .relatedOnNonRelationship:
            text = "@Related applies to 'ObjectID?' (to-one) and '[ObjectID]' (to-many) properties, not '\(detail)'"
        case .toOneNotOptional:
            text = "a to-one relationship may link no object: declare '\(detail)' as 'ObjectID?'"
        case .transientWithoutDefault:
            text = "the transient property '\(detail)' is never stored: give it an initial value to read as"
        case .letWithInitialValue:
            text = "'\(detail)' is a constant with an initial value, so it cannot be read back from the store: make it 'var'"
        case .lazyProperty:
            text = "lazy properties cannot be stored: make '\(detail)' a computed property, or a plain 'var'"
        case .fieldOnComputedProperty:
            text = "'\(detail)' is computed, so it is not stored: remove @Field/@Related, or make it a stored property"
        case .conflictingOptions:
            text = "'\(detail)' is stored as Codable JSON or as its raw value, not both: keep one of .codable and .rawValue"
        case .duplicateAttribute:
            text = "'\(detail)' has more than one @Field or @Related attribute"
        case .relationshipInverseNotKeyPath:
            text = "@Related names its inverse with a key path, as in @Related(inverse: \\Section.post), or with the destination type and the inverse's name, as in @Related(to: Post.self, inverse: \"sections\")"
        case .objectIDType:
            text = "'objectID' holds the object's identifier: declare it as 'var objectID: ObjectID?'"
        case .multipleBindings:
            text = "declare one stored property per 'var' in an @Entity struct ('\(detail)')"
        }
        return Message(message: text, diagnosticID: MessageID(domain: "StrataModels", id: rawValue), severity: .error)
    }

    var message: String { message().message }
    var diagnosticID: MessageID { message().diagnosticID }
    var severity: DiagnosticSeverity { .error }
}

/// The text of a fix-it.
struct ModelFixIt: FixItMessage {
    let message: String
    var fixItID: MessageID { MessageID(domain: "StrataModels", id: message) }
}
