import ArgumentParser
import Dispatch
import Foundation
import Strata
import Synchronization

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan",
        abstract: "Explain the migration a store would need to reach a model, without running it.",
        discussion: """
            Infers the migration from the model recorded in the store to MODEL.json and prints each step: \
            each entity's mapping (copied, renamed, defaulted, dropped, widened), the indexes built or \
            dropped, the records each step touches, and whether it rewrites records or changes metadata \
            only, the bytes each step writes and the time it takes (estimated from a timed sample of the \
            store's records) — or the diagnostics that say why it cannot be inferred (exit status 1). \
            Nothing is written to the store. With --json, the same as JSON.

            Example:
              strata plan ./Posts.store --to Posts-v4.json
              strata plan ./Posts.store --to Posts-v4.json --json | jq '.steps[] | {destination, estimatedSeconds}'
            """)

    @Argument(help: "The store directory.") var store: String
    @OptionGroup var key: KeyFileOption
    @Option(name: .customLong("to"), help: ArgumentHelp("The destination model, in the schema JSON form.", valueName: "MODEL.json")) var model: String
    @Flag(name: .customLong("rewrite-records"), help: "Rewrite every record into its entity's new layout during the migration, and build new indexes before it ends, instead of changing metadata only (old records read through projections and rewritten in the background).")
    var rewriteRecords = false
    @Flag(help: "Print the explanation as JSON, with each step's estimates.") var json = false

    func run() throws {
        let schema = try StoreAccess.loadModel(model)
        let explanation: MigrationExplanation
        var configuration = try StoreAccess.inspecting(key)
        if rewriteRecords { configuration.migration.rewritesEveryRecord() }
        do {
            explanation = try Store.explainMigration(at: StoreAccess.url(store), schema: schema, plan: nil,
                                                     configuration: configuration)
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: store, modelFile: model))
        }
        var unfinished: StoreInfo.MigrationState? = nil
        if let handle = try? StoreAccess.openRecorded(store, readOnly: true, key: key) {
            unfinished = try? handle.info().migration
            handle.close()
        }
        if json {
            let document = PlanJSON(explanation, destination: schema.versionIdentifier, unfinished: unfinished)
            Console.out(String(decoding: try Format.jsonEncoder().encode(document), as: UTF8.self))
        } else if explanation.isUpToDate {
            Console.out("The store is at \(explanation.storeVersion), the version of \(model): nothing to migrate.")
        } else {
            Console.out(explanation.description)
        }
        if let m = unfinished, !json {
            Console.out("")
            Console.out("An interrupted migration \(m.sourceVersion) → \(m.destinationVersion) is unfinished (task \(m.taskIndex + 1)/\(m.taskCount), \(Format.count(m.completed)) records done); `strata migrate` \(m.destinationVersion == schema.versionIdentifier ? "resumes it" : "to another model rolls it back first").")
        }
        if explanation.isUpToDate, let rotation = explanation.keyRotationText, !json {
            Console.out(rotation + " `strata maintain STORE --key-file NEW --previous-key-file OLD` finishes it now.")
        }
        let blocked = explanation.steps.filter { !$0.diagnostics.isEmpty }
        if !blocked.isEmpty {
            throw CLIFailure("the migration cannot be inferred (\(Format.plural(blocked.flatMap(\.diagnostics).count, "problem")) listed above); change \(model), or migrate in an app with a custom stage")
        }
    }
}

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store in place to a model.",
        discussion: """
            Runs the migration `strata plan` explains, in batches of write transactions. Progress goes to \
            standard error: a bar with records/s and time left on a terminal, plain lines every second \
            otherwise. Ctrl-C (SIGINT) stops after the current batch and says how to resume; a second \
            Ctrl-C exits at once. Running the command again resumes from the last committed batch. Being \
            killed at any instant is safe: the store reads as its old version until the migration completes.

            Example:
              strata migrate ./Posts.store --to Posts-v4.json
              strata migrate ./Posts.store --to Posts-v4.json --batch-size 2000 --backup ./Posts-v3.store
            """)

    @Argument(help: "The store directory.") var store: String
    @OptionGroup var key: KeyFileOption
    @Option(name: .customLong("to"), help: ArgumentHelp("The destination model, in the schema JSON form.", valueName: "MODEL.json")) var model: String
    @Option(help: "Records per batch (one write transaction each); default 10000.") var batchSize: Int?
    @Option(help: ArgumentHelp("Write a compacted copy of the store here before changing anything.", valueName: "DEST")) var backup: String?
    @Flag(name: .customLong("rewrite-records"), help: "Rewrite every record into its entity's new layout during the migration, and build new indexes before it ends, instead of changing metadata only (old records read through projections and rewritten in the background).")
    var rewriteRecords = false

    func validate() throws {
        if let batchSize, batchSize < 1 { throw ValidationError("--batch-size must be at least 1") }
    }

    func run() throws {
        let schema = try StoreAccess.loadModel(model)
        let url = StoreAccess.url(store)
        if let backup, FileManager.default.fileExists(atPath: StoreAccess.url(backup).path) {
            throw CLIFailure("\(backup) already exists; --backup needs the path of a new directory")
        }

        // What is to be done, read-only.
        let route: [String]
        var unfinished: StoreInfo.MigrationState? = nil
        do {
            let handle = try StoreAccess.openRecorded(store, readOnly: true, key: key)
            unfinished = try handle.info().migration
            handle.close()
            route = try Store.migrationRoute(at: url, schema: schema, plan: nil, configuration: try StoreAccess.inspecting(key))
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: store, modelFile: model))
        }
        if route.count <= 1 && unfinished == nil {
            Console.out("The store is at \(route.first ?? schema.versionIdentifier), the version of \(model): nothing to migrate.")
            return
        }
        if let m = unfinished {
            if m.destinationVersion == schema.versionIdentifier {
                Console.error("Resuming the migration \(m.sourceVersion) → \(m.destinationVersion) of \(store) (task \(m.taskIndex + 1)/\(m.taskCount), \(Format.count(m.completed)) records done).")
            } else {
                Console.error("An unfinished migration \(m.sourceVersion) → \(m.destinationVersion) is rolled back first.")
            }
        }
        if route.count > 1 {
            Console.error("Migrating \(store) from \(route.first ?? "?") to \(schema.versionIdentifier). Ctrl-C stops after the current batch; running this again resumes.")
        }

        // SIGINT: stop after the current batch; a second one exits at once (safe by design).
        let interrupts = Interrupts.install(
            first: "stopping after the current batch… (Ctrl-C again to exit at once)",
            second: "interrupted again, exiting now; the store is safe and `strata migrate` resumes it")
        defer { interrupts.cancel() }

        let display = ProgressDisplay()
        var configuration = StoreConfiguration()
        configuration.createIfMissing = false
        configuration.encryption = try key.encryption()
        if let batchSize { configuration.migration.batchSize = batchSize }
        if let backup { configuration.migration.backupDirectory = StoreAccess.url(backup) }
        if rewriteRecords { configuration.migration.rewritesEveryRecord() }
        let last = Mutex<MigrationProgress?>(nil)
        configuration.migration.progress = { p in
            last.withLock { $0 = p }
            if p.phase == .completed { return }
            var label = "step \(p.stepIndex + 1)/\(p.stepCount) \(p.sourceVersion) → \(p.destinationVersion): \(p.phase.rawValue)"
            if p.passCount > 1 { label += " (pass \(p.pass + 1)/\(p.passCount))" }
            if let e = p.entity { label += " \(e)" }
            display.update(.init(label: label, completed: p.completed, total: p.total))
        }
        configuration.migration.shouldStop = { Interrupts.requested }

        let start = now()
        do {
            try Store.migrate(at: url, schema: schema, plan: nil, configuration: configuration)
            display.finish()
            let from = unfinished?.sourceVersion ?? route.first ?? "?"
            Console.out("Migrated \(store) from \(from) to \(schema.versionIdentifier) in \(Format.duration(now() - start)).")
        } catch let error as MigrationError where error.code == .stopped {
            display.finish()
            let at = last.withLock { p in p.map { p -> String in
                "Stopped at \(p.phase.rawValue)\(p.entity.map { " \($0)" } ?? ""): \(Format.count(p.completed))\(p.total > 0 ? "/\(Format.count(p.total))" : "") records. "
            } } ?? ""
            throw CLIFailure(at + ErrorText.describe(error, store: store, modelFile: model))
        } catch {
            display.finish()
            throw CLIFailure(ErrorText.describe(error, store: store, modelFile: model))
        }
    }
}
