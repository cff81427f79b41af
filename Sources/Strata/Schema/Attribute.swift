/// A named, typed value that every object of an entity has.
///
/// Attributes are required unless made ``isOptional``. A required attribute added to an entity in a new
/// model version needs a ``defaultValue`` for a lightweight migration to fill existing objects.
///
/// ```swift
/// Attribute("title", .string)
/// Attribute("subtitle", .string).optional()
/// Attribute("softDelete", .bool).defaultValue(false)
/// Attribute("hexColor", .string).renamed(from: "color")
/// Attribute("postID", .uuid).unique()
/// ```
///
/// ## Topics
/// ### Modifiers
/// - ``optional()``
/// - ``defaultValue(_:)``
/// - ``indexed()``
/// - ``unique()``
/// - ``transient()``
/// - ``renamed(from:)``
/// - ``versionHashModifier(_:)``
/// - ``shape(_:)``
/// - ``preservedOnDeletion()``
public struct Attribute: Sendable, Hashable {
    /// The attribute's name, unique among the entity's attributes and relationships.
    public var name: String
    /// The type of its values.
    public var type: AttributeType
    /// Whether objects may leave it unset (``Value/null``).
    public var isOptional: Bool
    /// The value given to new objects that do not set it, and to existing objects when a migration adds the
    /// attribute or makes it required. Not part of the version hash.
    public var defaultValue: Value?
    /// A transient attribute is part of the model but never stored: it reads as its default (or null).
    public var isTransient: Bool
    /// Whether an index is kept, for lookups by value and ordered ranges. Not part of the version hash.
    public var isIndexed: Bool
    /// Whether two objects of the entity may not share a non-null value. Implies ``isIndexed``.
    public var isUnique: Bool
    /// The name this attribute had in the previous model version, if it was renamed.
    public var renamingIdentifier: String?
    /// A string mixed into the version hash, to mark a change that does not alter the layout.
    public var versionHashModifier: String?
    /// The keys of a ``AttributeType/codable(_:)`` attribute's JSON object, which let a change of shape be
    /// inferred (see ``CodableShape``). Not part of the version hash.
    public var codableShape: CodableShape?
    /// Whether the change history keeps the attribute's last value when an object is deleted (its *tombstone*,
    /// as SwiftData's `preserveValueOnDeletion` and Core Data's `preservesValueInHistoryOnDeletion`): a consumer
    /// of ``Store/fetchHistory(after:limit:)`` can then tell which object went (a server identifier, a title).
    /// Not part of the version hash: it changes no stored record.
    public var preservesValueOnDeletion: Bool

    /// Creates an attribute. Use the modifiers for everything but the name and type.
    public init(
        _ name: String,
        _ type: AttributeType,
        isOptional: Bool = false,
        defaultValue: Value? = nil,
        isTransient: Bool = false,
        isIndexed: Bool = false,
        isUnique: Bool = false,
        renamingIdentifier: String? = nil,
        versionHashModifier: String? = nil,
        codableShape: CodableShape? = nil,
        preservesValueOnDeletion: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.isTransient = isTransient
        self.isIndexed = isIndexed || isUnique
        self.isUnique = isUnique
        self.renamingIdentifier = renamingIdentifier
        self.versionHashModifier = versionHashModifier
        self.codableShape = codableShape
        self.preservesValueOnDeletion = preservesValueOnDeletion
    }

    /// The attribute, optional.
    public func optional() -> Attribute { var a = self; a.isOptional = true; return a }
    /// The attribute with a default value.
    public func defaultValue(_ value: Value) -> Attribute { var a = self; a.defaultValue = value; return a }
    /// The attribute, indexed.
    public func indexed() -> Attribute { var a = self; a.isIndexed = true; return a }
    /// The attribute, unique (and indexed).
    public func unique() -> Attribute { var a = self; a.isUnique = true; a.isIndexed = true; return a }
    /// The attribute, transient (never stored).
    public func transient() -> Attribute { var a = self; a.isTransient = true; return a }
    /// The attribute, renamed from `previousName` (its renaming identifier).
    public func renamed(from previousName: String) -> Attribute { var a = self; a.renamingIdentifier = previousName; return a }
    /// The attribute with a version hash modifier.
    public func versionHashModifier(_ modifier: String) -> Attribute { var a = self; a.versionHashModifier = modifier; return a }
    /// The attribute, its value kept in the change history when an object is deleted (see
    /// ``preservesValueOnDeletion``).
    public func preservedOnDeletion() -> Attribute { var a = self; a.preservesValueOnDeletion = true; return a }

    /// The value a new object gets when it does not set the attribute.
    var initialValue: Value { defaultValue ?? .null }
}
