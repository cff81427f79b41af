/// Building a ``RecordTranscoder`` from the catalog's entries of an entity before and after a step.
extension RecordTranscoder {
    /// Builds one program per source layout.
    init(source: Catalog.EntityEntry, destination: Catalog.EntityEntry, plan: EntityMappingPlan) throws {
        guard let destLayout = destination.layout(destination.currentLayout)?.layout else {
            throw DecodeFailure("no current layout for \(destination.name)")
        }
        var programs: [UInt32: Program] = [:]
        for l in source.layouts {
            var ops: [Operation] = []
            for (j, name) in destination.attributes.enumerated() {
                guard let m = plan.attributes.first(where: { $0.name == name }) else {
                    throw DecodeFailure("no mapping for \(destination.name).\(name)")
                }
                let type = destLayout.fieldTypes[j]
                switch m.origin {
                case .added(let value):
                    ops.append(.constant(try RecordTranscoder.encode(value, type)))
                case .scripted:
                    throw DecodeFailure("a scripted attribute cannot be transcoded")
                case .source(let s):
                    guard let k = source.attributes.firstIndex(of: s) else {
                        throw DecodeFailure("the catalog of \(source.name) has no attribute \(s)")
                    }
                    ops.append(try l.sources[k].transcoding(m, fieldTypes: l.layout.fieldTypes, to: type))
                }
            }
            programs[l.layout.id] = Program(sourceLayout: l.layout, operations: ops)
        }
        self.init(entityTag: destination.tag, destinationLayout: destLayout, programs: programs)
    }

    /// Rewrites records of an entity's older layouts into its current layout, each attribute taken as the
    /// older layout's projection gives it (the maintenance sweep).
    init(compacting entry: Catalog.EntityEntry) throws {
        guard let current = entry.layout(entry.currentLayout) else { throw DecodeFailure("no current layout for \(entry.name)") }
        var destination = entry
        destination.layouts = [Catalog.LayoutEntry(layout: current.layout, sources: entry.attributes.indices.map { .field($0) })]
        let plan = EntityMappingPlan(
            destinationName: entry.name, sourceName: entry.name,
            attributes: entry.attributes.map { AttributeMappingPlan(name: $0, origin: .source($0), conversion: nil, nullReplacement: nil) },
            droppedAttributes: [], relationships: [], droppedRelationships: [], indexesAdded: [], indexesDropped: [], uniquenessAdded: [])
        try self.init(source: entry, destination: destination, plan: plan)
    }
}
