import Foundation

/// What a step will do: the catalog the store switches to, the staging databases to create, the source
/// databases the switch retires, and the tasks in order. A pure function of the source catalog, the two
/// models, the inferred mapping and the stage.
struct StepPlan {
    var destinationCatalog: Catalog
    var staging: [String]
    var retired: [String]
    var tasks: [MigrationTask]
    /// How each destination entity is produced.
    var kinds: [String: EntityKind]
    /// New non-unique indexes of entities that keep their records: created empty at the switch and built by the
    /// store's maintenance afterwards (writers maintain them meanwhile; queries scan until they are complete).
    var backgroundIndexes: [UInt32] = []
    /// The options the plan was made with, recorded in the journal: a resumed step plans with them again, so
    /// that it finishes the work its journal describes whatever options the resuming process passes.
    var maximumLayouts: Int
    var indexesInBackground: Bool

    enum EntityKind: Equatable {
        /// Same records, new metadata (renames, added/removed attributes, projections).
        case carried
        /// Every record rewritten into a staging database (type widening, scripts).
        case rewritten(source: String)
        /// Created by a custom stage's policies, or a new entity (empty).
        case built
    }
}

enum StepPlanner {
    /// The layouts an entity keeps by default before a step that would add one more rewrites its records
    /// instead (MySQL's INSTANT columns allow 64 row versions).
    static let defaultMaximumLayouts = 64

