extension InferredMapping {
    /// Infers the mapping from `source` to `destination` — a pure function of the models.
    ///
    /// - Parameters:
    ///   - intermediates: the versions between them in the plan, oldest first; renames made in any of them
    ///     are followed.
    ///   - scriptedEntities: destination entities that a custom stage's ``ObjectScript`` visits: their
    ///     required attributes without defaults and type changes are set by the script on the intermediate
    ///     model instead of being diagnostics.
    ///   - policyEntities: source entities whose objects a custom stage's ``EntityMapping`` creates: their
    ///     destination counterparts are not inferred.
    /// - Throws: ``MigrationError/cannotInfer(source:destination:diagnostics:)`` listing every change that
    ///   needs a custom stage.
    public static func infer(from source: Schema, to destination: Schema, through intermediates: [Schema] = [],
                             scriptedEntities: Set<String> = [], policyEntities: Set<String> = []) throws(MigrationError) -> InferredMapping {
        let matching = NameMatching.chain([source] + intermediates + [destination])
        var diagnostics = matching.ambiguities
        var plans: [EntityMappingPlan] = []
        var claimedSources: Set<String> = []

        for dest in destination.entities {
            guard let sourceName = matching.entities[dest.name], let src = source.entity(named: sourceName) else {
                plans.append(addedEntity(dest))
                continue
            }
            claimedSources.insert(sourceName)
            let quiet = policyEntities.contains(sourceName)
            let scripted = scriptedEntities.contains(dest.name)
            var entityDiagnostics: [MigrationDiagnostic] = []
            let plan = entityPlan(dest: dest, src: src, matching: matching,
                                  scripted: scripted, diagnostics: &entityDiagnostics)
            if !quiet { diagnostics += entityDiagnostics }
            plans.append(plan)
        }
        for src in source.entities where !claimedSources.contains(src.name) {
            plans.append(EntityMappingPlan(
                destinationName: nil, sourceName: src.name, attributes: [],
                droppedAttributes: src.storedAttributes.map(\.name), relationships: [],
                droppedRelationships: src.relationships.map(\.name), indexesAdded: [],
                indexesDropped: src.attributes.filter(\.isIndexed).map(\.name), uniquenessAdded: []))
        }
        guard diagnostics.isEmpty else {
            throw .cannotInfer(source: source.versionIdentifier, destination: destination.versionIdentifier, diagnostics: diagnostics)
        }
        return InferredMapping(source: source, destination: destination, entities: plans)
    }

    /// Why a codable attribute's values cannot be read with the destination's shape.
    enum ShapeProblem: Error {
        /// A shape is not declared on one side.
        case undeclared(String)
        case mismatch(CodableReshape.Change.ShapeMismatch)

        var description: String {
            switch self {
            case .undeclared(let side): "the \(side) shape is not declared"
            case .mismatch(let m): "its shape cannot be inferred: \(m)"
            }
        }
    }

    /// The reshape from a codable source attribute to a codable destination attribute: nil when their shapes
    /// are the same (or the attributes are not codable), a failure when the types differ and the shapes do
    /// not say how.
    static func codableReshape(from source: Attribute, to destination: Attribute) -> Result<CodableReshape?, ShapeProblem> {
        guard case .codable(let from) = source.type, case .codable(let to) = destination.type else { return .success(nil) }
        guard let sourceShape = source.codableShape, let destinationShape = destination.codableShape else {
            if from == to { return .success(nil) }
            return .failure(.undeclared(source.codableShape == nil ? "old" : "new"))
        }
        switch CodableReshape.Change.inferred(from: sourceShape, to: destinationShape) {
        case .success(let change):
            // An empty reshape still reads a field stored under the old type name.
            let reshape = CodableReshape(changes: [change])
            return .success(reshape.isEmpty && from == to ? nil : reshape)
        case .failure(let mismatch):
            return .failure(.mismatch(mismatch))
        }
    }

    private static func addedEntity(_ dest: Entity) -> EntityMappingPlan {
        EntityMappingPlan(
            destinationName: dest.name, sourceName: nil,
            attributes: dest.storedAttributes.map { AttributeMappingPlan(name: $0.name, origin: .added($0.initialValue), conversion: nil, nullReplacement: nil) },
            droppedAttributes: [],
            relationships: dest.relationships.map { RelationshipMappingPlan(name: $0.name, sourceName: nil, checksMaximum: nil, checksMinimum: nil, becameToMany: false) },
            droppedRelationships: [], indexesAdded: dest.attributes.filter(\.isIndexed).map(\.name), indexesDropped: [],
            uniquenessAdded: [])
    }

