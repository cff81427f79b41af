import Foundation

/// The import's second pass: makes the links waiting in the ``LinkSpill``, in batches of about `batchSize`
/// links (a batch ends between lines, never inside one), each batch one write transaction.
///
/// A link to an object that does not exist stops the pass as a bad link — unless it is lenient: everywhere
/// after a failed or stopped first pass, and with an `only` entity for links to objects of other entities
/// (made from the other side when that entity is imported). Lenient links are left out and counted.
struct LinkPass {
    let store: Store
    let schema: Schema
    let only: String?
    let batchSize: Int
    let progress: ((InterchangeProgress) -> Void)?

    struct Outcome {
        var made = 0
        var leftOut = 0
        var leftOutExamples: [ImportSummary.LeftOutLink] = []
        /// The links of lines `1...committedThroughLine` are made.
        var committedThroughLine = 0
        var failure: LineFailure? = nil
    }

    func run(_ spill: LinkSpill, lenientEverywhere: Bool) -> Outcome {
        var outcome = Outcome()
        let records = spill.count
        guard records > 0 else { return outcome }
        let reader: LinkSpill.Reader
        do { reader = try spill.reader() } catch {
            outcome.failure = LineFailure(line: 0, reason: error.reason, kind: .badLink)
            return outcome
        }
        var done = 0
        var pending: [LinkSpill.Record] = []
        var pendingLinks = 0

        func flush() -> Bool {
            guard !pending.isEmpty else { return true }
            var made = 0
            var leftOut = 0
            var examples: [ImportSummary.LeftOutLink] = []
            var failing: LineFailure? = nil
            do {
                try store.write { context in
                    context.checksMinimumCountsAtCommit = false
                    made = 0; leftOut = 0; examples = []; failing = nil
                    for record in pending {
                        let entity = schema.entities[record.entity]
                        let r = entity.relationships[record.relationship]
                        do {
                            for target in record.targets {
                                if try context.object(ObjectID(rawValue: target), of: r.destination) == nil {
                                    let lenient = lenientEverywhere || (only != nil && r.destination != only)
                                    guard lenient else {
                                        throw LineProblem("relationship \(r.name): no \(r.destination) object has the ID \(target)")
                                    }
                                    leftOut += 1
                                    if examples.count < 3 {
                                        examples.append(.init(line: record.line, entity: entity.name, id: ObjectID(rawValue: record.id),
                                                              relationship: r.name, destination: r.destination, target: ObjectID(rawValue: target)))
                                    }
                                    continue
                                }
                                try context.link(ObjectID(rawValue: record.id), of: entity.name, r.name, to: ObjectID(rawValue: target))
                                made += 1
                            }
                        } catch {
                            failing = LineFailure(line: record.line, reason: ObjectImport.reason(error), kind: .badLink)
                            throw error
                        }
                    }
                }
            } catch {
                outcome.failure = failing ?? LineFailure(line: pending.last?.line ?? 0, reason: ObjectImport.reason(error), kind: .badLink)
                return false
            }
            outcome.made += made
            outcome.leftOut += leftOut
            for e in examples where outcome.leftOutExamples.count < 3 { outcome.leftOutExamples.append(e) }
            outcome.committedThroughLine = pending.last?.line ?? outcome.committedThroughLine
            done += pending.count
            pending.removeAll(keepingCapacity: true)
            pendingLinks = 0
            progress?(InterchangeProgress(phase: .makingLinks, completed: done, total: records))
            return true
        }

        while true {
            let next: LinkSpill.Record?
            do { next = try reader.next() } catch {
                outcome.failure = LineFailure(line: 0, reason: error.reason, kind: .badLink)
                return outcome
            }
            guard let record = next else { break }
            // Only records this import wrote (positions within the model) are made.
            guard record.entity >= 0, record.entity < schema.entities.count, record.relationship >= 0,
                  record.relationship < schema.entities[record.entity].relationships.count else { continue }
            // A batch ends between lines, never inside one.
            if pendingLinks >= batchSize, let last = pending.last, last.line != record.line {
                if !flush() { return outcome }
            }
            pending.append(record)
            pendingLinks += record.targets.count
        }
        _ = flush()
        return outcome
    }
}
