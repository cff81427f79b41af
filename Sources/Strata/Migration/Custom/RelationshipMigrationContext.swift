import Foundation

/// What an ``EntityMigrationPolicy`` can do in the relationship pass: link destination objects.
public final class RelationshipMigrationContext: MigrationContext {
    override class var insertsObjects: Bool { false }

    /// Translates each link of source object `source` into links between the destination objects made from
    /// the two ends, for every source relationship that maps to a destination relationship.
    public func linkInferred(for source: DynamicObject) throws {
        guard let destName = matchedDestination(of: source.entityName),
              let plan = runner.mapping.entity(destName) else { return }
        let destBinding = try runner.destinationForWrites.entity(destName)
        let froms = try destinations(for: source.id, entity: destName)
        for sr in source.binding.relationships {
            guard let rplan = plan.relationships.first(where: { $0.sourceName == sr.name }),
                  let r = destBinding.relationshipIndex[rplan.name].map({ destBinding.relationships[$0] }) else { continue }
            let targetEntity = runner.destination.entities[r.destination].name
            for t in try sourceReader.linkedIDs(source.id.rawValue, sr) {
                for to in try destinations(for: ObjectID(rawValue: t), entity: targetEntity) {
                    for from in froms { try writer.link(destBinding, r, from.rawValue, to.rawValue) }
                }
            }
        }
    }
}
