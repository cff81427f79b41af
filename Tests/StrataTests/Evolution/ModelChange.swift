import Foundation
import Strata

/// One change of a random model history, naming what it changes by `uid` (stable across renames), so that a
/// shrunk history can replay the changes that still apply.
enum ModelChange: Sendable, CustomStringConvertible {
    typealias AttributeSpec = EvolvingModel.AttributeSpec
    typealias RelationshipSpec = EvolvingModel.RelationshipSpec
    typealias EntitySpec = EvolvingModel.EntitySpec

    /// An optional attribute, or a required one with a default.
    case addAttribute(entity: Int, AttributeSpec)
    case removeAttribute(entity: Int, attribute: Int)
    case renameAttribute(entity: Int, attribute: Int, to: String)
    case renameEntity(entity: Int, to: String)
    case renameRelationship(relationship: Int, to: String)
    case makeOptional(entity: Int, attribute: Int)
    /// Optional → required: nulls take `default`.
    case makeRequired(entity: Int, attribute: Int, default: Value)
    case widen(entity: Int, attribute: Int, to: AttributeType)
    case setIndexed(entity: Int, attribute: Int, Bool)
    case setUnique(entity: Int, attribute: Int, Bool)
    case addEntity(EntitySpec)
    /// Both sides of a new relationship.
    case addRelationship(from: Int, RelationshipSpec, to: Int, RelationshipSpec)
    /// Both sides of a relationship.
    case removeRelationship(relationship: Int)
    /// A string attribute becomes an int64 (its UTF-8 length) through a custom stage's object script.
    case retypeByScript(entity: Int, attribute: Int)
    /// The same type change without a stage: the inference must refuse it with a diagnostic.
    case retypeWithoutStage(entity: Int, attribute: Int)
    /// A required attribute without a default and without a stage: refused too.
    case addRequiredWithoutDefault(entity: Int, AttributeSpec)

    /// Whether the change needs a custom stage (its version holds no other change).
    var isCustom: Bool { if case .retypeByScript = self { true } else { false } }

    /// Whether the inference must refuse the change (only a history's last version holds one).
    var isRefused: Bool {
        switch self {
        case .retypeWithoutStage, .addRequiredWithoutDefault: true
        default: false
        }
    }

    /// Applies the change to `model`; false (and `model` unchanged) when it no longer applies, as when a shrunk
    /// history dropped what it changes.
    func apply(to model: inout EvolvingModel) -> Bool {
        switch self {
        case .addAttribute(let e, let spec), .addRequiredWithoutDefault(let e, let spec):
            guard let i = model.entityIndex(e), !model.usedNames.contains(spec.name) else { return false }
            model.entities[i].attributes.append(spec)
        case .removeAttribute(let e, let a):
            guard let i = model.entityIndex(e), model.attribute(e, a) != nil, model.entities[i].attributes.count > 1 else { return false }
            model.entities[i].attributes.removeAll { $0.uid == a }
        case .renameAttribute(let e, let a, let name):
            guard let old = model.attribute(e, a), !model.usedNames.contains(name) else { return false }
            model.updateAttribute(e, a) { $0.renamedFrom = old.name; $0.name = name }
        case .renameEntity(let e, let name):
            guard let i = model.entityIndex(e), !model.usedNames.contains(name) else { return false }
            model.entities[i].renamedFrom = model.entities[i].name
            model.entities[i].name = name
        case .renameRelationship(let r, let name):
            guard let (owner, old) = model.relationship(r), !model.usedNames.contains(name), let i = model.entityIndex(owner.uid),
                  let j = model.entities[i].relationships.firstIndex(where: { $0.uid == r }) else { return false }
            model.entities[i].relationships[j].renamedFrom = old.name
            model.entities[i].relationships[j].name = name
        case .makeOptional(let e, let a):
            guard let old = model.attribute(e, a), !old.optional, !old.unique else { return false }
            model.updateAttribute(e, a) { $0.optional = true }
        case .makeRequired(let e, let a, let value):
            guard let old = model.attribute(e, a), old.optional, Self.type(of: value) == old.type else { return false }
            model.updateAttribute(e, a) { $0.optional = false; $0.defaultValue = value }
        case .widen(let e, let a, let type):
            guard let old = model.attribute(e, a), Self.widenings(of: old.type).contains(type) else { return false }
            model.updateAttribute(e, a) { $0.type = type; $0.defaultValue = $0.defaultValue.map { Self.widen($0, to: type) } }
        case .setIndexed(let e, let a, let on):
            guard let old = model.attribute(e, a), !old.unique, old.indexed != on else { return false }
            model.updateAttribute(e, a) { $0.indexed = on }
        case .setUnique(let e, let a, let on):
            guard let old = model.attribute(e, a), old.unique != on, !on || Self.canBeUnique(old) else { return false }
            model.updateAttribute(e, a) { $0.unique = on }
        case .addEntity(let spec):
            guard model.entityIndex(spec.uid) == nil, !model.usedNames.contains(spec.name) else { return false }
            model.entities.append(spec)
        case .addRelationship(let e1, let r1, let e2, let r2):
            guard let i = model.entityIndex(e1), let j = model.entityIndex(e2), i != j,
                  !model.usedNames.contains(r1.name), !model.usedNames.contains(r2.name) else { return false }
            var r1 = r1, r2 = r2
            r1.destination = e2; r2.destination = e1
            model.entities[i].relationships.append(r1)
            model.entities[j].relationships.append(r2)
        case .removeRelationship(let r):
            guard let (owner, side) = model.relationship(r), let i = model.entityIndex(owner.uid),
                  let j = model.entityIndex(side.destination) else { return false }
            model.entities[i].relationships.removeAll { $0.uid == r }
            model.entities[j].relationships.removeAll { $0.uid == side.inverseUID }
        case .retypeByScript(let e, let a), .retypeWithoutStage(let e, let a):
            guard let old = model.attribute(e, a), old.type == .string, !old.unique else { return false }
            model.updateAttribute(e, a) { $0.type = .int64; $0.defaultValue = $0.defaultValue.map(Self.utf8Length) }
        }
        return true
    }

