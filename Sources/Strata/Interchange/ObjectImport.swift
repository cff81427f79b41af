import Foundation

/// Where and why an import stopped, inside the engine.
struct LineFailure: Sendable {
    var line: Int
    var reason: String
    var kind: ImportError.Kind
}

/// The import of JSON Lines into a store, in two passes:
///
/// 1. *Objects*: the input is read and parsed a batch ahead on a thread of its own (``LineBatches``), and each
///    batch of `batchSize` objects is inserted in one write transaction (``WriteContext/insert(_:id:orderedValues:)``).
///    The links of each committed batch wait in a temporary file (``LinkSpill``).
/// 2. *Links* (``LinkPass``): once every object exists, in batches of about `batchSize` links, so a line may
///    link to an object on a later line. After a failed or stopped first pass, the links of the committed lines
///    are still made where their targets exist.
///
/// Then the objects of the imported entities are checked against their relationships' minimum counts.
struct ObjectImport {
    let store: Store
    let schema: Schema
    /// The entity whose objects are imported (lines without an entity are of it; other lines are skipped).
    let only: String?
    let batchSize: Int
    let progress: ((InterchangeProgress) -> Void)?
    let shouldStop: (() -> Bool)?

    /// - Throws: ``StoreError/unknownEntity(_:)`` when `only` is not an entity of the store's model;
    ///   ``StoreError/closed`` and ``StoreError/readOnly`` for a store that cannot be written.
    init(store: Store, only: String?, batchSize: Int, progress: ((InterchangeProgress) -> Void)?, shouldStop: (() -> Bool)?) throws {
        if store.isClosed { throw StoreError.closed }
        if store.readOnly { throw StoreError.readOnly }
        schema = store.schema
        if let only, schema.entity(named: only) == nil { throw StoreError.unknownEntity(only) }
        self.store = store
        self.only = only
        self.batchSize = max(1, batchSize)
        self.shouldStop = shouldStop
        self.progress = progress
    }

    /// The outcome of the first pass.
    private struct ObjectPass {
        var summary = ImportSummary()
        var perEntity: [Int]
        var failure: LineFailure? = nil
        var stopped = false
    }

    func run(_ input: InputBuffer.Source) throws -> ImportSummary {
        let spill: LinkSpill
        do { spill = try LinkSpill() } catch {
            throw ImportError(.unreadableInput, line: 0, reason: error.reason, committed: ImportSummary())
        }
        let reader: LineReader
        do { reader = try LineReader(input) } catch {
            throw ImportError(.unreadableInput, line: 0, reason: error.reason, committed: ImportSummary())
        }
        var pass = insertObjects(reader, spill: spill)
        for (i, n) in pass.perEntity.enumerated() where n > 0 { pass.summary.objectsByEntity[schema.entities[i].name, default: 0] += n }

        // Pass 2: links, once every object exists; leniently after a failed or stopped first pass.
        let links = LinkPass(store: store, schema: schema, only: only, batchSize: batchSize, progress: progress)
            .run(spill, lenientEverywhere: pass.failure != nil || pass.stopped)
        var summary = pass.summary
        summary.linksMade = links.made
        summary.linksLeftOut = links.leftOut
        summary.linksLeftOutExamples = links.leftOutExamples

        if let failure = pass.failure {
            throw ImportError(failure.kind, line: failure.line, reason: failure.reason, committed: summary,
                              linksCommittedThroughLine: links.committedThroughLine,
                              linkFailure: links.failure.map { ImportError.LinkFailure(line: $0.line, reason: $0.reason) })
        }
        if pass.stopped {
            throw ImportError(.stopped, line: 0, reason: "asked to stop", committed: summary,
                              linksCommittedThroughLine: links.committedThroughLine,
                              linkFailure: links.failure.map { ImportError.LinkFailure(line: $0.line, reason: $0.reason) })
        }
        if let failure = links.failure {
            throw ImportError(failure.kind, line: failure.line, reason: failure.reason, committed: summary,
                              linksCommittedThroughLine: links.committedThroughLine)
        }

        // Objects that the model requires to have links (minimum counts) and still have too few. With an entity,
        // the other side may come in a later import: the summary counts them; without one, it is an error.
        let shortfalls = try MinimumCountCheck.run(store: store, schema: schema, entities: Set(summary.objectsByEntity.keys))
        summary.objectsBelowMinimumCount = shortfalls.total
        summary.belowMinimumCountExamples = shortfalls.examples
        if shortfalls.total > 0 && only == nil {
            let n = shortfalls.total
            let reason = "\(n) \(n == 1 ? "object has" : "objects have") fewer links than the model requires ("
                + shortfalls.examples.map(\.description).joined(separator: "; ") + (n > shortfalls.examples.count ? "; …" : "") + ")"
            throw ImportError(.belowMinimumCount, line: 0, reason: reason, committed: summary,
                              linksCommittedThroughLine: links.committedThroughLine)
        }
        return summary
    }

