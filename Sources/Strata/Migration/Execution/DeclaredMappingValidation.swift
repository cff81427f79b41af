/// Checks a stage's declared mappings against the step's two models before the step writes anything (it runs when
/// the step is planned: at open, at a resume, and in `explainMigration`): an unknown entity, attribute or
/// relationship, a value of the wrong type, a relationship to the wrong entity or of the wrong cardinality is a
/// ``StoreError/Code-swift.struct/invalidEntityMapping`` that says what is wrong.
struct DeclaredMappingValidation {
    let stage: MigrationStage
    let source: Schema
    let destination: Schema
    let mapping: InferredMapping

    static func validate(_ stage: MigrationStage?, source: Schema, destination: Schema, mapping: InferredMapping) throws {
        guard let stage else { return }
        let validation = DeclaredMappingValidation(stage: stage, source: source, destination: destination, mapping: mapping)
        for m in stage.passes.flatMap({ $0 }) {
            if let declaration = m.declaration { try validation.check(declaration, of: m.sourceEntity) }
        }
    }

    private func check(_ declaration: MappingDeclaration, of sourceName: String) throws {
        func fail(_ problem: String, entity: String? = nil, attribute: String? = nil, relationship: String? = nil) -> StoreError {
            StoreError.invalidEntityMapping(stage: stage.source, stage.destination, mapping: sourceName, problem: problem,
                                            entity: entity, attribute: attribute, relationship: relationship)
        }
        guard let sourceEntity = source.entity(named: sourceName) else {
            throw fail("the source model \(source.versionIdentifier) has no entity \(sourceName)", entity: sourceName)
        }
        let createdName = declaration.createdEntity
        guard let created = destination.entity(named: createdName) else {
            throw fail("the destination model \(destination.versionIdentifier) has no entity \(createdName)", entity: createdName)
        }
        let keptName = mapping.entities.first { $0.sourceName == sourceName }?.destinationName
        if declaration.keepsSource {
            guard let keptName, keptName != createdName else {
                throw fail("\(sourceName) has no entity of its own in \(destination.versionIdentifier) for the new \(createdName) objects to be linked to",
                           entity: sourceName)
            }
        } else if !sourceEntity.relationships.isEmpty {
            throw fail("\(sourceName) has relationships (\(sourceEntity.relationships.map(\.name).joined(separator: ", "))), which a move does not carry; map it with a policy",
                       entity: sourceName, relationship: sourceEntity.relationships[0].name)
        }
        // Objects of a source entity that becomes the created entity would not be carried over (the stage builds the
        // entity): unless a mapping of the stage maps that entity too, refuse rather than drop them.
        let mapped = Set(stage.passes.joined().map(\.sourceEntity))
        if let other = mapping.entities.first(where: { $0.destinationName == createdName && $0.sourceName != nil })?.sourceName,
           other != sourceName, !mapped.contains(other) {
            throw fail("\(createdName) already exists as \(other) in \(source.versionIdentifier), and the stage builds it anew: its objects would be lost. Map \(other) too (a policy, or .move(\"\(other)\", into: \"\(createdName)\"))",
                       entity: createdName)
        }
        // The values of the created objects.
        var values = declaration.values
        if case .move = declaration {
            for a in created.attributes where values[a.name] == nil && !a.isTransient && sourceEntity.attribute(named: a.name) != nil {
                values[a.name] = .attribute(a.name)
            }
        }
        for (name, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let a = created.attribute(named: name), !a.isTransient else {
                throw fail("\(createdName) has no stored attribute \(name)", entity: createdName, attribute: name)
            }
            switch value.kind {
            case .constant(let v):
                if v.isNull {
                    if !a.isOptional { throw fail("\(createdName).\(name) is required and is given the constant null", entity: createdName, attribute: name) }
                } else if a.type.coerce(v) == nil {
                    throw fail("\(createdName).\(name) holds \(a.type) values; the constant \(v) is not one", entity: createdName, attribute: name)
                }
            case .attribute(let s):
                guard let sa = sourceEntity.attribute(named: s), !sa.isTransient else {
                    throw fail("\(sourceName) has no stored attribute \(s) (for \(createdName).\(name))", entity: sourceName, attribute: s)
                }
                guard sa.type == a.type || sa.type.widens(to: a.type) else {
                    throw fail("\(sourceName).\(s) holds \(sa.type) values, which \(createdName).\(name) (\(a.type)) cannot hold",
                               entity: createdName, attribute: name)
                }
            case .prefix(let s, let length, _):
                guard let sa = sourceEntity.attribute(named: s), !sa.isTransient else {
                    throw fail("\(sourceName) has no stored attribute \(s) (for \(createdName).\(name))", entity: sourceName, attribute: s)
                }
                guard sa.type == .string, a.type == .string else {
                    throw fail("a prefix reads and writes strings; \(sourceName).\(s) is \(sa.type) and \(createdName).\(name) is \(a.type)",
                               entity: createdName, attribute: name)
                }
                guard length >= 0 else { throw fail("a prefix of \(length) characters", entity: createdName, attribute: name) }
            }
        }
        for a in created.attributes where !a.isOptional && !a.isTransient && a.defaultValue == nil && values[a.name] == nil {
            throw fail("\(createdName).\(a.name) is required, has no default, and the mapping gives it no value", entity: createdName, attribute: a.name)
        }
        switch declaration {
        case .extract(_, let relationship, _, let skippingNil):
            let r = try self.relationship(relationship, of: created, fail)
            guard r.destination == keptName else {
                throw fail("\(createdName).\(relationship) leads to \(r.destination), not to \(keptName ?? sourceName)", entity: createdName, relationship: relationship)
            }
            if let skip = skippingNil, !values.values.contains(where: { $0.sourceAttribute == skip }) {
                throw fail(sourceEntity.attribute(named: skip) == nil
                           ? "\(sourceName) has no attribute \(skip) (skippingNil)"
                           : "skippingNil names \(sourceName).\(skip), which no value of the mapping reads", entity: sourceName, attribute: skip)
            }
        case .deduplicate(let attribute, _, _, let relationship, _):
            guard sourceEntity.attribute(named: attribute) != nil else {
                throw fail("\(sourceName) has no attribute \(attribute)", entity: sourceName, attribute: attribute)
            }
            var name = relationship
            if let dot = relationship.firstIndex(of: ".") {
                let owner = String(relationship[..<dot])
                name = String(relationship[relationship.index(after: dot)...])
                guard owner == keptName else {
                    throw fail("the relationship \(relationship) is declared by \(owner), not by \(keptName ?? sourceName)", entity: owner, relationship: name)
                }
            }
            guard let keptName, let kept = destination.entity(named: keptName) else { return }
            let r = try self.relationship(name, of: kept, fail)
            guard r.destination == createdName else {
                throw fail("\(keptName).\(name) leads to \(r.destination), not to \(createdName)", entity: keptName, relationship: name)
            }
            if let inverse = created.relationship(named: r.inverse), !inverse.isToMany {
                throw fail("\(createdName).\(inverse.name) is to-one, but several \(keptName) objects can share one \(createdName): make it to-many",
                           entity: createdName, relationship: inverse.name)
            }
        case .move:
            break
        }
    }

    private func relationship(_ name: String, of entity: Entity, _ fail: (String, String?, String?, String?) -> StoreError) throws -> Relationship {
        guard let r = entity.relationship(named: name) else {
            throw fail("\(entity.name) has no relationship \(name)", entity.name, nil, name)
        }
        return r
    }
}
