/// Finds every problem in a schema (a pure function over the model values).
enum SchemaValidator {
    static func problems(versionIdentifier: String, entities: [Entity]) -> [SchemaProblem] {
        var problems: [SchemaProblem] = []
        if versionIdentifier.isEmpty { problems.append(.emptyVersionIdentifier) }

        var entityNames: [String: Entity] = [:]
        var seenEntityRenames: Set<String> = []
        for (index, entity) in entities.enumerated() {
            checkName(entity.name, location: "entity #\(index + 1)", into: &problems)
            if entityNames[entity.name] != nil {
                problems.append(.duplicateEntity(entity.name))
            } else {
                entityNames[entity.name] = entity
            }
            if let rename = entity.renamingIdentifier {
                if !seenEntityRenames.insert(rename).inserted {
                    problems.append(.duplicateRenamingIdentifier(entity: nil, identifier: rename))
                }
            }
        }

        for entity in entities {
            var propertyNames: Set<String> = []
            var renames: Set<String> = []
            for (index, attribute) in entity.attributes.enumerated() {
                checkName(attribute.name, location: "\(entity.name).attribute #\(index + 1)", into: &problems)
                if !propertyNames.insert(attribute.name).inserted {
                    problems.append(.duplicateProperty(entity: entity.name, name: attribute.name))
                }
                if let rename = attribute.renamingIdentifier, !renames.insert(rename).inserted {
                    problems.append(.duplicateRenamingIdentifier(entity: entity.name, identifier: rename))
                }
                if case .codable(let typeName) = attribute.type, typeName.isEmpty {
                    problems.append(.emptyCodableTypeName(entity: entity.name, attribute: attribute.name))
                }
                if let value = attribute.defaultValue {
                    if value.isNull {
                        if !attribute.isOptional {
                            problems.append(.nullDefaultForRequiredAttribute(entity: entity.name, attribute: attribute.name))
                        }
                    } else if !valueMatches(value, attribute.type) {
                        problems.append(.defaultTypeMismatch(entity: entity.name, attribute: attribute.name,
                                                             expected: attribute.type.name, actual: value.caseName))
                    }
                }
                if let shape = attribute.codableShape {
                    var reasons = shape.problems
                    if case .codable = attribute.type {} else { reasons.insert("only codable attributes have a shape", at: 0) }
                    for reason in reasons {
                        problems.append(.invalidCodableShape(entity: entity.name, attribute: attribute.name, reason: reason))
                    }
                }
                if attribute.isTransient && (attribute.isIndexed || attribute.isUnique) {
                    problems.append(.transientIndexed(entity: entity.name, attribute: attribute.name))
                }
            }
            for (index, relationship) in entity.relationships.enumerated() {
                checkName(relationship.name, location: "\(entity.name).relationship #\(index + 1)", into: &problems)
                if !propertyNames.insert(relationship.name).inserted {
                    problems.append(.duplicateProperty(entity: entity.name, name: relationship.name))
                }
                if let rename = relationship.renamingIdentifier, !renames.insert(rename).inserted {
                    problems.append(.duplicateRenamingIdentifier(entity: entity.name, identifier: rename))
                }
                let countsValid: Bool = {
                    if let min = relationship.minCount, min < 0 { return false }
                    if let max = relationship.maxCount, max < 1 { return false }
                    if let min = relationship.minCount, let max = relationship.maxCount, min > max { return false }
                    if !relationship.isToMany {
                        if let max = relationship.maxCount, max != 1 { return false }
                        if let min = relationship.minCount, min > 1 { return false }
                    }
                    return true
                }()
                if !countsValid {
                    problems.append(.invalidCounts(entity: entity.name, relationship: relationship.name,
                                                   minCount: relationship.minCount, maxCount: relationship.maxCount))
                }
                guard let destination = entityNames[relationship.destination] else {
                    problems.append(.missingDestination(entity: entity.name, relationship: relationship.name,
                                                        destination: relationship.destination))
                    continue
                }
                guard let inverse = destination.relationship(named: relationship.inverse) else {
                    problems.append(.missingInverse(entity: entity.name, relationship: relationship.name,
                                                    inverse: relationship.inverse, destination: destination.name))
                    continue
                }
                if inverse.destination != entity.name || inverse.inverse != relationship.name {
                    problems.append(.inverseMismatch(entity: entity.name, relationship: relationship.name,
                                                     inverse: "\(destination.name).\(inverse.name)",
                                                     pointsTo: "\(inverse.destination).\(inverse.inverse)"))
                }
            }
        }
        return problems
    }

    /// Whether `value` is of `type`: exactly, or a literal that converts without loss (`.defaultValue(0)` on
    /// an Int16 attribute).
    static func valueMatches(_ value: Value, _ type: AttributeType) -> Bool {
        type.holdsExactly(value) || (!value.isNull && type.coerce(value) != nil)
    }

    static func checkName(_ name: String, location: String, into problems: inout [SchemaProblem]) {
        if name.isEmpty { problems.append(.emptyName(location: location)); return }
        if name.hasPrefix("__") { problems.append(.reservedName(name, location: location)); return }
        if !isValidName(name) { problems.append(.invalidName(name, location: location)) }
    }

    static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= 128 else { return false }
        for (i, b) in bytes.enumerated() {
            let letter = (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 95
            let digit = b >= 48 && b <= 57
            if !(letter || (digit && i > 0)) { return false }
        }
        return true
    }
}
