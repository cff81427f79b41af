import Foundation

extension Schema {
    /// The schema's JSON form (documented in <doc:SchemaJSON>): keys sorted, so the same schema always gives
    /// the same bytes. `Schema(jsonData: schema.jsonData())` equals `schema`.
    public func jsonData(prettyPrinted: Bool = true) -> Data {
        let document = SchemaDocument(versionIdentifier: versionIdentifier, entities: entities)
        // Encoding plain strings, Booleans and numbers cannot fail.
        return (try? SchemaDocument.encoder(prettyPrinted: prettyPrinted).encode(document)) ?? Data()
    }

    /// Reads and validates a schema from its JSON form.
    /// - Throws: ``SchemaValidationError``, with ``SchemaProblem/malformedJSON(_:)`` when the text is not a
    ///   schema document, or the validation problems of the schema it describes.
    public init(jsonData: Data) throws(SchemaValidationError) {
        let document: SchemaDocument
        do {
            document = try JSONDecoder().decode(SchemaDocument.self, from: jsonData)
        } catch let error as SchemaDocument.FormError {
            throw SchemaValidationError(problems: [.malformedJSON(error.reason)])
        } catch let error as DecodingError {
            throw SchemaValidationError(problems: [.malformedJSON(SchemaDocument.describe(error))])
        } catch {
            throw SchemaValidationError(problems: [.malformedJSON("\(error)")])
        }
        try self.init(document.versionIdentifier, entities: document.entities)
    }
}

/// The JSON document form of a schema.
struct SchemaDocument: Codable {
    static let formatName = "strata.schema"
    static let formatVersion = 1

    var versionIdentifier: String
    var entities: [Entity]

    struct FormError: Error { let reason: String }

    init(versionIdentifier: String, entities: [Entity]) {
        self.versionIdentifier = versionIdentifier
        self.entities = entities
    }

    static func encoder(prettyPrinted: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = prettyPrinted ? [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ context: DecodingError.Context) -> String {
            let p = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? "." + $0.stringValue }.joined()
            return p.isEmpty ? "the document" : String(p.drop { $0 == "." })
        }
        switch error {
        case .keyNotFound(let key, let context): return "\(path(context)) is missing the key \"\(key.stringValue)\""
        case .typeMismatch(_, let context): return "\(path(context)): \(context.debugDescription)"
        case .valueNotFound(_, let context): return "\(path(context)) is null: \(context.debugDescription)"
        case .dataCorrupted(let context): return "\(path(context)): \(context.debugDescription)"
        @unknown default: return "\(error)"
        }
    }

    private enum Keys: String, CodingKey { case format, formatVersion, versionIdentifier, entities }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let format = try c.decode(String.self, forKey: .format)
        guard format == Self.formatName else { throw FormError(reason: "\"format\" is \"\(format)\", not \"\(Self.formatName)\"") }
        let version = try c.decode(Int.self, forKey: .formatVersion)
        guard version == Self.formatVersion else {
            throw FormError(reason: "schema format version \(version) is not supported (this Strata reads version \(Self.formatVersion))")
        }
        versionIdentifier = try c.decode(String.self, forKey: .versionIdentifier)
        entities = try c.decode([EntityForm].self, forKey: .entities).map(\.entity)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(Self.formatName, forKey: .format)
        try c.encode(Self.formatVersion, forKey: .formatVersion)
        try c.encode(versionIdentifier, forKey: .versionIdentifier)
        try c.encode(entities.map(EntityForm.init), forKey: .entities)
    }
}

private struct EntityForm: Codable {
    var entity: Entity
    init(_ entity: Entity) { self.entity = entity }

    private enum Keys: String, CodingKey { case name, attributes, relationships, renamingIdentifier, versionHashModifier }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        entity = Entity(
            try c.decode(String.self, forKey: .name),
            attributes: try c.decodeIfPresent([AttributeForm].self, forKey: .attributes)?.map(\.attribute) ?? [],
            relationships: try c.decodeIfPresent([RelationshipForm].self, forKey: .relationships)?.map(\.relationship) ?? [],
            renamingIdentifier: try c.decodeIfPresent(String.self, forKey: .renamingIdentifier),
            versionHashModifier: try c.decodeIfPresent(String.self, forKey: .versionHashModifier))
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(entity.name, forKey: .name)
        try c.encode(entity.attributes.map(AttributeForm.init), forKey: .attributes)
        try c.encode(entity.relationships.map(RelationshipForm.init), forKey: .relationships)
        try c.encodeIfPresent(entity.renamingIdentifier, forKey: .renamingIdentifier)
        try c.encodeIfPresent(entity.versionHashModifier, forKey: .versionHashModifier)
    }
}

private struct AttributeForm: Codable {
    var attribute: Attribute
    init(_ attribute: Attribute) { self.attribute = attribute }