    private static func entityPlan(dest: Entity, src: Entity, matching: NameMatching,
                                   scripted: Bool, diagnostics: inout [MigrationDiagnostic]) -> EntityMappingPlan {
        let attributeMatch = matching.attributes[dest.name] ?? [:]
        var attributes: [AttributeMappingPlan] = []
        var claimed: Set<String> = []
        var indexesAdded: [String] = []
        var indexesDropped: [String] = []
        var uniquenessAdded: [String] = []

        for a in dest.storedAttributes {
            let sa = attributeMatch[a.name].flatMap { src.attribute(named: $0) }.flatMap { $0.isTransient ? nil : $0 }
            guard let sa else {
                if a.isOptional || !(a.defaultValue ?? .null).isNull {
                    attributes.append(AttributeMappingPlan(name: a.name, origin: .added(a.initialValue), conversion: nil, nullReplacement: nil))
                } else if scripted {
                    attributes.append(AttributeMappingPlan(name: a.name, origin: .scripted(previous: nil), conversion: nil, nullReplacement: nil))
                } else {
                    diagnostics.append(.requiredAttributeWithoutDefault(entity: dest.name, attribute: a.name))
                }
                if a.isIndexed { indexesAdded.append(a.name) }
                continue
            }
            claimed.insert(sa.name)
            var conversion: AttributeMappingPlan.Conversion? = nil
            var reshape: CodableReshape? = nil
            let shapes = codableReshape(from: sa, to: a)
            if case .success(let r) = shapes { reshape = r }
            // A reshaped codable attribute is read through its reshape; any other type change is a widening,
            // a script's, or a diagnostic.
            if sa.type != a.type && reshape == nil {
                if sa.type.widens(to: a.type) {
                    conversion = .init(from: sa.type, to: a.type)
                } else if scripted {
                    attributes.append(AttributeMappingPlan(name: a.name, origin: .scripted(previous: sa.name), conversion: nil, nullReplacement: nil))
                    if a.isIndexed { indexesAdded.append(a.name) }
                    if sa.isIndexed { indexesDropped.append(sa.name) }
                    continue
                } else if case .codable(let from) = sa.type, case .codable(let to) = a.type, case .failure(let why) = shapes {
                    diagnostics.append(.codableShapeChanged(entity: dest.name, attribute: a.name, from: from, to: to, reason: why.description))
                    continue
                } else {
                    diagnostics.append(.attributeTypeChanged(entity: dest.name, attribute: a.name, from: sa.type.name, to: a.type.name))
                    continue
                }
            }
            var nullReplacement: Value? = nil
            if sa.isOptional && !a.isOptional {
                if let d = a.defaultValue, !d.isNull {
                    nullReplacement = d
                } else if !scripted {
                    diagnostics.append(.attributeMadeRequiredWithoutDefault(entity: dest.name, attribute: a.name))
                    continue
                }
                // In a scripted entity the script sees the attribute, optional, with its old values, and
                // fills the nulls; required values are checked after the script.
            }
            attributes.append(AttributeMappingPlan(name: a.name, origin: .source(sa.name), conversion: conversion,
                                                   nullReplacement: nullReplacement, reshape: reshape))
            // Indexes: keys of integers of any width are the same; integer → double and reshaped JSON change them,
            // and so does a default replacing null (nulls are not indexed: the index must now hold them under it).
            let keysChange = (conversion.map { $0.from.isInteger && $0.to == .double } ?? false) || !(reshape?.isEmpty ?? true)
                || nullReplacement != nil
            if a.isIndexed && (!sa.isIndexed || keysChange) { indexesAdded.append(a.name) }
            if sa.isIndexed && (!a.isIndexed || keysChange) { indexesDropped.append(sa.name) }
            if a.isUnique && (!sa.isUnique || keysChange) { uniquenessAdded.append(a.name) }
        }
        let dropped = src.storedAttributes.map(\.name).filter { !claimed.contains($0) }
        for name in dropped where src.attribute(named: name)?.isIndexed == true { indexesDropped.append(name) }

        let relationshipMatch = matching.relationships[dest.name] ?? [:]
        var relationships: [RelationshipMappingPlan] = []
        var claimedRelationships: Set<String> = []
        for r in dest.relationships {
            guard let sName = relationshipMatch[r.name], let sr = src.relationship(named: sName) else {
                if (r.minCount ?? 0) > 0 {
                    diagnostics.append(.relationshipAddedWithMinimum(entity: dest.name, relationship: r.name, minimum: r.minCount ?? 0))
                }
                relationships.append(RelationshipMappingPlan(name: r.name, sourceName: nil, checksMaximum: nil, checksMinimum: nil, becameToMany: false))
                continue
            }
            claimedRelationships.insert(sr.name)
            let expectedSourceDestination = matching.entities[r.destination]
            if expectedSourceDestination != sr.destination {
                diagnostics.append(.relationshipDestinationChanged(entity: dest.name, relationship: r.name,
                                                                   from: sr.destination, to: r.destination))
                continue
            }
            var checksMaximum: Int? = nil
            if let dMax = r.effectiveMaxCount {
                if let sMax = sr.effectiveMaxCount { if dMax < sMax { checksMaximum = dMax } } else { checksMaximum = dMax }
            }
            let checksMinimum: Int? = (r.minCount ?? 0) > (sr.minCount ?? 0) ? r.minCount : nil
            relationships.append(RelationshipMappingPlan(name: r.name, sourceName: sr.name, checksMaximum: checksMaximum,
                                                         checksMinimum: checksMinimum, becameToMany: !sr.isToMany && r.isToMany))
        }
        let droppedRelationships = src.relationships.map(\.name).filter { !claimedRelationships.contains($0) }
        return EntityMappingPlan(
            destinationName: dest.name, sourceName: src.name, attributes: attributes, droppedAttributes: dropped,
            relationships: relationships, droppedRelationships: droppedRelationships,
            indexesAdded: indexesAdded, indexesDropped: indexesDropped, uniquenessAdded: uniquenessAdded)
    }
}
