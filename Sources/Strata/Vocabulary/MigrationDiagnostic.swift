/// Why a step cannot be migrated as inferred, or why existing data does not allow it.
///
/// Each description names the entity and property, and the kind of custom stage that would do the change.
public enum MigrationDiagnostic: Sendable, Hashable, CustomStringConvertible {
    /// A required attribute was added without a default value.
    case requiredAttributeWithoutDefault(entity: String, attribute: String)
    /// An optional attribute became required without a default value.
    case attributeMadeRequiredWithoutDefault(entity: String, attribute: String)
    /// An attribute's type changed in a way that is not a widening.
    case attributeTypeChanged(entity: String, attribute: String, from: String, to: String)
    /// A codable attribute's type changed and its values' shapes do not tell how to read the old values
    /// (undeclared, or a change inference does not make).
    case codableShapeChanged(entity: String, attribute: String, from: String, to: String, reason: String)
    /// A relationship now points to another entity.
    case relationshipDestinationChanged(entity: String, relationship: String, from: String, to: String)
    /// A relationship was added with a minimum count that existing objects cannot meet.
    case relationshipAddedWithMinimum(entity: String, relationship: String, minimum: Int)
    /// Two properties (or entities) of the destination claim the same source.
    case ambiguousRename(entity: String?, source: String, claimedBy: [String])

    // Found in the data when the step ran (nothing was changed):

    /// A to-many relationship became to-one (or its maximum count fell) but objects have more links.
    case tooManyLinks(entity: String, relationship: String, maximum: Int, objects: [ObjectID], total: Int)
    /// A relationship's minimum count rose but objects have fewer links.
    case tooFewLinks(entity: String, relationship: String, minimum: Int, objects: [ObjectID], total: Int)
    /// An attribute became unique but values are shared.
    case duplicateValues(entity: String, attribute: String, values: [String], total: Int)
    /// After a custom stage's scripts, required attributes are still null.
    case requiredValuesMissing(entity: String, attribute: String, objects: [ObjectID], total: Int)

    /// Whether the diagnostic comes from the data (a run-time check) rather than the two models.
    public var isDataDiagnostic: Bool {
        switch self {
        case .tooManyLinks, .tooFewLinks, .duplicateValues, .requiredValuesMissing: true
        default: false
        }
    }

    public var description: String {
        func list(_ ids: [ObjectID], _ total: Int) -> String {
            let shown = ids.map(\.description).joined(separator: ", ")
            return total > ids.count ? "\(shown) and \(total - ids.count) more" : shown
        }
        switch self {
        case .requiredAttributeWithoutDefault(let e, let a):
            return "\(e).\(a) is a new required attribute without a default value: give it a default, make it optional, or add a custom stage with an ObjectScript(\"\(e)\") that sets it"
        case .attributeMadeRequiredWithoutDefault(let e, let a):
            return "\(e).\(a) became required without a default value: give it a default, or add a custom stage with an ObjectScript(\"\(e)\") that sets it where it is null"
        case .attributeTypeChanged(let e, let a, let from, let to):
            return "\(e).\(a) changed type from \(from) to \(to), which is not a widening: add a custom stage with an ObjectScript(\"\(e)\") that converts ObjectScript.previousValueName(of: \"\(a)\")"
        case .codableShapeChanged(let e, let a, let from, let to, let reason):
            return "\(e).\(a) changed from codable \(from) to codable \(to) and \(reason): declare both shapes with Attribute.shape(_:) (or CodableShapeDescribing), or add a custom stage with an ObjectScript(\"\(e)\") that converts ObjectScript.previousValueName(of: \"\(a)\")"
        case .relationshipDestinationChanged(let e, let r, let from, let to):
            return "\(e).\(r) now points to \(to) instead of \(from): add a custom stage with an EntityMapping for \(e) that links the new destination objects"
        case .relationshipAddedWithMinimum(let e, let r, let min):
            return "\(e).\(r) is a new relationship with a minimum of \(min): existing objects have none; add a custom stage with an EntityMapping for \(e) that creates the links"
        case .ambiguousRename(let e, let source, let claimedBy):
            return "\(e.map { "in \($0), " } ?? "")\(claimedBy.joined(separator: " and ")) all claim to be renamed from \(source); keep one renaming identifier"
        case .tooManyLinks(let e, let r, let max, let ids, let total):
            return "\(e).\(r) may now hold at most \(max) object\(max == 1 ? "" : "s"), but \(total) object\(total == 1 ? " has" : "s have") more: \(list(ids, total)); fix them in a custom stage's willMigrate"
        case .tooFewLinks(let e, let r, let min, let ids, let total):
            return "\(e).\(r) must now hold at least \(min) object\(min == 1 ? "" : "s"), but \(total) object\(total == 1 ? " has" : "s have") fewer: \(list(ids, total))"
        case .duplicateValues(let e, let a, let values, let total):
            return "\(e).\(a) became unique but \(total) value\(total == 1 ? " is" : "s are") shared: \(values.joined(separator: ", "))\(total > values.count ? ", …" : ""); remove the duplicates in a custom stage's willMigrate"
        case .requiredValuesMissing(let e, let a, let ids, let total):
            return "\(e).\(a) is required but the stage left it null on \(total) object\(total == 1 ? "" : "s"): \(list(ids, total))"
        }
    }
}
