/// The mapping of one migration step, inferred from two schemas: what happens to every entity, attribute,
/// relationship and index. Made by ``InferredMapping/infer(from:to:through:scriptedEntities:)``.
public struct InferredMapping: Sendable {
    /// The step's source and destination.
    public let source: Schema
    public let destination: Schema
    /// One mapping per destination entity (declaration order), then one per removed source entity.
    public let entities: [EntityMappingPlan]

    /// The mapping of the destination entity named `name`.
    public func entity(_ name: String) -> EntityMappingPlan? { entities.first { $0.destinationName == name } }

    /// Whether any entity's records must be rewritten (otherwise the step changes metadata only, plus
    /// index builds and checks).
    public var requiresRewrite: Bool { entities.contains { $0.requiresRewrite } }
}

/// What happens to one entity in a step.
public struct EntityMappingPlan: Sendable, Hashable {
    /// The entity's name in the destination (nil when removed) and in the source (nil when added).
    public let destinationName: String?
    public let sourceName: String?
    /// One per stored destination attribute.
    public let attributes: [AttributeMappingPlan]
    /// Source attributes that no destination attribute takes.
    public let droppedAttributes: [String]
    /// One per destination relationship.
    public let relationships: [RelationshipMappingPlan]
    /// Source relationships that no destination relationship takes.
    public let droppedRelationships: [String]
    /// Indexes to build (attribute names), to drop, and attributes that become unique (checked first).
    public let indexesAdded: [String]
    public let indexesDropped: [String]
    public let uniquenessAdded: [String]

    public var isAdded: Bool { sourceName == nil }
    public var isRemoved: Bool { destinationName == nil }
    public var isRenamed: Bool { sourceName != nil && destinationName != nil && sourceName != destinationName }

    /// Whether every record must be rewritten: a script on the intermediate model sets an attribute. (A widening
    /// is read through a projection; a step that would give an entity more layouts than allowed rewrites it.)
    public var requiresRewrite: Bool { attributes.contains { $0.isScripted } }
}

/// Where a destination attribute's values come from.
public struct AttributeMappingPlan: Sendable, Hashable, CustomStringConvertible {
    public enum Origin: Sendable, Hashable {
        /// The source attribute of that name (the same name, or the name it was renamed from).
        case source(String)
        /// A new attribute: every existing object gets this value (null for an optional attribute).
        case added(Value)
        /// Set by an ``ObjectScript`` of a custom stage; the source attribute it replaces, if any.
        case scripted(previous: String?)
    }

    public let name: String
    public let origin: Origin
    /// A widening conversion applied to every value.
    public let conversion: Conversion?
    /// The value that replaces null (an optional attribute made required with a default).
    public let nullReplacement: Value?
    /// The change of a codable attribute's JSON shape applied to every value (see ``CodableShape``).
    public let reshape: CodableReshape?

    init(name: String, origin: Origin, conversion: Conversion?, nullReplacement: Value?, reshape: CodableReshape? = nil) {
        self.name = name
        self.origin = origin
        self.conversion = conversion
        self.nullReplacement = nullReplacement
        self.reshape = reshape
    }

    public struct Conversion: Sendable, Hashable {
        public let from: AttributeType
        public let to: AttributeType
    }

    public var sourceName: String? { if case .source(let s) = origin { s } else { nil } }
    /// Whether an ``ObjectScript`` sets the attribute.
    public var isScripted: Bool { if case .scripted = origin { true } else { false } }
    public var isRenamed: Bool { sourceName.map { $0 != name } ?? false }
    /// Whether the attribute's values must be rewritten (set by a script). A widening or a reshape is read
    /// through a projection.
    public var requiresRewrite: Bool { isScripted }

    public var description: String {
        switch origin {
        case .added(let v): return "\(name): added (\(v.isNull ? "null" : "default \(v)"))"
        case .scripted(let previous): return "\(name): set by a script" + (previous.map { " from \($0)" } ?? "")
        case .source(let s):
            var parts: [String] = []
            if s != name { parts.append("renamed from \(s)") }
            if let c = conversion { parts.append("widened \(c.from.name) → \(c.to.name)") }
            if let r = reshape { parts.append("reshaped (\(r))") }
            if let r = nullReplacement { parts.append("made required, null → \(r)") }
            return "\(name): " + (parts.isEmpty ? "copied" : parts.joined(separator: ", "))
        }
    }
}

/// Where a destination relationship's links come from.
public struct RelationshipMappingPlan: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    /// The source relationship, or nil when added.
    public let sourceName: String?
    /// The links must be checked against a lower maximum (to-many → to-one) or higher minimum.
    public let checksMaximum: Int?
    public let checksMinimum: Int?
    /// A to-one relationship became to-many.
    public let becameToMany: Bool

    public var description: String {
        guard let s = sourceName else { return "\(name): added (no links)" }
        var parts: [String] = []
        if s != name { parts.append("renamed from \(s)") }
        if becameToMany { parts.append("to-one → to-many") }
        if let m = checksMaximum { parts.append(m == 1 ? "to-many → to-one (checked)" : "at most \(m) (checked)") }
        if let m = checksMinimum { parts.append("at least \(m) (checked)") }
        return "\(name): " + (parts.isEmpty ? "copied" : parts.joined(separator: ", "))
    }
}
