import Foundation

/// The automatic intermediate model of a custom stage, for one entity visited by ``ObjectScript``s: the
/// destination's attributes, all optional, plus `__previous_<name>` holding the old value of every attribute
/// whose type changes. Scripts read and write objects of this model; the result must satisfy the
/// destination model.
struct IntermediateModel {
    let entity: Entity
    let binding: EntityBinding
    let plan: EntityMappingPlan

    init(source: Schema, destination: Schema, entity name: String, plan: EntityMappingPlan) throws {
        guard let dest = destination.entity(named: name) else {
            throw StoreError.unknownEntity(name)
        }
        let sourceEntity = plan.sourceName.flatMap { source.entity(named: $0) }
        var attributes: [Attribute] = dest.attributes.map { a in
            var a = a
            a.isOptional = true
            a.isIndexed = false
            a.isUnique = false
            return a
        }
        for m in plan.attributes {
            if case .scripted(let previous?) = m.origin, let old = sourceEntity?.attribute(named: previous) {
                attributes.append(Attribute(ObjectScript.previousValueName(of: m.name), old.type, isOptional: true))
            }
        }
        let entity = Entity(name, attributes: attributes, relationships: [])
        let schema = Schema(unchecked: "\(source.versionIdentifier)→\(destination.versionIdentifier) intermediate", entities: [entity])
        var catalog = Catalog()
        catalog.addEntity(entity)
        guard let database = catalog.entities.first?.database else {
            throw StoreError.internalInconsistency("the intermediate model of \(name) has no database")
        }
        do {
            binding = try EntityBinding(position: 0, entity: entity, schema: schema, catalog: catalog,
                                        entityIndex: [name: 0], handles: [database: 0])
        } catch {
            throw StoreError.internalInconsistency("the intermediate model of \(name): \(error.reason)")
        }
        self.entity = entity
        self.plan = plan
    }

    /// The intermediate object for a source object.
    func object(id: UInt64, sourceValues: [Value], sourceBinding: EntityBinding) throws -> DynamicObject {
        var values = binding.initialValues.withOwnStorage()
        for (i, a) in entity.attributes.enumerated() {
            guard let m = plan.attributes.first(where: { $0.name == a.name }) else { continue }
            switch m.origin {
            case .added(let v):
                values[i] = v
            case .scripted(let previous):
                values[i] = .null
                if let previous, let p = sourceBinding.position(of: previous),
                   let slot = binding.position(of: ObjectScript.previousValueName(of: a.name)) {
                    values[slot] = sourceValues[p]
                }
            case .source(let s):
                guard let p = sourceBinding.position(of: s) else { continue }
                var v = Widening.convert(sourceValues[p], m.conversion)
                if v.isNull, let r = m.nullReplacement { v = r }
                values[i] = v
            }
        }
        return DynamicObject(id: ObjectID(rawValue: id), binding: binding, values: values)
    }

    /// The destination values of a scripted object.
    func destinationValues(of object: DynamicObject, destination: EntityBinding) throws -> [Value] {
        var row = destination.initialValues.withOwnStorage()
        for (i, name) in destination.attributeNames.enumerated() {
            if let j = binding.position(of: name) { row[i] = object.values[j] }
        }
        return row
    }
}
