import Foundation

/// One version of an app's model: a version identifier and its entities.
///
/// A schema is validated when it is made; every problem found is reported at once in a
/// ``SchemaValidationError``. Schemas are values: keep each version you ship as a frozen snapshot
/// (a `static let` in an enum named for the version), never derived from today's types, so that
/// migrations describe the past.
///
/// ```swift
/// let v1 = try Schema("v1") {
///     Entity("Post") {
///         Attribute("postID", .uuid).unique()
///         Attribute("color", .string)
///         Attribute("content", .string)
///         Attribute("date", .date).indexed()
///     }
/// }
/// ```
///
/// ## Topics
/// ### Identity
/// - ``versionIdentifier``
/// - ``entityVersionHashes``
/// - ``fingerprint``
/// ### JSON form
/// - ``jsonData(prettyPrinted:)``
/// - ``init(jsonData:)``
public struct Schema: Sendable {
    /// The version's identifier, such as `"v3"`.
    public let versionIdentifier: String
    /// The entities, in declaration order.
    public let entities: [Entity]
    /// Each entity's version hash, by entity name: what identifies the layout of its stored objects.
    public let entityVersionHashes: [String: VersionHash]
    /// A hash of the whole model, including what the version hashes leave out (defaults, indexes,
    /// renaming identifiers). Two schemas with the same fingerprint are the same model.
    public let fingerprint: VersionHash

    let entityPositions: [String: Int]

    /// Creates and validates a schema.
    /// - Throws: ``SchemaValidationError`` listing every problem found.
    public init(_ versionIdentifier: String, entities: [Entity]) throws(SchemaValidationError) {
        let entities = entities.map(Schema.normalizingDefaults)
        let problems = SchemaValidator.problems(versionIdentifier: versionIdentifier, entities: entities)
        guard problems.isEmpty else { throw SchemaValidationError(problems: problems) }
        self.init(unchecked: versionIdentifier, entities: entities)
    }

    /// Creates and validates a schema whose entities are listed in a builder.
    public init(_ versionIdentifier: String, @SchemaEntityBuilder entities: () -> [Entity]) throws(SchemaValidationError) {
        try self.init(versionIdentifier, entities: entities())
    }

    /// Builds a schema that is known to be valid (derived by the migration engine from valid schemas).
    init(unchecked versionIdentifier: String, entities: [Entity]) {
        self.versionIdentifier = versionIdentifier
        self.entities = entities
        var hashes: [String: VersionHash] = [:]
        var positions: [String: Int] = [:]
        for (i, entity) in entities.enumerated() {
            hashes[entity.name] = VersionHash.of(entity)
            positions[entity.name] = i
        }
        self.entityVersionHashes = hashes
        self.entityPositions = positions
        self.fingerprint = VersionHash.fingerprint(versionIdentifier: versionIdentifier, entities: entities)
    }

    /// Writes literal defaults in the attribute's own type (`.int64(0)` for an Int16 attribute becomes `.int16(0)`).
    static func normalizingDefaults(_ entity: Entity) -> Entity {
        var entity = entity
        for i in entity.attributes.indices {
            if let value = entity.attributes[i].defaultValue, !value.isNull,
               let exact = entity.attributes[i].type.coerce(value) {
                entity.attributes[i].defaultValue = exact
            }
        }
        return entity
    }

    /// The entity named `name`.
    public func entity(named name: String) -> Entity? {
        entityPositions[name].map { entities[$0] }
    }

    /// A copy with another version identifier (same entities).
    public func withVersionIdentifier(_ identifier: String) throws(SchemaValidationError) -> Schema {
        try Schema(identifier, entities: entities)
    }
}

extension Schema: Hashable {
    public static func == (lhs: Schema, rhs: Schema) -> Bool {
        lhs.versionIdentifier == rhs.versionIdentifier && lhs.entities == rhs.entities
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fingerprint)
    }
}

extension Schema: CustomStringConvertible {
    public var description: String {
        "Schema \(versionIdentifier) (\(entities.map(\.name).joined(separator: ", ")))"
    }
}