    static func plan(source: Schema, sourceCatalog: Catalog, destination: Schema, mapping: InferredMapping,
                     stage: MigrationStage?, maximumLayouts: Int = defaultMaximumLayouts,
                     indexesInBackground: Bool = true, buildingIndexes: Set<UInt32> = []) throws -> StepPlan {
        var catalog = sourceCatalog
        catalog.entities = []
        catalog.relationships = []
        catalog.indexes = []
        catalog.garbage = sourceCatalog.garbage
        var staging: [String] = []
        var checks: [MigrationTask] = []
        var rewrites: [MigrationTask] = []
        var indexBuilds: [MigrationTask] = []
        var requiredChecks: [MigrationTask] = []
        var kinds: [String: StepPlan.EntityKind] = [:]
        var backgroundIndexes: [UInt32] = []

        let scripted = Set(stage?.scripts.map(\.entity) ?? [])
        let built = policyBuiltEntities(stage: stage, mapping: mapping)

        // Entities.
        for dest in destination.entities {
            guard let plan = mapping.entity(dest.name) else { continue }
            let sourceEntry = plan.sourceName.flatMap { sourceCatalog.entity(named: $0) }
            if built.contains(dest.name) || sourceEntry == nil {
                let tag = sourceEntry?.tag ?? catalog.allocateTag()
                let stored = dest.storedAttributes
                let database = catalog.databaseName("e", tag: tag)
                staging.append(database)
                catalog.entities.append(Catalog.EntityEntry(
                    tag: tag, name: dest.name, database: database, attributes: stored.map(\.name),
                    layouts: [Catalog.LayoutEntry(layout: RecordLayout(id: 1, fieldTypes: stored.map(\.type)),
                                                  sources: stored.indices.map { .field($0) })],
                    currentLayout: 1))
                kinds[dest.name] = .built
                // Required attributes are validated as policies insert objects; minimum counts can only be
                // checked once every link exists.
                if built.contains(dest.name), dest.relationships.contains(where: { ($0.minCount ?? 0) > 0 }) {
                    requiredChecks.append(.checkRequired(entity: dest.name))
                }
            } else if let sourceEntry, let composed = try? compose(sourceEntry, plan: plan, destination: dest),
                      !scripted.contains(dest.name), !plan.attributes.contains(where: \.isScripted),
                      composed.layouts.count <= max(1, maximumLayouts) {
                // Renames, added and removed attributes, defaults for null, widenings: the records keep their
                // layouts and are read through projections.
                catalog.entities.append(composed)
                kinds[dest.name] = .carried
            } else if let sourceEntry {
                let stored = dest.storedAttributes
                let database = catalog.databaseName("e", tag: sourceEntry.tag)
                staging.append(database)
                let layoutID = (sourceEntry.layouts.map(\.layout.id).max() ?? 0) + 1
                catalog.entities.append(Catalog.EntityEntry(
                    tag: sourceEntry.tag, name: dest.name, database: database, attributes: stored.map(\.name),
                    layouts: [Catalog.LayoutEntry(layout: RecordLayout(id: layoutID, fieldTypes: stored.map(\.type)),
                                                  sources: stored.indices.map { .field($0) })],
                    currentLayout: layoutID))
                kinds[dest.name] = .rewritten(source: sourceEntry.name)
                rewrites.append(.rewrite(entity: dest.name, source: sourceEntry.name))
            }
        }

        // Relationships: a pair keeps its links database when both ends keep their objects' identifiers and
        // both sides come from a pair of the source; otherwise it starts empty (filled by policies).
        for dest in destination.entities {
            guard let entry = catalog.entity(named: dest.name), let plan = mapping.entity(dest.name) else { continue }
            for r in dest.relationships {
                let rplan = plan.relationships.first { $0.name == r.name }
                let inversePlan = mapping.entity(r.destination)?.relationships.first { $0.name == r.inverse }
                let endsKeepIDs = kinds[dest.name] != .built && kinds[r.destination] != .built
                if endsKeepIDs, let sName = rplan?.sourceName, inversePlan?.sourceName != nil,
                   let sEntity = plan.sourceName.flatMap({ sourceCatalog.entity(named: $0) }),
                   let sourceEntry = sourceCatalog.relationship(entityTag: sEntity.tag, name: sName) {
                    catalog.relationships.append(Catalog.RelationshipEntry(tag: sourceEntry.tag, entityTag: entry.tag,
                                                                           name: r.name, database: sourceEntry.database))
                    if let max = rplan?.checksMaximum, let sourceName = plan.sourceName {
                        checks.append(.checkMaximumLinks(entity: sourceName, relationship: sName, maximum: max))
                    }
                    if let min = rplan?.checksMinimum, let sourceName = plan.sourceName {
                        checks.append(.checkMinimumLinks(entity: sourceName, relationship: sName, minimum: min))
                    }
                } else {
                    let tag = catalog.allocateTag()
                    let database = catalog.databaseName("l", tag: tag)
                    staging.append(database)
                    catalog.relationships.append(Catalog.RelationshipEntry(tag: tag, entityTag: entry.tag, name: r.name, database: database))
                }
            }
        }

        // Indexes.
        for dest in destination.entities {
            guard let entry = catalog.entity(named: dest.name), let plan = mapping.entity(dest.name) else { continue }
            let sourceEntry = plan.sourceName.flatMap { sourceCatalog.entity(named: $0) }
            for a in dest.attributes where a.isIndexed {
                let sourceAttribute = plan.attributes.first { $0.name == a.name }?.sourceName
                let reusable = kinds[dest.name] != .built && !scripted.contains(dest.name) && !plan.indexesAdded.contains(a.name)
                // An index the maintenance is still building holds only part of the records: a step that makes it
                // unique builds (and checks) a new one instead of checking that part.
                if reusable, let sourceEntry, let sourceAttribute,
                   let existing = sourceCatalog.index(entityTag: sourceEntry.tag, attribute: sourceAttribute),
                   !(a.isUnique && buildingIndexes.contains(existing.tag)) {
                    catalog.indexes.append(Catalog.IndexEntry(tag: existing.tag, entityTag: entry.tag, attribute: a.name,
                                                              database: existing.database, isUnique: a.isUnique))
                    if a.isUnique && !existing.isUnique {
                        checks.append(.checkUniqueIndex(entity: dest.name, attribute: a.name))
                    }
                } else {
                    let tag = catalog.allocateTag()
                    let database = catalog.databaseName("i", tag: tag)
                    staging.append(database)
                    catalog.indexes.append(Catalog.IndexEntry(tag: tag, entityTag: entry.tag, attribute: a.name,
                                                              database: database, isUnique: a.isUnique))
                    // Objects a stage's policies create are indexed as they are inserted; the records an entity
                    // keeps are indexed in the background (a unique index is checked first, before the switch).
                    if indexesInBackground && kinds[dest.name] == .carried && !a.isUnique {
                        backgroundIndexes.append(tag)
                    } else if kinds[dest.name] != .built {
                        indexBuilds.append(.buildIndex(entity: dest.name, attribute: a.name))
                    }
                }
            }
        }

        // Source databases the destination no longer uses are emptied at the switch.
        let kept = Set(catalog.entities.map(\.database) + catalog.relationships.map(\.database) + catalog.indexes.map(\.database))
        let retired = (sourceCatalog.entities.map(\.database) + sourceCatalog.relationships.map(\.database)
            + sourceCatalog.indexes.map(\.database)).filter { !kept.contains($0) }

        var tasks: [MigrationTask] = []
        if stage?.willMigrate != nil { tasks.append(.willMigrate) }
        tasks += checks
        tasks += rewrites
        for (p, pass) in (stage?.passes ?? []).enumerated() {
            for m in pass.indices { tasks.append(.instances(pass: p, mapping: m)) }
            for m in pass.indices { tasks.append(.relationships(pass: p, mapping: m)) }
        }
        tasks += indexBuilds
        tasks += requiredChecks
        tasks.append(.switchOver)
        if stage?.didMigrate != nil { tasks.append(.didMigrate) }
        return StepPlan(destinationCatalog: catalog, staging: staging, retired: retired, tasks: tasks, kinds: kinds,
                        backgroundIndexes: backgroundIndexes, maximumLayouts: maximumLayouts,
                        indexesInBackground: indexesInBackground)
    }

