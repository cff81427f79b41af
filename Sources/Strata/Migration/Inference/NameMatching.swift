/// Which destination entities and properties come from which source ones, following renaming identifiers
/// across a chain of versions (so that v1 → v3 finds a rename made in v2).
struct NameMatching {
    /// Destination entity name → source entity name.
    var entities: [String: String] = [:]
    /// Destination entity name → (destination attribute → source attribute).
    var attributes: [String: [String: String]] = [:]
    /// Destination entity name → (destination relationship → source relationship).
    var relationships: [String: [String: String]] = [:]
    var ambiguities: [MigrationDiagnostic] = []

    /// Matches a chain of schemas, oldest first: the result maps the last schema's names to the first's.
    static func chain(_ schemas: [Schema]) -> NameMatching {
        guard schemas.count >= 2 else { return NameMatching() }
        var result = pair(schemas[0], schemas[1])
        for i in 2..<schemas.count {
            let next = pair(schemas[i - 1], schemas[i])
            var composed = NameMatching()
            composed.ambiguities = result.ambiguities + next.ambiguities
            for (dest, mid) in next.entities {
                guard let src = result.entities[mid] else { continue }
                composed.entities[dest] = src
                var attrs: [String: String] = [:]
                for (d, m) in next.attributes[dest] ?? [:] { if let s = result.attributes[mid]?[m] { attrs[d] = s } }
                composed.attributes[dest] = attrs
                var rels: [String: String] = [:]
                for (d, m) in next.relationships[dest] ?? [:] { if let s = result.relationships[mid]?[m] { rels[d] = s } }
                composed.relationships[dest] = rels
            }
            result = composed
        }
        return result
    }

    /// Matches two consecutive versions. An element matches the source element named by its renaming
    /// identifier; otherwise the one with its own name; otherwise one sharing its renaming identifier
    /// (Core Data's stable identity).
    static func pair(_ source: Schema, _ destination: Schema) -> NameMatching {
        var m = NameMatching()
        let sourceNames = Set(source.entities.map(\.name))
        var claims: [String: [String]] = [:]
        for e in destination.entities {
            if let s = match(name: e.name, renamingIdentifier: e.renamingIdentifier,
                             candidates: source.entities.map { ($0.name, $0.renamingIdentifier) }, available: sourceNames) {
                m.entities[e.name] = s
                claims[s, default: []].append(e.name)
            }
        }
        for (s, claimants) in claims where claimants.count > 1 {
            m.ambiguities.append(.ambiguousRename(entity: nil, source: s, claimedBy: claimants.sorted()))
            for c in claimants where c != s { m.entities[c] = nil }
        }
        for e in destination.entities {
            guard let sName = m.entities[e.name], let se = source.entity(named: sName) else { continue }
            m.attributes[e.name] = matchProperties(
                entity: e.name,
                destination: e.attributes.map { ($0.name, $0.renamingIdentifier) },
                source: se.attributes.map { ($0.name, $0.renamingIdentifier) }, into: &m.ambiguities)
            m.relationships[e.name] = matchProperties(
                entity: e.name,
                destination: e.relationships.map { ($0.name, $0.renamingIdentifier) },
                source: se.relationships.map { ($0.name, $0.renamingIdentifier) }, into: &m.ambiguities)
        }
        return m
    }

    private static func matchProperties(entity: String, destination: [(String, String?)], source: [(String, String?)],
                                        into ambiguities: inout [MigrationDiagnostic]) -> [String: String] {
        let available = Set(source.map(\.0))
        var out: [String: String] = [:]
        var claims: [String: [String]] = [:]
        for (name, rid) in destination {
            if let s = match(name: name, renamingIdentifier: rid, candidates: source, available: available) {
                out[name] = s
                claims[s, default: []].append(name)
            }
        }
        for (s, claimants) in claims where claimants.count > 1 {
            ambiguities.append(.ambiguousRename(entity: entity, source: s, claimedBy: claimants.sorted()))
            for c in claimants where c != s { out[c] = nil }
        }
        return out
    }

    private static func match(name: String, renamingIdentifier: String?, candidates: [(String, String?)],
                              available: Set<String>) -> String? {
        if let rid = renamingIdentifier, available.contains(rid) { return rid }
        if available.contains(name) {
            // The same name, unless another destination element is explicitly renamed from it and this one
            // is itself renamed (then it is a swap, handled by the renaming identifiers).
            if renamingIdentifier == nil || !available.contains(renamingIdentifier ?? "") { return name }
        }
        if let rid = renamingIdentifier, let c = candidates.first(where: { $0.1 == rid }) { return c.0 }
        return nil
    }
}
