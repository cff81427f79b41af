/// The objects of the imported entities below a relationship's minimum count, after an import (whose
/// transactions do not check minimum counts: an object is inserted before its links).
enum MinimumCountCheck {
    /// The number of such objects, and the first five.
    static func run(store: Store, schema: Schema, entities: Set<String>) throws -> (total: Int, examples: [ImportSummary.MinimumCountShortfall]) {
        var total = 0
        var examples: [ImportSummary.MinimumCountShortfall] = []
        try store.read { context in
            total = 0
            examples = []
            for e in schema.entities where entities.contains(e.name) {
                let required = e.relationships.filter { ($0.minCount ?? 0) > 0 }
                if required.isEmpty { continue }
                try context.objects(e.name).forEach { object in
                    for r in required {
                        let n = try context.relatedCount(object, r.name)
                        if let min = r.minCount, n < min {
                            total += 1
                            if examples.count < 5 {
                                examples.append(.init(entity: e.name, id: object.id, relationship: r.name, count: n, minimum: min))
                            }
                            break
                        }
                    }
                }
            }
        }
        return (total, examples)
    }
}
