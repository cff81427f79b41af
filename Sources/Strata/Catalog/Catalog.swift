/// Where a store keeps each entity, relationship and index, and how to read every layout of every entity.
///
/// The catalog is what makes metadata-only migrations possible: records are never rewritten for a rename,
/// an added optional or defaulted attribute, or a removed attribute. Instead each physical layout keeps a
/// *projection*: for every attribute of the current model, where its value comes from (a ``FieldSource``: a
/// field of the layout, that field with a default for null, widened or reshaped, or a constant captured when the
/// migration ran, so a default changed later never rewrites history). New records are written in the entity's
/// current layout.
///
/// Names of LMDB databases carry a generation number, so that a migration can build new databases beside
/// the old ones and switch to them in one transaction.
struct Catalog: Sendable, Equatable {
    var nextTag: UInt32 = 1
    var nextGeneration: UInt32 = 1
    var entities: [EntityEntry] = []
    var relationships: [RelationshipEntry] = []
    var indexes: [IndexEntry] = []
    /// Emptied databases of earlier versions, deleted when the store is next opened by a process.
    var garbage: [String] = []

    struct EntityEntry: Sendable, Equatable {
        var tag: UInt32
        var name: String
        var database: String
        /// Names of the stored attributes, in the order of each layout's `sources`.
        var attributes: [String]
        var layouts: [LayoutEntry]
        /// The layout new records are written in.
        var currentLayout: UInt32

        func layout(_ id: UInt32) -> LayoutEntry? { layouts.first { $0.layout.id == id } }
    }

    struct LayoutEntry: Sendable, Equatable {
        var layout: RecordLayout
        /// For each of the entity's `attributes`, where its value comes from in a record of this layout.
        var sources: [FieldSource]
    }

    struct RelationshipEntry: Sendable, Equatable {
        var tag: UInt32
        var entityTag: UInt32
        var name: String
        var database: String
    }

    struct IndexEntry: Sendable, Equatable {
        var tag: UInt32
        var entityTag: UInt32
        var attribute: String
        var database: String
        var isUnique: Bool
    }

    /// The database where a custom stage records which destination objects each source object became (sorted
    /// duplicates of fixed size, like links): created for a step with entity mappings, dropped with its staging.
    static let associationDatabase = "m.assoc"

    mutating func allocateTag() -> UInt32 {
        defer { nextTag += 1 }
        return nextTag
    }

    mutating func databaseName(_ kind: String, tag: UInt32) -> String {
        defer { nextGeneration += 1 }
        return "\(kind)\(tag)-\(nextGeneration)"
    }

    func entity(named name: String) -> EntityEntry? { entities.first { $0.name == name } }
    func entity(tag: UInt32) -> EntityEntry? { entities.first { $0.tag == tag } }
    func relationship(entityTag: UInt32, name: String) -> RelationshipEntry? {
        relationships.first { $0.entityTag == entityTag && $0.name == name }
    }
    func index(entityTag: UInt32, attribute: String) -> IndexEntry? {
        indexes.first { $0.entityTag == entityTag && $0.attribute == attribute }
    }

    /// Every LMDB database the catalog refers to (live ones and garbage).
    var allDatabases: [String] {
        entities.map(\.database) + relationships.map(\.database) + indexes.map(\.database) + garbage
    }

    /// The catalog of a new store for `schema`.
    static func initial(for schema: Schema) -> Catalog {
        var catalog = Catalog()
        for entity in schema.entities {
            catalog.addEntity(entity)
        }
        for entity in schema.entities {
            guard let tag = catalog.entity(named: entity.name)?.tag else { continue }
            for relationship in entity.relationships {
                catalog.addRelationship(entityTag: tag, name: relationship.name)
            }
            for attribute in entity.attributes where attribute.isIndexed {
                catalog.addIndex(entityTag: tag, attribute: attribute.name, unique: attribute.isUnique)
            }
        }
        return catalog
    }

    /// Adds an entity whose records all use one fresh layout of its stored attributes.
    @discardableResult
    mutating func addEntity(_ entity: Entity) -> UInt32 {
        let tag = allocateTag()
        let stored = entity.storedAttributes
        let layout = RecordLayout(id: 1, fieldTypes: stored.map(\.type))
        entities.append(EntityEntry(
            tag: tag, name: entity.name, database: databaseName("e", tag: tag),
            attributes: stored.map(\.name),
            layouts: [LayoutEntry(layout: layout, sources: stored.indices.map { .field($0) })],
            currentLayout: 1))
        return tag
    }

    mutating func addRelationship(entityTag: UInt32, name: String) {
        let tag = allocateTag()
        relationships.append(RelationshipEntry(tag: tag, entityTag: entityTag, name: name,
                                               database: databaseName("l", tag: tag)))
    }

    mutating func addIndex(entityTag: UInt32, attribute: String, unique: Bool) {
        let tag = allocateTag()
        indexes.append(IndexEntry(tag: tag, entityTag: entityTag, attribute: attribute,
                                  database: databaseName("i", tag: tag), isUnique: unique))
    }
}
