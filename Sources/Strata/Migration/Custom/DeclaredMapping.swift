/// How a declared entity mapping fills one attribute of the objects it creates: from an attribute of the source
/// object, with a constant, or with the first characters of a source text — the expressions an
/// `INSERT … SELECT` or a Core Data property mapping's value expression would use.
///
/// ```swift
/// ["body": .attribute("content"), "title": .prefix(of: "content", length: 4, appending: "..."), "index": .constant(0)]
/// ```
///
/// `attribute` and `prefix` also take a key path of the source version's model type (`.attribute(\V2.Post.content)`).
///
/// ## Topics
/// - ``attribute(_:)``
/// - ``constant(_:)``
/// - ``prefix(of:length:appending:)``
public struct MappedValue: Sendable {
    enum Kind: Sendable {
        case attribute(String)
        case constant(Value)
        case prefix(String, length: Int, suffix: String)
    }
    let kind: Kind

    /// The value of the source object's attribute `name` (source model name), widened when the destination
    /// attribute's type is wider (`Int32` into `Int64`, `Float` into `Double`).
    public static func attribute(_ name: String) -> MappedValue { MappedValue(kind: .attribute(name)) }

    /// The same value for every object.
    public static func constant(_ value: Value) -> MappedValue { MappedValue(kind: .constant(value)) }

    /// The first `length` characters of the source's string attribute `name`, followed by `suffix` (null stays
    /// null): SQL's `substr(name, 1, length) || suffix`, counted in Swift `Character`s as `String.prefix` does.
    public static func prefix(of name: String, length: Int, appending suffix: String = "") -> MappedValue {
        MappedValue(kind: .prefix(name, length: length, suffix: suffix))
    }

    /// The source attribute `name` reads, if any.
    var sourceAttribute: String? {
        switch kind {
        case .attribute(let name), .prefix(let name, _, _): name
        case .constant: nil
        }
    }
}

/// What a declared mapping does: the shapes a custom stage most often has, run by the engine as a streaming copy
/// of records (see <doc:CustomMigrations>).
enum MappingDeclaration: Sendable {
    /// Each source object keeps its (inferred) destination object and gets one new object of `entity`, filled from
    /// `values` and linked to it through `entity`'s relationship `relationship`; with `skippingNil`, source
    /// objects whose attribute of that name is null get none.
    case extract(entity: String, relationship: String, values: [String: MappedValue], skippingNil: String?)
    /// Each source object keeps its destination object, linked through its relationship `relationship` to the one
    /// object of `entity` whose attribute `key` holds the source's attribute `attribute` (created for the first
    /// source object with that value); a null value links nothing.
    case deduplicate(attribute: String, entity: String, key: String, relationship: String, values: [String: MappedValue])
    /// Each source object becomes an object of `entity` with the same identifier: attributes from `values`, else
    /// the source attribute of the same name, else the destination's default.
    case move(entity: String, values: [String: MappedValue])

    /// The destination entity whose objects the declaration creates.
    var createdEntity: String {
        switch self {
        case .extract(let entity, _, _, _), .deduplicate(_, let entity, _, _, _), .move(let entity, _): entity
        }
    }

    /// The values the created objects take (the dedupe's key included).
    var values: [String: MappedValue] {
        switch self {
        case .extract(_, _, let values, _), .move(_, let values): values
        case .deduplicate(let attribute, _, let key, _, let values):
            values.merging([key: .attribute(attribute)]) { _, keyValue in keyValue }
        }
    }

    /// Whether the source object keeps its own destination object (its matched destination entity).
    var keepsSource: Bool {
        if case .move = self { return false }
        return true
    }
}

/// The policy of a declared mapping: never called per object, since the step runner executes its declaration as a
/// streaming copy (`StreamingCopy`); it exists so that a declared mapping is an ``EntityMapping`` like any other.
struct DeclaredPolicy: EntityMigrationPolicy {
    let declaration: MappingDeclaration

