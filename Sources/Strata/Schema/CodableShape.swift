/// The keys of a ``AttributeType/codable(_:)`` attribute's JSON object: what lets a migration read values
/// written with an older shape without rewriting them.
///
/// A `Codable` value is stored as canonical JSON, and its type name is what the version hash sees. When a
/// struct gains, loses or renames a property, give it a new type name (so stores are recognised as older)
/// and declare the shape of both versions: a step between them is then inferred, like an entity's
/// attributes — keys matched by name or ``Field/renamingIdentifier``, keys no longer declared removed, new
/// keys filled with their ``Field/defaultValue`` (or left out when optional) — and it changes metadata
/// only: stored values are reshaped when read, and rewritten by the background sweep.
///
/// ```swift
/// // Version 1
/// Attribute("position", .codable("Point2D")).shape(["x": .number, "y": .number, "label": .string])
/// // Version 2: `label` removed, `z` added with 0 for existing values, `y` renamed to `north`.
/// Attribute("position", .codable("Point3D")).shape([
///     .field("x", .number), .field("north", .number).renamed(from: "y"),
///     .field("z", .number).defaultValue(.integer(0)),
/// ])
/// ```
///
/// A shape is migration metadata, like a renaming identifier or a default value: it is not part of the
/// version hash, so it can be declared on a model version that stores already use. Only the top level is
/// described; a change inside a nested object or a change of a key's ``Kind`` needs a custom stage.
/// Models declared with `@Entity` take the shape of a property whose type conforms to
/// ``CodableShapeDescribing``.
public struct CodableShape: Sendable, Hashable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    /// The object's keys, in declaration order.
    public var fields: [Field]

    /// The JSON kind of a key's values.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case string, number, bool, object, array
        /// Any JSON value (no check when the key is matched).
        case any
    }

    /// One key of the object.
    public struct Field: Sendable, Hashable {
        /// The key in the JSON object (the property's coding key).
        public var name: String
        /// The kind of its values.
        public var kind: Kind
        /// Whether values may lack the key (a Swift optional, skipped by synthesized `Encodable` when nil).
        public var isOptional: Bool
        /// The value given to existing values that lack the key when it is added or made required.
        public var defaultValue: JSONValue?
        /// The key's name in the previous shape, if it was renamed.
        public var renamingIdentifier: String?

        /// A key named `name` of values of `kind`.
        public static func field(_ name: String, _ kind: Kind) -> Field {
            Field(name: name, kind: kind, isOptional: false, defaultValue: nil, renamingIdentifier: nil)
        }
        /// The key, optional.
        public func optional() -> Field { var f = self; f.isOptional = true; return f }
        /// The key with a default for existing values.
        public func defaultValue(_ value: JSONValue) -> Field { var f = self; f.defaultValue = value; return f }
        /// The key, renamed from `previousName`.
        public func renamed(from previousName: String) -> Field { var f = self; f.renamingIdentifier = previousName; return f }
    }

    /// A shape with these keys.
    public init(_ fields: [Field]) { self.fields = fields }
    public init(arrayLiteral elements: Field...) { self.init(elements) }
    /// A shape of required keys, sorted by name (`["x": .number, "y": .number]`).
    public init(dictionaryLiteral elements: (String, Kind)...) {
        self.init(elements.sorted { $0.0 < $1.0 }.map { Field.field($0.0, $0.1) })
    }

    /// The key named `name`.
    public func field(named name: String) -> Field? { fields.first { $0.name == name } }

    /// Problems that make the shape unusable (duplicate keys, defaults of the wrong kind).
    var problems: [String] {
        var out: [String] = []
        var seen: Set<String> = []
        for f in fields {
            if !seen.insert(f.name).inserted { out.append("the key \"\(f.name)\" is declared twice") }
            if let d = f.defaultValue, !f.kind.admits(d) {
                out.append("the default of the key \"\(f.name)\" is not a JSON \(f.kind.rawValue)")
            } else if let d = f.defaultValue, (try? d.serialized()) == nil {
                out.append("the default of the key \"\(f.name)\" cannot be written as JSON (a number that is not finite)")
            }
        }
        return out
    }
}

extension CodableShape.Kind {
    /// Whether `value` is a JSON value of this kind (null is admitted by optional keys only, not here).
    func admits(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.any, _), (.string, .string), (.number, .integer), (.number, .number), (.bool, .bool),
             (.object, .object), (.array, .array):
            true
        default:
            false
        }
    }
}

/// A `Codable` type that describes its JSON shape, so that `@Entity` models record it with the attribute
/// that stores it (see ``CodableShape``).
///
/// ```swift
/// struct Point3D: Codable, CodableShapeDescribing {
///     var x: Double, north: Double, z: Double
///     static let codableShape: CodableShape = [
///         .field("x", .number), .field("north", .number).renamed(from: "y"),
///         .field("z", .number).defaultValue(.integer(0)),
///     ]
/// }
/// ```
public protocol CodableShapeDescribing {
    /// The keys of the type's JSON object.
    static var codableShape: CodableShape { get }
}

extension Attribute {
    /// The attribute, with the shape of its ``AttributeType/codable(_:)`` values.
    public func shape(_ shape: CodableShape) -> Attribute { var a = self; a.codableShape = shape; return a }
}