    /// Destination entities created by a stage's policies: each mapping's declared destinations and the
    /// destination entity matching its source entity.
    static func policyBuiltEntities(stage: MigrationStage?, mapping: InferredMapping) -> Set<String> {
        var out: Set<String> = []
        for mappingEntry in (stage?.passes ?? []).flatMap({ $0 }) {
            out.formUnion(mappingEntry.destinationEntities)
            if let matched = mapping.entities.first(where: { $0.sourceName == mappingEntry.sourceEntity })?.destinationName {
                out.insert(matched)
            }
        }
        return out
    }

    /// The metadata-only form of an entity: same records, projections composed with the step's mapping.
    static func compose(_ source: Catalog.EntityEntry, plan: EntityMappingPlan, destination: Entity) throws -> Catalog.EntityEntry {
        let stored = destination.storedAttributes
        var layouts: [Catalog.LayoutEntry] = []
        for l in source.layouts {
            var sources: [FieldSource] = []
            for a in stored {
                guard let m = plan.attributes.first(where: { $0.name == a.name }) else {
                    throw StoreError.internalInconsistency("no mapping for \(destination.name).\(a.name)")
                }
                switch m.origin {
                case .added(let value):
                    sources.append(.constant(value))
                case .scripted:
                    throw StoreError.internalInconsistency("a scripted attribute in a metadata-only step")
                case .source(let s):
                    guard let j = source.attributes.firstIndex(of: s) else {
                        throw StoreError.internalInconsistency("the catalog of \(source.name) has no attribute \(s)")
                    }
                    sources.append(try l.sources[j].composed(with: m, to: a.type))
                }
            }
            layouts.append(Catalog.LayoutEntry(layout: l.layout, sources: sources))
        }
        // Keep writing the current layout if it still holds exactly the destination's attributes.
        var current = source.currentLayout
        if let entry = layouts.first(where: { $0.layout.id == source.currentLayout }), !isDirectBijection(entry, stored) {
            let id = (source.layouts.map(\.layout.id).max() ?? 0) + 1
            layouts.append(Catalog.LayoutEntry(layout: RecordLayout(id: id, fieldTypes: stored.map(\.type)),
                                               sources: stored.indices.map { .field($0) }))
            current = id
        }
        return Catalog.EntityEntry(tag: source.tag, name: destination.name, database: source.database,
                                   attributes: stored.map(\.name), layouts: layouts, currentLayout: current)
    }

    private static func isDirectBijection(_ entry: Catalog.LayoutEntry, _ stored: [Attribute]) -> Bool {
        guard entry.sources.count == entry.layout.fieldTypes.count else { return false }
        var seen = Set<Int>()
        for (a, source) in entry.sources.enumerated() {
            guard case .field(let i) = source, i < entry.layout.fieldTypes.count,
                  entry.layout.fieldTypes[i] == stored[a].type, seen.insert(i).inserted else { return false }
        }
        return true
    }
}
