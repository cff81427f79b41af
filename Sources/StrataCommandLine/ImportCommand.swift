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
    @OptionGroup var key: KeyFileOption
    @Argument(help: ArgumentHelp("The JSON Lines file; standard input when omitted or \"-\".", valueName: "file")) var file: String?
    @Option(help: "Import only objects of this entity; lines without \"entity\" are objects of it.") var entity: String?
    @Option(help: "Lines per transaction.") var batchSize: Int = 10_000

    func validate() throws {
        if batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
    }

    private var source: String { file.flatMap { $0 == "-" ? nil : $0 } ?? "standard input" }

    /// `strata import STORE [--entity NAME]`, for the messages that say how to go on.
    private var command: String { "strata import \(store)\(entity.map { " --entity \($0)" } ?? "")" }

    func run() throws {
        let handle = try StoreAccess.openRecorded(store, readOnly: false, key: key)
        defer { handle.close() }
        try StoreAccess.refuseUnfinishedMigration(handle, path: store)
        let schema = handle.schema
        if let entity, schema.entity(named: entity) == nil {
            throw CLIFailure("the store's model has no entity named \(entity); it has \(schema.entities.map(\.name).joined(separator: ", "))")
        }
        let input = try openInput()
        defer { if file.map({ $0 != "-" }) == true { try? input.close() } }
        let display = ProgressDisplay()
        let start = now()
        let interrupts = Interrupts.install(
            first: "stopping after the current batch… (Ctrl-C again to exit at once)",
            second: "interrupted again, exiting now; the committed batches are kept")
        defer { interrupts.cancel() }

        let summary: ImportSummary
        do {
            summary = try handle.importObjects(
                from: input, entity: entity, batchSize: batchSize,
                progress: { display.update(.init(label: $0.phase.rawValue, completed: $0.completed, total: $0.total)) },
                shouldStop: { Interrupts.requested })
        } catch let error as ImportError {
            display.finish()
            warn(about: error.committed)
            if error.kind == .belowMinimumCount {
                reportImported(error.committed, seconds: now() - start)
            }
            throw CLIFailure(message(for: error))
        } catch {
            display.finish()
            throw CLIFailure(ErrorText.describe(error, store: store))
        }
        display.finish()
        warn(about: summary)
        reportImported(summary, seconds: now() - start)
        // With --entity the other side may come in a later import: objects below a minimum count are a warning.
        let short = summary.objectsBelowMinimumCount
        if short > 0 {
            Console.error("strata: warning: \(Format.plural(short, "object")) \(short == 1 ? "has" : "have") fewer links than the model requires (\(Self.examples(summary.belowMinimumCountExamples, of: short))); import the entities they link to")
        }
    }

    /// The file, or standard input.
    private func openInput() throws -> FileHandle {
        guard let path = file, path != "-" else { return FileHandle.standardInput }
        do {
            return try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        } catch {
            throw CLIFailure("cannot read \(path) (\(Self.systemReason(error))); check the path")
        }
    }

    /// The system's words for a failed open (`strerror`), else Foundation's.
    private static func systemReason(_ error: any Error) -> String {
        let nsError = error as NSError
        let posix = nsError.domain == NSPOSIXErrorDomain ? nsError : nsError.userInfo[NSUnderlyingErrorKey] as? NSError
        if let posix, posix.domain == NSPOSIXErrorDomain { return systemMessage(Int32(posix.code)) }
        return ErrorText.oneLine(nsError.localizedDescription)
    }

    /// `3 objects (Tag 3)`
    private static func objectsText(_ summary: ImportSummary) -> String {
        let perEntity = summary.objectsByEntity.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        return Format.plural(summary.objectCount, "object")
            + (perEntity.isEmpty ? "" : " (" + perEntity.map { "\($0.key) \(Format.count($0.value))" }.joined(separator: ", ") + ")")
    }

    /// The first examples, and `; …` when there are more.
    private static func examples(_ items: [some CustomStringConvertible], of total: Int) -> String {
        items.map(\.description).joined(separator: "; ") + (total > items.count ? "; …" : "")
    }

    /// Lines skipped for --entity, links left out.
    private func warn(about summary: ImportSummary) {
        if summary.skippedLines > 0, let entity {
            Console.error("strata: skipped \(Format.plural(summary.skippedLines, "line")) of other entities than \(entity)")
        }
        if summary.linksLeftOut > 0 {
            Console.error("strata: left out \(Format.plural(summary.linksLeftOut, "link")) to objects that do not exist yet (\(Self.examples(summary.linksLeftOutExamples, of: summary.linksLeftOut))); each is made from its other side when that object is imported")
        }
    }

    private func reportImported(_ summary: ImportSummary, seconds: Double) {
        Console.out("Imported \(Self.objectsText(summary)) and \(Format.plural(summary.linksMade, "relationship entry", "relationship entries")) from \(source) into \(store) in \(Format.duration(seconds)).")
    }

    /// The one-line message for a failed import: where, why, what was kept and how to go on.
    private func message(for error: ImportError) -> String {
        let committed = error.committed
        let objectsText = Self.objectsText(committed)
        let committedLines = committed.linesCommitted
        switch error.kind {
        case .stopped:
            return "stopped by Ctrl-C: committed \(objectsText) from lines 1–\(committedLines) of \(source), with their links to objects that exist. Import the rest: "
                + (file.map { "`tail -n +\(committedLines + 1) \($0) | \(command)`" } ?? "the input from line \(committedLines + 1) on")
        case .badLink:
            let through = error.linksCommittedThroughLine
            var message = "line \(error.line) of \(source): \(error.reason). "
            message += "The import's \(objectsText) \(committed.objectCount == 1 ? "is" : "are") committed"
            message += through > 0 ? ", with the links of lines 1–\(through); " : ", without links; "
            message += "no link of the failing batch (lines \(through + 1)–\(error.line)) was kept. "
            message += "Import the missing object (its line lists the link from its side too), or fix the file and import it into a new store"
            return message
        case .belowMinimumCount:
            let short = committed.objectsBelowMinimumCount
            return "the import was committed, but \(Format.plural(short, "object")) \(short == 1 ? "has" : "have") fewer links than the model requires (\(Self.examples(committed.belowMinimumCountExamples, of: short))); import the objects they link to, then run `strata verify \(store)`"
        default:
            // Before any line was read (the temporary file of links cannot be made): the reason alone.
            if error.line == 0 { return error.reason }
            let first = committedLines + 1
            var message = "line \(error.line) of \(source): \(error.reason). "
            if committed.objectCount == 0 {
                return message + "Nothing was imported. Fix line \(error.line) and run the import again"
            }
            message += "Committed before it: \(objectsText) from lines 1–\(committedLines), with their links to objects that exist"
            if error.line >= first {
                message += error.line > first ? "; nothing of lines \(first)–\(error.line) was kept" : "; nothing of line \(error.line) was kept"
            }
            if let linkFailure = error.linkFailure {
                message += "; making the links of the committed lines stopped at line \(linkFailure.line): \(linkFailure.reason)"
            }
            message += ". Fix line \(error.line), then import the rest: "
            message += file.map { "`tail -n +\(first) \($0) | \(command)`" } ?? "the input from line \(first) on (`tail -n +\(first) FILE | \(command)`)"
            return message
        }
    }
}
