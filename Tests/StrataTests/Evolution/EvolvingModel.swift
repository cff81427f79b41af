import Foundation
import Strata

/// A model as the random evolution sees it: entities, attributes and relationships with stable identities
/// (`uid`s, which survive renames), from which each version's dynamic ``Schema`` is built.
struct EvolvingModel: Sendable {
    struct AttributeSpec: Sendable {
        var uid: Int
        var name: String
        var type: AttributeType
        var optional: Bool
        var defaultValue: Value?
        var indexed = false
        var unique = false
        var renamedFrom: String?
    }

    /// One side of a relationship; its inverse is the side with `inverseUID`.
    struct RelationshipSpec: Sendable {
        var uid: Int
        var name: String
        var destination: Int
        var inverseUID: Int
        var toMany: Bool
        var renamedFrom: String?
    }

    struct EntitySpec: Sendable {
        var uid: Int
        var name: String
        var renamedFrom: String?
        var attributes: [AttributeSpec] = []
        var relationships: [RelationshipSpec] = []
    }

    var entities: [EntitySpec] = []

    func entity(_ uid: Int) -> EntitySpec? { entities.first { $0.uid == uid } }
    func entityIndex(_ uid: Int) -> Int? { entities.firstIndex { $0.uid == uid } }

    func attribute(_ entity: Int, _ uid: Int) -> AttributeSpec? {
        self.entity(entity)?.attributes.first { $0.uid == uid }
    }

    func relationship(_ uid: Int) -> (entity: EntitySpec, relationship: RelationshipSpec)? {
        for e in entities { if let r = e.relationships.first(where: { $0.uid == uid }) { return (e, r) } }
        return nil
    }

    mutating func updateAttribute(_ entity: Int, _ uid: Int, _ change: (inout AttributeSpec) -> Void) {
        guard let e = entityIndex(entity), let a = entities[e].attributes.firstIndex(where: { $0.uid == uid }) else { return }
        change(&entities[e].attributes[a])
    }

    /// Every name in use (entities, and properties of each entity), so that new names never repeat one.
    var usedNames: Set<String> {
        var names: Set<String> = []
        for e in entities {
            names.insert(e.name)
            for a in e.attributes { names.insert(a.name) }
            for r in e.relationships { names.insert(r.name) }
        }
        return names
    }

    /// Forgets every renaming identifier (the next version no longer says where its properties came from).
    mutating func forgetRenames() {
        for e in entities.indices {
            entities[e].renamedFrom = nil
            for a in entities[e].attributes.indices { entities[e].attributes[a].renamedFrom = nil }
            for r in entities[e].relationships.indices { entities[e].relationships[r].renamedFrom = nil }
        }
    }

    /// The version's schema, built at run time as an app's schema JSON would describe it.
    func schema(_ version: String) throws -> Schema {
        try Schema(version, entities: entities.map { e in
            var built = Entity(e.name, attributes: e.attributes.map { a in
                var attribute = Attribute(a.name, a.type)
                attribute.isOptional = a.optional
                attribute.defaultValue = a.defaultValue
                attribute.isIndexed = a.indexed || a.unique
                attribute.isUnique = a.unique
                attribute.renamingIdentifier = a.renamedFrom
                return attribute
            }, relationships: e.relationships.map { r in
                var relationship = Relationship(r.name, to: self.entity(r.destination)?.name ?? "?",
                                                inverse: relationshipName(r.inverseUID), toMany: r.toMany)
                relationship.renamingIdentifier = r.renamedFrom
                return relationship
            })
            built.renamingIdentifier = e.renamedFrom
            return built
        })
    }

    private func relationshipName(_ uid: Int) -> String { relationship(uid)?.relationship.name ?? "?" }
}