    func createDestinationInstances(for source: DynamicObject, in context: InstanceMigrationContext) throws {
        throw StoreError.internalInconsistency("a declared mapping of \(source.entityName) was run object by object")
    }

    func createRelationships(for source: DynamicObject, in context: RelationshipMigrationContext) throws {
        try context.linkInferred(for: source)
    }
}

extension EntityMapping {
    /// Moves attributes of each `source` object into a new related object of `entity` — the posts split:
    /// `content` becomes `Section.body`, each post keeps its other attributes and gets one section. The engine
    /// copies records field by field, with no per-object closure.
    ///
    /// ```swift
    /// .extract("Section", from: "Post", linkedBy: "post",
    ///          values: ["body": .attribute("content"), "title": .prefix(of: "content", length: 4, appending: "..."),
    ///                   "index": .constant(0)],
    ///          skippingNil: "content")
    /// ```
    ///
    /// - Parameters:
    ///   - entity: the destination entity of the new objects.
    ///   - source: the source entity; each object keeps its destination object (same identifier, inferred values).
    ///   - relationship: the relationship of `entity` to the source's destination entity (`Section.post`); its
    ///     inverse is linked too.
    ///   - values: each attribute of `entity` to fill (others take their default, or null).
    ///   - skippingNil: a source attribute that `values` reads: source objects where it is null get no new object.
    /// - Complexity: one read of each source record and two appended records per object.
    public static func extract(_ entity: String, from source: String, linkedBy relationship: String,
                               values: [String: MappedValue], skippingNil: String? = nil) -> EntityMapping {
        declared(source, .extract(entity: entity, relationship: relationship, values: values, skippingNil: skippingNil))
    }

    /// Replaces an attribute of each `source` object by a link to one shared object of `entity` per distinct value
    /// — a lookup table: books' `authorName` becomes one `Author(name:)` per name, each book linked to its author.
    ///
    /// ```swift
    /// .deduplicate("authorName", of: "Book", into: "Author", as: "name", linkedBy: "author")
    /// ```
    ///
    /// The table of values already met lives in the store (in the migration's lookup database), so memory stays
    /// flat and a resumed migration finds every author made before the interruption. A null value links nothing.
    ///
    /// - Parameters:
    ///   - attribute: the source attribute whose values are deduplicated.
    ///   - source: the source entity; each object keeps its destination object.
    ///   - entity: the destination entity of the shared objects.
    ///   - key: the attribute of `entity` that holds the value.
    ///   - relationship: the relationship of the source's destination entity to `entity` (`Book.author`); its
    ///     inverse (`Author.books`) must be to-many.
    ///   - values: other attributes of the shared objects (constants, or read from the first source object met).
    public static func deduplicate(_ attribute: String, of source: String, into entity: String, as key: String,
                                   linkedBy relationship: String, values: [String: MappedValue] = [:]) -> EntityMapping {
        declared(source, .deduplicate(attribute: attribute, entity: entity, key: key, relationship: relationship, values: values))
    }

    /// Moves every object of `source` into `entity`, keeping its identifier. Several moves into one entity merge
    /// entities, a constant telling them apart:
    ///
    /// ```swift
    /// .move("Car", into: "Vehicle", values: ["kind": .constant("car")]),
    /// .move("Truck", into: "Vehicle", values: ["kind": .constant("truck")]),
    /// ```
    ///
    /// Each attribute of `entity` takes its value from `values`, else from the source attribute of the same name,
    /// else its default. The source entity must have no relationships (links are not moved: use a policy).
    public static func move(_ source: String, into entity: String, values: [String: MappedValue] = [:]) -> EntityMapping {
        declared(source, .move(entity: entity, values: values))
    }

    static func declared(_ source: String, _ declaration: MappingDeclaration) -> EntityMapping {
        EntityMapping(source: source, destinations: [declaration.createdEntity], policy: DeclaredPolicy(declaration: declaration))
    }

    /// The declaration of a declared mapping (nil for a policy).
    var declaration: MappingDeclaration? { (policy as? DeclaredPolicy)?.declaration }
}
