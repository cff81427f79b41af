/// How an older model opens a store that a newer model wrote, without migrating it: possible when every
/// change from the older model to the store's is *additive* — attributes added (optional or with a default),
/// attributes, relationships and entities renamed, entities added, indexes and uniqueness added or removed,
/// defaults changed. Records are not touched: the older model is bound to the store as it is, each entity
/// carrying the newer attributes it does not declare as *kept* attributes after its own, so that
///
/// - its objects read as they always did (renamed properties under their older names);
/// - objects it inserts get the newer attributes' defaults, as a migration would have given them;
/// - objects it updates keep the newer attributes' values — nothing the newer app wrote is lost;
/// - the store's indexes and unique constraints are maintained as the newer model declares them.
///
/// A widening, a reshape, optionality changed either way, a removed attribute, relationship or entity, or a
/// relationship added or changed make the older model unable to open the store (it would read values it
/// cannot hold, or write objects the newer model rejects): it is refused, unchanged, as before.
struct Downgrade {
    /// The older model with the kept attributes of the store's model appended to its entities.
    let schema: Schema
    /// The store's catalog with the older model's names.
    let catalog: Catalog
    /// The older model's entities as it declares them (what its model types are checked against; the kept
    /// attributes come after their attributes).
    let declaredEntities: [String: Entity]

    /// Why an older model cannot open the store.
    struct Refusal: Error, CustomStringConvertible {
        let reasons: [String]
        var description: String { reasons.joined(separator: "; ") }
    }

    /// The binding of `older` to a store at `store` with `catalog`, or why there is none.
    static func make(older: Schema, store: Schema, catalog: Catalog) -> Result<Downgrade, Refusal> {
        let mapping: InferredMapping
        do {
            mapping = try InferredMapping.infer(from: older, to: store)
        } catch {
            return .failure(Refusal(reasons: error.diagnostics.map(\.description)))
        }
        var reasons: [String] = []
        var translated = catalog
        var entities: [Entity] = []
        var declared: [String: Entity] = [:]
        let claimed = Set(mapping.entities.compactMap(\.sourceName))
        for old in older.entities where !claimed.contains(old.name) {
            reasons.append("\(old.name) was removed")
        }
        for plan in mapping.entities {
            guard let oldName = plan.sourceName else { continue }  // added entities are left alone
            guard let newName = plan.destinationName, let new = store.entity(named: newName),
                  let old = older.entity(named: oldName) else {
                reasons.append("\(oldName) was removed")
                continue
            }
            if !plan.droppedAttributes.isEmpty { reasons.append("\(newName) lost \(plan.droppedAttributes.joined(separator: ", "))") }
            if !plan.droppedRelationships.isEmpty { reasons.append("\(newName) lost \(plan.droppedRelationships.joined(separator: ", "))") }
            var attributes = old.attributes
            var names: [String: String] = [:]  // the store's name → the older model's
            var kept: [Attribute] = []
            for m in plan.attributes {
                guard let a = new.attribute(named: m.name) else { continue }
                switch m.origin {
                case .source(let s):
                    guard let o = old.attribute(named: s), let i = attributes.firstIndex(where: { $0.name == s }) else { continue }
                    if m.conversion != nil || m.reshape != nil || o.type != a.type {
                        reasons.append("\(newName).\(a.name) changed type")
                    } else if o.isOptional != a.isOptional {
                        reasons.append("\(newName).\(a.name) became \(a.isOptional ? "optional" : "required")")
                    }
                    // The store's indexes and constraints are maintained as its model declares them.
                    attributes[i].isIndexed = a.isIndexed
                    attributes[i].isUnique = a.isUnique
                    names[a.name] = s
                case .added:
                    var k = a
                    k.renamingIdentifier = nil
                    kept.append(k)
                    names[a.name] = a.name
                case .scripted:
                    reasons.append("\(newName).\(a.name) is set by a script")
                }
            }
            let clashes = kept.filter { k in old.attribute(named: k.name) != nil || old.relationship(named: k.name) != nil }
            for k in clashes { reasons.append("\(newName).\(k.name) is new but \(oldName) has a property of that name") }
            for r in plan.relationships {
                guard let s = r.sourceName, let o = old.relationship(named: s), let n = new.relationship(named: r.name) else {
                    reasons.append("\(newName).\(r.name) is a new relationship")
                    continue
                }
                if o.isToMany != n.isToMany || o.minCount != n.minCount || o.effectiveMaxCount != n.effectiveMaxCount || o.deleteRule != n.deleteRule {
                    reasons.append("\(newName).\(r.name) changed its counts or delete rule")
                }
            }
            guard let e = translated.entities.firstIndex(where: { $0.name == newName }) else {
                reasons.append("the catalog has no entity \(newName)")
                continue
            }
            let tag = translated.entities[e].tag
            translated.entities[e].name = oldName
            translated.entities[e].attributes = translated.entities[e].attributes.map { names[$0] ?? $0 }
            for i in translated.relationships.indices where translated.relationships[i].entityTag == tag {
                if let r = plan.relationships.first(where: { $0.name == translated.relationships[i].name }), let s = r.sourceName {
                    translated.relationships[i].name = s
                }
            }
            for i in translated.indexes.indices where translated.indexes[i].entityTag == tag {
                translated.indexes[i].attribute = names[translated.indexes[i].attribute] ?? translated.indexes[i].attribute
            }
            var entity = old
            entity.attributes = attributes + kept
            entities.append(entity)
            declared[oldName] = old
        }
        // An entity added under a name the older model uses for another one.
        let boundTags = Set(entities.compactMap { e in translated.entity(named: e.name)?.tag })
        for entry in translated.entities where !boundTags.contains(entry.tag) && older.entity(named: entry.name) != nil {
            reasons.append("\(entry.name) is a new entity but the older model has an entity of that name")
        }
        guard reasons.isEmpty else { return .failure(Refusal(reasons: reasons)) }
        let schema: Schema
        do {
            // Entities in the older model's order.
            schema = try Schema(older.versionIdentifier, entities: older.entities.compactMap { o in entities.first { $0.name == o.name } })
        } catch {
            return .failure(Refusal(reasons: error.problems.map(\.description)))
        }
        return .success(Downgrade(schema: schema, catalog: translated, declaredEntities: declared))
    }

    /// Whether `older` could open a store at `store` (the versions ``MigrationExplanation`` lists).
    static func canOpen(older: Schema, store: Schema) -> Bool {
        if older.fingerprint == store.fingerprint { return true }
        return (try? make(older: older, store: store, catalog: Catalog.initial(for: store)).get()) != nil
    }
}
