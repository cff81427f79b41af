@_exported import Strata

/// Declares a struct as a model type: the schema ``Strata/Entity`` and the record code of its
/// ``Strata/EntityModel`` conformance are generated from its stored properties.
///
/// - Every stored property is an attribute, typed after its Swift type: `Int`/`Int64` (int64), `Int32`,
///   `Int16`, `Double`, `Float`, `Bool`, `String`, `Date`, `Data`, `UUID`, `URL`, `Decimal`; an optional type
///   makes the attribute optional. Other types are stored as `Codable` JSON with `@Field(.codable)` or as their
///   raw value with `@Field(.rawValue)`.
/// - A literal initial value (`var softDelete = false`) is the attribute's default, recorded in the schema.
/// - `ObjectID?` and `[ObjectID]` properties marked `@Related(inverse:)` are to-one and to-many relationships.
/// - A property `objectID: ObjectID?` holds the object's identifier; the macro adds one when the struct has none.
/// - A public struct without an initializer gets a public memberwise initializer (Swift's implicit one is
///   internal), each property's initial value as its default.
///
/// The entity's name is the struct's name unless given: `@Entity("Article")`. `originalName` is the entity's
/// renaming identifier (its name in the previous version); `hashModifier` its version hash modifier.
///
/// ```swift
/// @Entity struct Post {
///     @Field(.unique) var postID: UUID
///     @Field(originalName: "color") var hexColor: String
///     var content: String
///     @Field(.indexed) var date: Date
///     var softDelete: Bool = false
/// }
/// ```
@attached(member, names: named(init), named(objectID), named(entityName), named(entity), named(propertyName), named(write), named(Record))
@attached(extension, conformances: EntityModel, names: named(init))
public macro Entity(_ name: String? = nil, originalName: String? = nil, hashModifier: String? = nil) =
    #externalMacro(module: "StrataMacrosPlugin", type: "EntityMacro")

/// What the schema DSL says of an attribute, for a stored property of an `@Entity` struct:
/// `@Field(.unique)`, `@Field(.indexed, originalName: "color")`, `@Field(.codable("Point3D"))`.
///
/// - Parameters:
///   - options: ``FieldOption``s: unique, indexed, transient, codable, rawValue, preserveValueOnDeletion.
///   - originalName: the attribute's renaming identifier (its name in the previous model version).
///   - hashModifier: a string mixed into the entity's version hash.
@attached(peer)
public macro Field(_ options: FieldOption..., originalName: String? = nil, hashModifier: String? = nil) =
    #externalMacro(module: "StrataMacrosPlugin", type: "FieldMacro")

/// Makes an `ObjectID?` (to-one) or `[ObjectID]` (to-many) property of an `@Entity` struct a relationship.
///
/// Every relationship has an inverse on the destination type. Name it with a key path on one side of each
/// pair, and with the destination type and the inverse's name on the other (Swift cannot resolve two
/// declarations whose attributes each look into the other; the name form is checked by the compiler too,
/// through a key path in the generated code):
///
/// ```swift
/// @Entity struct Post {
///     @Related(inverse: \Section.post, deleteRule: .cascade) var sections: [ObjectID] = []
/// }
/// @Entity struct Section {
///     @Related(to: Post.self, inverse: "sections") var post: ObjectID?
/// }
/// ```
///
/// - Parameters:
///   - inverse: the destination type's property that points back.
///   - deleteRule: what deleting an object does to the objects it links to.
///   - minCount: the fewest objects an object must link to (checked when a write commits).
///   - maxCount: the most objects an object may link to (to-many relationships).
///   - originalName: the relationship's renaming identifier.
///   - hashModifier: a string mixed into the entity's version hash.
@attached(peer)
public macro Related<Destination, Inverse>(
    inverse: KeyPath<Destination, Inverse>, deleteRule: DeleteRule = .nullify, minCount: Int? = nil, maxCount: Int? = nil,
    originalName: String? = nil, hashModifier: String? = nil
) = #externalMacro(module: "StrataMacrosPlugin", type: "RelatedMacro")

/// A relationship whose inverse is named by the destination type and the inverse property's name:
/// `@Related(to: Post.self, inverse: "sections") var post: ObjectID?` (see the key-path form).
@attached(peer)
public macro Related<Destination>(
    to destination: Destination.Type, inverse: String, deleteRule: DeleteRule = .nullify, minCount: Int? = nil,
    maxCount: Int? = nil, originalName: String? = nil, hashModifier: String? = nil
) = #externalMacro(module: "StrataMacrosPlugin", type: "RelatedMacro")

/// An option of ``Field(_:originalName:hashModifier:)``.
public struct FieldOption: Sendable, Hashable {
    let name: String
    let argument: String?

    /// No two objects share a non-null value (implies ``indexed``).
    public static let unique = FieldOption(name: "unique", argument: nil)
    /// An index is kept, for lookups and ranges by value.
    public static let indexed = FieldOption(name: "indexed", argument: nil)
    /// Part of the model but never stored: reads as the property's initial value.
    public static let transient = FieldOption(name: "transient", argument: nil)
    /// Stored as canonical JSON through `Codable`, under the Swift type's name as the shape name.
    public static let codable = FieldOption(name: "codable", argument: nil)
    /// Stored as canonical JSON through `Codable`, under `shapeName` (part of the version hash: give the shape a
    /// new name when it changes, so that stores written with the old shape are migrated).
    public static func codable(_ shapeName: String) -> FieldOption { FieldOption(name: "codable", argument: shapeName) }
    /// A `RawRepresentable` value stored as its raw value (a string or a number).
    public static let rawValue = FieldOption(name: "rawValue", argument: nil)
    /// The value is kept in the change history when an object is deleted: a consumer of the history reads it
    /// from the deletion's tombstone (``Strata/Attribute/preservesValueOnDeletion``, SwiftData's
    /// `preserveValueOnDeletion`).
    public static let preserveValueOnDeletion = FieldOption(name: "preserveValueOnDeletion", argument: nil)
}