    /// What the change does to an object's values (the oracle's side of the migration), given the model before it.
    func transform(_ values: inout [Int: Value], entity: Int) {
        switch self {
        case .addAttribute(let e, let spec) where e == entity:
            values[spec.uid] = spec.defaultValue ?? .null
        case .removeAttribute(let e, let a) where e == entity:
            values[a] = nil
        case .makeRequired(let e, let a, let value) where e == entity:
            if values[a] == .null { values[a] = value }
        case .widen(let e, let a, let type) where e == entity:
            values[a] = values[a].map { Self.widen($0, to: type) }
        case .retypeByScript(let e, let a) where e == entity:
            values[a] = values[a].map(Self.utf8Length)
        default:
            break
        }
    }

    /// The widenings the inference supports, by source type.
    static func widenings(of type: AttributeType) -> [AttributeType] {
        switch type {
        case .int16: [.int32, .int64, .double]
        case .int32: [.int64, .double]
        case .int64: [.double]
        case .float: [.double]
        default: []
        }
    }

    static func canBeUnique(_ a: AttributeSpec) -> Bool { !a.optional && (a.type == .string || a.type == .uuid) }

    /// A value widened as a reader of the new type must see it (computed here, not by Strata).
    static func widen(_ value: Value, to type: AttributeType) -> Value {
        switch (value, type) {
        case (.int16(let v), .int32): .int32(Int32(v))
        case (.int16(let v), .int64): .int64(Int64(v))
        case (.int16(let v), .double): .double(Double(v))
        case (.int32(let v), .int64): .int64(Int64(v))
        case (.int32(let v), .double): .double(Double(v))
        case (.int64(let v), .double): .double(Double(v))
        case (.float(let v), .double): .double(Double(v))
        default: value
        }
    }

    /// What the custom stage's script makes of a string.
    static func utf8Length(_ value: Value) -> Value {
        if case .string(let s) = value { return .int64(Int64(s.utf8.count)) }
        return value
    }

    static func type(of value: Value) -> AttributeType? {
        switch value {
        case .int64: .int64
        case .int32: .int32
        case .int16: .int16
        case .double: .double
        case .float: .float
        case .bool: .bool
        case .string: .string
        case .date: .date
        case .data: .data
        case .uuid: .uuid
        case .url: .url
        case .decimal: .decimal
        case .codable: nil
        case .null: nil
        }
    }

    var description: String {
        switch self {
        case .addAttribute(let e, let a):
            "add \(a.optional ? "optional" : "required") \(a.type.name) \(a.name)#\(a.uid) to entity#\(e)"
                + (a.defaultValue.map { " default \($0)" } ?? "") + (a.unique ? " unique" : a.indexed ? " indexed" : "")
        case .removeAttribute(let e, let a): "remove attribute#\(a) of entity#\(e)"
        case .renameAttribute(let e, let a, let name): "rename attribute#\(a) of entity#\(e) to \(name)"
        case .renameEntity(let e, let name): "rename entity#\(e) to \(name)"
        case .renameRelationship(let r, let name): "rename relationship#\(r) to \(name)"
        case .makeOptional(let e, let a): "make attribute#\(a) of entity#\(e) optional"
        case .makeRequired(let e, let a, let value): "make attribute#\(a) of entity#\(e) required, default \(value)"
        case .widen(let e, let a, let type): "widen attribute#\(a) of entity#\(e) to \(type.name)"
        case .setIndexed(let e, let a, let on): "\(on ? "index" : "unindex") attribute#\(a) of entity#\(e)"
        case .setUnique(let e, let a, let on): "\(on ? "make" : "stop making") attribute#\(a) of entity#\(e) unique"
        case .addEntity(let spec):
            "add entity \(spec.name)#\(spec.uid) (" + spec.attributes.map { "\($0.name)#\($0.uid): \($0.type.name)\($0.optional ? "?" : "")" }.joined(separator: ", ") + ")"
        case .addRelationship(let e1, let r1, let e2, let r2):
            "relate entity#\(e1).\(r1.name)#\(r1.uid)\(r1.toMany ? "[]" : "") ↔ entity#\(e2).\(r2.name)#\(r2.uid)\(r2.toMany ? "[]" : "")"
        case .removeRelationship(let r): "remove relationship#\(r) and its inverse"
        case .retypeByScript(let e, let a): "custom stage: attribute#\(a) of entity#\(e) string → int64 (UTF-8 length)"
        case .retypeWithoutStage(let e, let a): "attribute#\(a) of entity#\(e) string → int64 without a stage (refused)"
        case .addRequiredWithoutDefault(let e, let a): "add required \(a.type.name) \(a.name)#\(a.uid) to entity#\(e) without a default (refused)"
        }
    }
}
