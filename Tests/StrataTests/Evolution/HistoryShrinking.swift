import Foundation

extension EvolutionHistory {
    /// A smaller history that still fails: greedily drops whole versions, then single changes, then makes the
    /// store's travel plainer (created at the first version, migrated in one go), keeping each reduction that
    /// still fails, until none does.
    func shrunk(stillFails: (EvolutionHistory) -> Bool) -> EvolutionHistory {
        var current = self
        var reduced = true
        while reduced {
            reduced = false
            var k = current.versions.count - 1
            while k >= 0 {
                if current.versions.count > 2 {
                    var candidate = current
                    candidate.versions.remove(at: k)
                    candidate.createdAt = min(candidate.createdAt, candidate.versions.count - 2)
                    candidate.startAt = min(candidate.startAt, candidate.versions.count - 2)
                    if stillFails(candidate) { current = candidate; reduced = true }
                }
                k = min(k, current.versions.count) - 1
            }
            for v in current.versions.indices {
                var j = current.versions[v].count - 1
                while j >= 0 {
                    if current.versions[v].count > 1 {
                        var candidate = current
                        candidate.versions[v].remove(at: j)
                        if stillFails(candidate) { current = candidate; reduced = true }
                    }
                    j = min(j, current.versions[v].count) - 1
                }
            }
            for simpler in [{ (h: inout EvolutionHistory) in h.createdAt = 0 }, { $0.startAt = $0.createdAt },
                            { $0.mode = .inOneGo }, { $0.keepsRenamingIdentifiers = true }, { $0.repeatsStrings = false }] {
                var candidate = current
                simpler(&candidate)
                if candidate.description != current.description, stillFails(candidate) { current = candidate; reduced = true }
            }
        }
        return current
    }
}