    private enum Keys: String, CodingKey {
        case name, type, codableType, optional, defaultValue, transient, indexed, unique, renamingIdentifier, versionHashModifier
        case shape, preserveValueOnDeletion
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let name = try c.decode(String.self, forKey: .name)
        let typeName = try c.decode(String.self, forKey: .type)
        let codableType = try c.decodeIfPresent(String.self, forKey: .codableType)
        guard let type = AttributeType(name: typeName, codableTypeName: codableType) else {
            if typeName == "codable" {
                throw SchemaDocument.FormError(reason: "attribute \"\(name)\" is codable but has no \"codableType\"")
            }
            throw SchemaDocument.FormError(reason: "attribute \"\(name)\" has the unknown type \"\(typeName)\"")
        }
        var defaultValue: Value? = nil
        if c.contains(.defaultValue) {
            let json = try c.decode(JSONValue.self, forKey: .defaultValue)
            do {
                defaultValue = try ValueJSON.value(from: json, type: type)
            } catch {
                throw SchemaDocument.FormError(reason: "the default value of attribute \"\(name)\": \(error)")
            }
        }
        attribute = Attribute(
            name, type,
            isOptional: try c.decodeIfPresent(Bool.self, forKey: .optional) ?? false,
            defaultValue: defaultValue,
            isTransient: try c.decodeIfPresent(Bool.self, forKey: .transient) ?? false,
            isIndexed: try c.decodeIfPresent(Bool.self, forKey: .indexed) ?? false,
            isUnique: try c.decodeIfPresent(Bool.self, forKey: .unique) ?? false,
            renamingIdentifier: try c.decodeIfPresent(String.self, forKey: .renamingIdentifier),
            versionHashModifier: try c.decodeIfPresent(String.self, forKey: .versionHashModifier),
            codableShape: try c.decodeIfPresent([ShapeFieldForm].self, forKey: .shape).map { CodableShape($0.map(\.field)) },
            preservesValueOnDeletion: try c.decodeIfPresent(Bool.self, forKey: .preserveValueOnDeletion) ?? false)
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(attribute.name, forKey: .name)
        try c.encode(attribute.type.name, forKey: .type)
        if case .codable(let typeName) = attribute.type { try c.encode(typeName, forKey: .codableType) }
        try c.encode(attribute.isOptional, forKey: .optional)
        if let value = attribute.defaultValue { try c.encode(ValueJSON.json(for: value), forKey: .defaultValue) }
        try c.encode(attribute.isTransient, forKey: .transient)
        try c.encode(attribute.isIndexed, forKey: .indexed)
        try c.encode(attribute.isUnique, forKey: .unique)
        try c.encodeIfPresent(attribute.renamingIdentifier, forKey: .renamingIdentifier)
        try c.encodeIfPresent(attribute.versionHashModifier, forKey: .versionHashModifier)
        try c.encodeIfPresent(attribute.codableShape.map { $0.fields.map(ShapeFieldForm.init) }, forKey: .shape)
        // Written only when set: the JSON (and so the fingerprint) of every model without it stays as it was.
        if attribute.preservesValueOnDeletion { try c.encode(true, forKey: .preserveValueOnDeletion) }
    }
}

/// One key of a codable attribute's ``CodableShape``: `{"name": "z", "kind": "number", "defaultValue": 0}`.
private struct ShapeFieldForm: Codable {
    var field: CodableShape.Field
    init(_ field: CodableShape.Field) { self.field = field }

    private enum Keys: String, CodingKey { case name, kind, optional, defaultValue, renamingIdentifier }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let name = try c.decode(String.self, forKey: .name)
        let kindName = try c.decode(String.self, forKey: .kind)
        guard let kind = CodableShape.Kind(rawValue: kindName) else {
            throw SchemaDocument.FormError(reason: "the shape key \"\(name)\" has the unknown kind \"\(kindName)\" (one of \(CodableShape.Kind.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        field = CodableShape.Field(
            name: name, kind: kind, isOptional: try c.decodeIfPresent(Bool.self, forKey: .optional) ?? false,
            defaultValue: try c.decodeIfPresent(JSONValue.self, forKey: .defaultValue),
            renamingIdentifier: try c.decodeIfPresent(String.self, forKey: .renamingIdentifier))
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(field.name, forKey: .name)
        try c.encode(field.kind.rawValue, forKey: .kind)
        if field.isOptional { try c.encode(true, forKey: .optional) }
        try c.encodeIfPresent(field.defaultValue, forKey: .defaultValue)
        try c.encodeIfPresent(field.renamingIdentifier, forKey: .renamingIdentifier)
    }
}

private struct RelationshipForm: Codable {
    var relationship: Relationship
    init(_ relationship: Relationship) { self.relationship = relationship }

    private enum Keys: String, CodingKey {
        case name, destination, inverse, toMany, deleteRule, minCount, maxCount, renamingIdentifier, versionHashModifier
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        let name = try c.decode(String.self, forKey: .name)
        let ruleName = try c.decodeIfPresent(String.self, forKey: .deleteRule) ?? "nullify"
        guard let rule = DeleteRule(rawValue: ruleName) else {
            throw SchemaDocument.FormError(reason: "relationship \"\(name)\" has the unknown delete rule \"\(ruleName)\" (nullify, cascade or deny)")
        }
        relationship = Relationship(
            name,
            to: try c.decode(String.self, forKey: .destination),
            inverse: try c.decode(String.self, forKey: .inverse),
            toMany: try c.decodeIfPresent(Bool.self, forKey: .toMany) ?? false,
            deleteRule: rule,
            minCount: try c.decodeIfPresent(Int.self, forKey: .minCount),
            maxCount: try c.decodeIfPresent(Int.self, forKey: .maxCount),
            renamingIdentifier: try c.decodeIfPresent(String.self, forKey: .renamingIdentifier),
            versionHashModifier: try c.decodeIfPresent(String.self, forKey: .versionHashModifier))
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode(relationship.name, forKey: .name)
        try c.encode(relationship.destination, forKey: .destination)
        try c.encode(relationship.inverse, forKey: .inverse)
        try c.encode(relationship.isToMany, forKey: .toMany)
        try c.encode(relationship.deleteRule.rawValue, forKey: .deleteRule)
        try c.encodeIfPresent(relationship.minCount, forKey: .minCount)
        try c.encodeIfPresent(relationship.maxCount, forKey: .maxCount)
        try c.encodeIfPresent(relationship.renamingIdentifier, forKey: .renamingIdentifier)
        try c.encodeIfPresent(relationship.versionHashModifier, forKey: .versionHashModifier)
    }
}