    /// Pass 1: objects, in batches of `batchSize`, each one transaction.
    private func insertObjects(_ reader: LineReader, spill: LinkSpill) -> ObjectPass {
        let entityNames = schema.entities.map(\.name)
        var pass = ObjectPass(perEntity: [Int](repeating: 0, count: entityNames.count))
        var batch: [(line: Int, object: ObjectLine.Parsed)] = []

        func commitBatch(through lastLine: Int) -> LineFailure? {
            if batch.isEmpty {
                pass.summary.linesCommitted = lastLine
                return nil
            }
            var failing: LineFailure? = nil
            var assigned: [ObjectID] = []
            do {
                try store.write { context in
                    context.checksMinimumCountsAtCommit = false
                    assigned = []
                    failing = nil
                    for item in batch {
                        do {
                            let object = item.object
                            let name = entityNames[object.entityIndex]
                            if let id = object.id {
                                do {
                                    try context.insert(name, id: id, orderedValues: object.values)
                                } catch {
                                    // An ID in use is reported as such, before any other problem of the line.
                                    for e in entityNames where try context.object(id, of: e) != nil {
                                        throw LineProblem("ID \(id.rawValue) is already used by a \(e) object")
                                    }
                                    throw error
                                }
                                assigned.append(id)
                            } else {
                                assigned.append(try context.insert(name, orderedValues: object.values))
                            }
                        } catch {
                            failing = LineFailure(line: item.line, reason: Self.reason(error), kind: .badLine)
                            throw error
                        }
                    }
                }
            } catch {
                return failing ?? LineFailure(line: batch.last?.line ?? lastLine, reason: Self.reason(error), kind: .badLine)
            }
            pass.summary.linesCommitted = lastLine
            for item in batch { pass.perEntity[item.object.entityIndex] += 1 }
            // The links wait for the second pass, once every object exists.
            do {
                for (item, id) in zip(batch, assigned) {
                    for link in item.object.links {
                        try spill.append(line: item.line, entity: item.object.entityIndex, id: id.rawValue,
                                         relationship: link.relationship, targets: link.targets)
                    }
                }
            } catch {
                return LineFailure(line: lastLine, reason: "the objects of lines up to \(lastLine) were committed, but their links could not be kept for the second pass: \(error.reason)",
                                   kind: .unreadableInput)
            }
            progress?(InterchangeProgress(phase: .importingObjects, completed: pass.perEntity.reduce(0, +), total: 0))
            return nil
        }

        // The input is read and parsed a batch ahead, on a thread of its own, while each batch commits here.
        let batches = LineBatches(reader: reader, parser: ObjectLineParser(schema: schema, only: only), schema: schema,
                                  only: only, batchSize: batchSize)
        batches.start()
        defer { batches.stop() }
        while true {
            switch batches.next() {
            case .batch(let next):
                pass.summary.skippedLines += next.skipped
                batch = next.objects
                pass.failure = commitBatch(through: next.throughLine)
                // The objects go back to the reading thread, which allocated them, to be freed there.
                batches.giveBack(&batch)
                if pass.failure != nil { return pass }
                if shouldStop?() == true {
                    pass.stopped = true
                    return pass
                }
            case .end(let last):
                pass.summary.skippedLines += last.skipped
                if shouldStop?() == true {
                    pass.stopped = true
                } else {
                    batch = last.objects
                    pass.failure = commitBatch(through: last.throughLine)
                }
                return pass
            case .failure(let partial, let problem):
                // Nothing of the failing line's batch is committed.
                pass.summary.skippedLines += partial.skipped
                pass.failure = problem
                return pass
            }
        }
    }

    /// A line's problem in one line of text, without a final period.
    static func reason(_ error: any Error) -> String {
        if let problem = error as? LineProblem { return problem.reason }
        var text = String(describing: error).split(whereSeparator: \.isNewline)
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }
}
