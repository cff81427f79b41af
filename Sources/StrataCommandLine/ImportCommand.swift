import ArgumentParser
import Foundation
import Strata

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add objects to a store from JSON Lines (a file, or standard input).",
        discussion: """
            Each line is one object: {"entity":"Post","id":12,"attributes":{...},"relationships":{"tags":[3,4]}} \
            — what `strata export` writes. "entity" may be left out with --entity NAME; "id" may be left out \
            for a new ID (given, it is kept: it must not be in use); attributes not given take their default \
            (or null); values use the documented JSON forms, typed by the store's model; relationships are \
            object IDs (to-one: an ID or null; to-many: an array).

            Objects are inserted first, in batches of --batch-size lines, each batch one transaction; links \
            are made in a second pass once every object exists (they wait in a temporary file), so a line \
            may link to an object on a later line. A link already present is kept, so relationships listed on \
            both sides are made once. With --entity NAME, lines of other entities are skipped, and links to \
            objects of other entities that do not exist yet are left out: they are made from the other side \
            when that entity is imported.

            A bad line stops the import with its line number and the reason: the batches before it stay \
            committed (and are reported), nothing of the failing batch is kept.

            Example:
              strata export ./Old.store > all.jsonl && strata import ./New.store all.jsonl
              echo '{"attributes":{"name":"swift"}}' | strata import ./Posts.store --entity Tag
            """)

    @Argument(help: "The store directory (it must exist: see `strata create`).") var store: String
    @Argument(help: ArgumentHelp("The JSON Lines file; standard input when omitted or \"-\".", valueName: "file")) var file: String?
    @Option(help: "Import only objects of this entity; lines without \"entity\" are objects of it.") var entity: String?
    @Option(help: "Lines per transaction.") var batchSize: Int = 10_000

    func validate() throws {
        if batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
    }

    private var source: String { file.flatMap { $0 == "-" ? nil : $0 } ?? "standard input" }

    /// Where a failure happened.
    struct Failure: Sendable {
        var line: Int
        var reason: String
    }

    func run() throws {
        let handle = try StoreAccess.openRecorded(store, readOnly: false)
        defer { handle.close() }
        try StoreAccess.refuseUnfinishedMigration(handle, path: store)
        let schema = handle.schema
        if let entity, schema.entity(named: entity) == nil {
            throw CLIFailure("the store's model has no entity named \(entity); it has \(schema.entities.map(\.name).joined(separator: ", "))")
        }
        let reader = try LineReader(path: file)
        let parser = ObjectLineParser(schema: schema, only: entity)
        let entityNames = schema.entities.map(\.name)
        let spill = try SpillFile()
        let display = ProgressDisplay()
        let start = now()
        let interrupts = Interrupts.install(
            first: "stopping after the current batch… (Ctrl-C again to exit at once)",
            second: "interrupted again, exiting now; the committed batches are kept")
        defer { interrupts.cancel() }

        // Pass 1: objects.
        var batch: [(line: Int, object: ObjectLine.Parsed)] = []
        var committedObjects = 0
        var committedLines = 0
        var perEntityCount = [Int](repeating: 0, count: schema.entities.count)
        var skippedLines = 0
        var linkRecords = 0
        var failure: Failure? = nil

        func commitBatch(through lastLine: Int) -> Failure? {
            if batch.isEmpty {
                committedLines = lastLine
                return nil
            }
            var failing: Failure? = nil
            var assigned: [ObjectID] = []
            do {
                try handle.write { context in
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
                            failing = Failure(line: item.line, reason: Self.reason(error))
                            throw error
                        }
                    }
                }
            } catch {
                return failing ?? Failure(line: batch.last?.line ?? lastLine, reason: Self.reason(error))
            }
            committedObjects += batch.count
            committedLines = lastLine
            for item in batch { perEntityCount[item.object.entityIndex] += 1 }
            // The links wait for the second pass, once every object exists.
            do {
                for (item, id) in zip(batch, assigned) {
                    for link in item.object.links {
                        try spill.write("\(item.line) \(item.object.entityIndex) \(id.rawValue) \(link.relationship) " + link.targets.map(String.init).joined(separator: " "))
                        linkRecords += 1
                    }
                }
            } catch {
                return Failure(line: lastLine, reason: "the objects of lines up to \(lastLine) were committed, but their links could not be kept for the second pass: \(Self.reason(error))")
            }
            display.update(.init(label: "importing objects", completed: committedObjects, total: 0))
            return nil
        }

        // The input is read and parsed a batch ahead, on a thread of its own, while each batch commits here.
        let batches = LineBatches(reader: reader, parser: parser, schema: schema, only: entity, batchSize: batchSize)
        batches.start()
        var interrupted = false
        reading: while true {
            switch batches.next() {
            case .batch(let next):
                skippedLines += next.skipped
                batch = next.objects
                failure = commitBatch(through: next.throughLine)
                // The objects go back to the reading thread, which allocated them, to be freed there.
                batches.giveBack(&batch)
                if failure != nil { break reading }
                if Interrupts.requested {
                    interrupted = true
                    break reading
                }
            case .end(let last):
                skippedLines += last.skipped
                if Interrupts.requested {
                    interrupted = true
                } else {
                    batch = last.objects
                    failure = commitBatch(through: last.throughLine)
                }
                break reading
            case .failure(let partial, let problem):
                // Nothing of the failing line's batch is committed.
                skippedLines += partial.skipped
                failure = problem
                break reading
            }
        }
        batches.stop()
        display.finish()

        // Pass 2: links, once every object exists. After a failed pass 1, the links of the committed
        // lines are still made where their targets exist.
        let linkOutcome = makeLinks(handle: handle, schema: schema, spill: spill, records: linkRecords,
                                    lenientEverywhere: failure != nil || interrupted, display: display)
        display.finish()

        var perEntity: [String: Int] = [:]
        for (i, n) in perEntityCount.enumerated() where n > 0 { perEntity[entityNames[i], default: 0] += n }
        let objectsText = Format.plural(committedObjects, "object")
            + (perEntity.isEmpty ? "" : " (" + perEntity.sorted { $0.key < $1.key }.map { "\($0.key) \(Format.count($0.value))" }.joined(separator: ", ") + ")")
        if skippedLines > 0, let entity {
            Console.error("strata: skipped \(Format.plural(skippedLines, "line")) of other entities than \(entity)")
        }
        if linkOutcome.leftOut > 0 {
            Console.error("strata: left out \(Format.plural(linkOutcome.leftOut, "link")) to objects that do not exist yet (\(linkOutcome.leftOutExamples.joined(separator: "; "))\(linkOutcome.leftOut > linkOutcome.leftOutExamples.count ? "; …" : "")); each is made from its other side when that object is imported")
        }

        if let failure {
            let first = committedLines + 1
            var message = "line \(failure.line) of \(source): \(failure.reason). "
            if committedObjects == 0 {
                message += "Nothing was imported. Fix line \(failure.line) and run the import again"
            } else {
                message += "Committed before it: \(objectsText) from lines 1–\(committedLines), with their links to objects that exist"
                if failure.line >= first {
                    message += failure.line > first ? "; nothing of lines \(first)–\(failure.line) was kept" : "; nothing of line \(failure.line) was kept"
                }
                if let linkFailure = linkOutcome.failure {
                    message += "; making the links of the committed lines stopped at line \(linkFailure.line): \(linkFailure.reason)"
                }
                let command = "strata import \(store)\(entity.map { " --entity \($0)" } ?? "")"
                message += ". Fix line \(failure.line), then import the rest: "
                message += file.map { "`tail -n +\(first) \($0) | \(command)`" } ?? "the input from line \(first) on (`tail -n +\(first) FILE | \(command)`)"
            }
            throw CLIFailure(message)
        }
        if interrupted {
            let command = "strata import \(store)\(entity.map { " --entity \($0)" } ?? "")"
            throw CLIFailure("stopped by Ctrl-C: committed \(objectsText) from lines 1–\(committedLines) of \(source), with their links to objects that exist. Import the rest: " + (file.map { "`tail -n +\(committedLines + 1) \($0) | \(command)`" } ?? "the input from line \(committedLines + 1) on"))
        }
        if let linkFailure = linkOutcome.failure {
            let through = linkOutcome.committedThroughLine
            var message = "line \(linkFailure.line) of \(source): \(linkFailure.reason). "
            message += "The import's \(objectsText) \(committedObjects == 1 ? "is" : "are") committed"
            message += through > 0 ? ", with the links of lines 1–\(through); " : ", without links; "
            message += "no link of the failing batch (lines \(through + 1)–\(linkFailure.line)) was kept. "
            message += "Import the missing object (its line lists the link from its side too), or fix the file and import it into a new store"
            throw CLIFailure(message)
        }

        let elapsed = now() - start
        Console.out("Imported \(objectsText) and \(Format.plural(linkOutcome.made, "relationship entry", "relationship entries")) from \(source) into \(store) in \(Format.duration(elapsed)).")

        // Objects that the model requires to have links (minimum counts) and still have too few.
        // With --entity the other side may come in a later import: then it is a warning.
        let shortfalls = try checkMinimumCounts(handle: handle, schema: schema, entities: Set(perEntity.keys))
        if shortfalls.total > 0, entity != nil {
            Console.error("strata: warning: \(Format.plural(shortfalls.total, "object")) \(shortfalls.total == 1 ? "has" : "have") fewer links than the model requires (\(shortfalls.examples.joined(separator: "; "))\(shortfalls.total > shortfalls.examples.count ? "; …" : "")); import the entities they link to")
        } else if shortfalls.total > 0 {
            throw CLIFailure("the import was committed, but \(Format.plural(shortfalls.total, "object")) \(shortfalls.total == 1 ? "has" : "have") fewer links than the model requires (\(shortfalls.examples.joined(separator: "; "))\(shortfalls.total > shortfalls.examples.count ? "; …" : "")); import the objects they link to, then run `strata verify \(store)`")
        }
    }

    static func reason(_ error: any Error) -> String {
        if let problem = error as? LineProblem { return problem.reason }
        var text = ErrorText.describe(error)
        while text.hasSuffix(".") { text.removeLast() }
        return text
    }

    struct LinkOutcome {
        var made = 0
        var leftOut = 0
        var leftOutExamples: [String] = []
        var committedThroughLine = 0
        var failure: Failure? = nil
    }

    /// Makes the links recorded in `spill`, in batches of about `batchSize` links.
    private func makeLinks(handle: Store, schema: Schema, spill: SpillFile, records: Int, lenientEverywhere: Bool,
                           display: ProgressDisplay) -> LinkOutcome {
        var outcome = LinkOutcome()
        guard records > 0 else { return outcome }
        struct Record {
            var line: Int
            var entity: Entity
            var id: UInt64
            var relationship: Relationship
            var targets: [UInt64]
        }
        let reader: LineReader
        do { reader = try spill.reader() } catch {
            outcome.failure = Failure(line: 0, reason: Self.reason(error))
            return outcome
        }
        var done = 0
        var pending: [Record] = []
        var pendingLinks = 0

        func flush() -> Bool {
            guard !pending.isEmpty else { return true }
            var made = 0
            var leftOut = 0
            var examples: [String] = []
            var failing: Failure? = nil
            do {
                try handle.write { context in
                    context.checksMinimumCountsAtCommit = false
                    made = 0; leftOut = 0; examples = []; failing = nil
                    for record in pending {
                        do {
                            let r = record.relationship
                            for target in record.targets {
                                if try context.object(ObjectID(rawValue: target), of: r.destination) == nil {
                                    let lenient = lenientEverywhere || (entity != nil && r.destination != entity)
                                    guard lenient else {
                                        throw LineProblem("relationship \(r.name): no \(r.destination) object has the ID \(target)")
                                    }
                                    leftOut += 1
                                    if examples.count < 3 {
                                        examples.append("line \(record.line): \(record.entity.name) #\(record.id) \(r.name) → \(r.destination) #\(target)")
                                    }
                                    continue
                                }
                                try context.link(ObjectID(rawValue: record.id), of: record.entity.name, r.name, to: ObjectID(rawValue: target))
                                made += 1
                            }
                        } catch {
                            failing = Failure(line: record.line, reason: Self.reason(error))
                            throw error
                        }
                    }
                }
            } catch {
                outcome.failure = failing ?? Failure(line: pending.last?.line ?? 0, reason: Self.reason(error))
                return false
            }
            outcome.made += made
            outcome.leftOut += leftOut
            for e in examples where outcome.leftOutExamples.count < 3 { outcome.leftOutExamples.append(e) }
            outcome.committedThroughLine = pending.last?.line ?? outcome.committedThroughLine
            done += pending.count
            pending.removeAll(keepingCapacity: true)
            pendingLinks = 0
            display.update(.init(label: "making links", completed: done, total: records))
            return true
        }

        while true {
            let data: Data?
            do { data = try reader.next() } catch {
                outcome.failure = Failure(line: 0, reason: Self.reason(error))
                return outcome
            }
            guard let data else { break }
            let fields = String(decoding: data, as: UTF8.self).split(separator: " ").compactMap { UInt64($0) }
            guard fields.count >= 5, Int(fields[1]) < schema.entities.count else { continue }
            let e = schema.entities[Int(fields[1])]
            guard Int(fields[3]) < e.relationships.count else { continue }
            let record = Record(line: Int(fields[0]), entity: e, id: fields[2], relationship: e.relationships[Int(fields[3])],
                                targets: Array(fields[4...]))
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

    /// Objects of the imported entities below a relationship's minimum count.
    private func checkMinimumCounts(handle: Store, schema: Schema, entities: Set<String>) throws -> (total: Int, examples: [String]) {
        var total = 0
        var examples: [String] = []
        do {
            try handle.read { context in
                for e in schema.entities where entities.contains(e.name) {
                    let required = e.relationships.filter { ($0.minCount ?? 0) > 0 }
                    if required.isEmpty { continue }
                    try context.objects(e.name).forEach { object in
                        for r in required {
                            let n = try context.relatedCount(object, r.name)
                            if let min = r.minCount, n < min {
                                total += 1
                                if examples.count < 5 { examples.append("\(e.name) #\(object.id.rawValue) \(r.name): \(n) of at least \(min)") }
                                break
                            }
                        }
                    }
                }
            }
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: store))
        }
        return (total, examples)
    }
}
