import Foundation
import Strata

/// What a store must hold, computed from the generator's own writes and the history's changes — never read
/// back through Strata.
struct EvolutionOracle: Sendable {
    struct Object: Sendable {
        var entity: Int
        /// Attribute uid → value (`.null` for none).
        var values: [Int: Value]
    }

    /// A link of a relationship pair, kept once, on the pair's side with the smaller uid.
    struct Link: Hashable, Sendable {
        var relationship: Int
        var from: UInt64
        var to: UInt64
    }

    var objects: [UInt64: Object] = [:]
    var links: Set<Link> = []

    /// The identifiers of `entity`'s objects, ascending (a stable order for random picks).
    func ids(of entity: Int) -> [UInt64] { objects.filter { $0.value.entity == entity }.map(\.key).sorted() }

    /// The objects `id` is linked to through the relationship side `r`.
    func related(_ id: UInt64, _ r: EvolvingModel.RelationshipSpec) -> Set<UInt64> {
        if r.uid < r.inverseUID {
            return Set(links.filter { $0.relationship == r.uid && $0.from == id }.map(\.to))
        }
        return Set(links.filter { $0.relationship == r.inverseUID && $0.to == id }.map(\.from))
    }

    mutating func link(_ id: UInt64, _ r: EvolvingModel.RelationshipSpec, to target: UInt64) {
        if r.uid < r.inverseUID {
            links.insert(Link(relationship: r.uid, from: id, to: target))
        } else {
            links.insert(Link(relationship: r.inverseUID, from: target, to: id))
        }
    }

    mutating func delete(_ id: UInt64) {
        objects[id] = nil
        links = links.filter { $0.from != id && $0.to != id }
    }

    /// Applies one version's changes, `model` being the version before.
    mutating func migrate(through changes: [ModelChange], from model: EvolvingModel) {
        for change in changes {
            if case .removeRelationship(let r) = change, let (_, side) = model.relationship(r) {
                let canonical = min(side.uid, side.inverseUID)
                links = links.filter { $0.relationship != canonical }
            }
            for id in objects.keys {
                let entity = objects[id]!.entity
                change.transform(&objects[id]!.values, entity: entity)
            }
        }
    }

    /// Why migrating `from` → `to` must fail: a step the inference refuses anywhere on the route (every step is
    /// inferred before any is run), else the first step whose data breaks a new unique constraint — the step's
    /// version and the error's code.
    func firstFailure(from: Int, to: Int, built: EvolutionHistory.Built) -> (version: Int, code: MigrationError.Code)? {
        if let refused = built.refusedVersion, refused > from, refused <= to { return (refused, .cannotInfer) }
        var state = self
        for k in (from + 1)...to {
            for change in built.applied[k] {
                guard case .setUnique(let e, let a, true) = change else { continue }
                var seen: Set<Value> = []
                for object in state.objects.values where object.entity == e {
                    let value = object.values[a] ?? .null
                    if value != .null, !seen.insert(value).inserted { return (k, .dataCheckFailed) }
                }
            }
            state.migrate(through: built.applied[k], from: built.models[k - 1])
        }
        return nil
    }
}
