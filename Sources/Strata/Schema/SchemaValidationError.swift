/// Everything wrong with a schema, found when it was made or decoded.
///
/// ```swift
/// do { _ = try Schema("v1", entities: entities) }
/// catch let error as SchemaValidationError { for problem in error.problems { print(problem) } }
/// ```
public struct SchemaValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Every problem, in the order found.
    public let problems: [SchemaProblem]

    public init(problems: [SchemaProblem]) { self.problems = problems }

    public var description: String {
        "The schema is invalid (\(problems.count) problem\(problems.count == 1 ? "" : "s")): "
            + problems.map(\.description).joined(separator: "; ")
    }
}

/// One problem in a schema.
public enum SchemaProblem: Sendable, Hashable, CustomStringConvertible {
    /// The version identifier is empty.
    case emptyVersionIdentifier
    /// A name is empty. `location` says where (`"entity #2"`, `"Post.attribute #1"`).
    case emptyName(location: String)
    /// A name is not made of letters, digits and underscores starting with a letter or underscore, or is
    /// longer than 128 bytes.
    case invalidName(String, location: String)
    /// A name begins with `__`, which Strata reserves for its own use (intermediate migration models).
    case reservedName(String, location: String)
    /// Two entities share a name.
    case duplicateEntity(String)
    /// Two properties (attributes or relationships) of an entity share a name.
    case duplicateProperty(entity: String, name: String)
    /// Two properties of an entity, or two entities, give the same renaming identifier.
    case duplicateRenamingIdentifier(entity: String?, identifier: String)
    /// A relationship's destination entity does not exist.
    case missingDestination(entity: String, relationship: String, destination: String)
    /// A relationship's inverse is not a relationship of the destination entity.
    case missingInverse(entity: String, relationship: String, inverse: String, destination: String)
    /// A relationship's inverse does not point back to it.
    case inverseMismatch(entity: String, relationship: String, inverse: String, pointsTo: String)
    /// A default value does not have the attribute's type.
    case defaultTypeMismatch(entity: String, attribute: String, expected: String, actual: String)
    /// A required attribute has a null default.
    case nullDefaultForRequiredAttribute(entity: String, attribute: String)
    /// Minimum or maximum counts are negative, inverted, or a to-one allows more than one.
    case invalidCounts(entity: String, relationship: String, minCount: Int?, maxCount: Int?)
    /// A transient attribute is indexed or unique.
    case transientIndexed(entity: String, attribute: String)
    /// A codable attribute's type name is empty.
    case emptyCodableTypeName(entity: String, attribute: String)
    /// A codable shape is declared on an attribute that is not codable, or declares a key twice or a default
    /// of the wrong kind.
    case invalidCodableShape(entity: String, attribute: String, reason: String)
    /// The schema's JSON form could not be read.
    case malformedJSON(String)

    public var description: String {
        switch self {
        case .emptyVersionIdentifier:
            "the version identifier is empty; give each version a name such as \"v1\""
        case .emptyName(let location):
            "\(location) has an empty name"
        case .invalidName(let name, let location):
            "\(location) has the name \"\(name)\", which is not made of letters, digits and underscores starting with a letter or underscore (at most 128 bytes)"
        case .reservedName(let name, let location):
            "\(location) has the name \"\(name)\"; names beginning with \"__\" are reserved for Strata"
        case .duplicateEntity(let name):
            "two entities are named \"\(name)\""
        case .duplicateProperty(let entity, let name):
            "entity \(entity) has two properties named \"\(name)\""
        case .duplicateRenamingIdentifier(let entity, let identifier):
            if let entity { "entity \(entity) has two properties renamed from \"\(identifier)\"" }
            else { "two entities are renamed from \"\(identifier)\"" }
        case .missingDestination(let entity, let relationship, let destination):
            "relationship \(entity).\(relationship) points to entity \(destination), which does not exist"
        case .missingInverse(let entity, let relationship, let inverse, let destination):
            "relationship \(entity).\(relationship) names the inverse \(destination).\(inverse), which is not a relationship of \(destination)"
        case .inverseMismatch(let entity, let relationship, let inverse, let pointsTo):
            "relationship \(entity).\(relationship) names the inverse \(inverse), but \(inverse) points back to \(pointsTo)"
        case .defaultTypeMismatch(let entity, let attribute, let expected, let actual):
            "attribute \(entity).\(attribute) is of type \(expected) but its default value is a \(actual)"
        case .invalidCodableShape(let entity, let attribute, let reason):
            "the shape of attribute \(entity).\(attribute) is invalid: \(reason)"
        case .nullDefaultForRequiredAttribute(let entity, let attribute):
            "attribute \(entity).\(attribute) is required but its default value is null"
        case .invalidCounts(let entity, let relationship, let minCount, let maxCount):
            "relationship \(entity).\(relationship) has invalid counts (minimum \(minCount.map(String.init) ?? "none"), maximum \(maxCount.map(String.init) ?? "none"))"
        case .transientIndexed(let entity, let attribute):
            "attribute \(entity).\(attribute) is transient and cannot be indexed or unique"
        case .emptyCodableTypeName(let entity, let attribute):
            "attribute \(entity).\(attribute) is codable but its type name is empty"
        case .malformedJSON(let reason):
            "the schema JSON could not be read: \(reason)"
        }
    }
}
