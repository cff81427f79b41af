import ArgumentParser
import Foundation
import Strata

struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Describe a store: format, model, entities, sizes, readers and any migration in progress.",
        discussion: """
            Shows the store format and the LMDB version that created it, the model's version identifier and \
            history, each entity with its version hash, object count and layouts, the file and map sizes, \
            pages used, reader slots (and stale readers of dead processes cleared), and the progress of an \
            unfinished migration. Nothing is written to data.mdb.

            Example:
              strata info ./Posts.store
              strata info ./Posts.store --json | jq '.entities[] | {name, objectCount}'
            """)

    @Argument(help: "The store directory.") var store: String
    @OptionGroup var key: KeyFileOption
    @Flag(help: "Print the information as JSON (the fields of StoreInfo).") var json = false

    func run() throws {
        // Open for writing when allowed, so that reader slots of dead processes are cleared (lock.mdb
        // only); fall back to read-only. Neither writes data.mdb.
        let handle: Store
        do {
            handle = try StoreAccess.openRecorded(store, readOnly: false, key: key)
        } catch {
            handle = try StoreAccess.openRecorded(store, readOnly: true, key: key)
        }
        defer { handle.close() }
        let info: StoreInfo
        do { info = try handle.info() } catch { throw CLIFailure(ErrorText.describe(error, store: store)) }
        if json {
            let data = try Format.jsonEncoder().encode(info)
            Console.out(String(decoding: data, as: UTF8.self))
            return
        }
        var lines: [String] = []
        func row(_ key: String, _ value: String) { lines.append(key.padding(toLength: 12, withPad: " ", startingAt: 0) + value) }
        row("Store", info.path)
        row("Format", "\(info.formatVersion)\(info.isEncrypted ? ", encrypted (AES-256-GCM)" : ""), created \(Format.date(info.createdAt)) by Strata \(info.createdByStrata) with LMDB \(info.createdWithLMDB)")
        row("LMDB", "\(info.lmdbVersion) (this tool)")
        row("Model", "\(info.modelVersion) (fingerprint \(info.modelFingerprint.prefix(16))…)")
        row("History", info.history.joined(separator: " → "))
        if info.entities.isEmpty { row("Entities", "none") } else { lines.append("Entities") }
        let nameWidth = max(8, info.entities.map(\.name.count).max() ?? 0)
        var maintenanceLeft = false
        for e in info.entities {
            lines.append("  " + e.name.padding(toLength: nameWidth, withPad: " ", startingAt: 0)
                         + "  \(Format.plural(e.objectCount, "object").padding(toLength: 16, withPad: " ", startingAt: 0))"
                         + "  \(Format.plural(e.layoutCount, "layout"))  hash \(e.versionHash.prefix(16))…")
            // Records still in older layouts (read through projections) and indexes not built yet.
            var notes: [String] = []
            if let old = e.oldLayoutRecords {
                for (layout, n) in old.sorted(by: { $0.key < $1.key }) where n > 0 {
                    notes.append("layout \(layout): \(Format.plural(n, "record")) to rewrite")
                }
            } else if e.layoutCount > 1 {
                notes.append("older layouts: record counts not known (migrated by an earlier Strata)")
            }
            if !e.indexesBuilding.isEmpty { notes.append("index\(e.indexesBuilding.count == 1 ? "" : "es") building: \(e.indexesBuilding.joined(separator: ", "))") }
            if !notes.isEmpty {
                maintenanceLeft = true
                lines.append("  " + String(repeating: " ", count: nameWidth) + "  current layout \(e.currentLayout); " + notes.joined(separator: "; "))
            }
        }
        row("File", "\(ByteCount(info.fileSize)) (\(Format.count(info.fileSize)) bytes)")
        row("Map", "\(ByteCount(info.mapSize)), page size \(info.pageSize), \(Format.count(info.pagesUsed)) pages used")
        row("Readers", "\(info.readersInUse) in use of \(info.maximumReaders), \(info.staleReadersCleared) stale cleared")
        row("Generation", "\(info.generation)")
        row("Maintenance", maintenanceLeft
            ? "work left (done in the background by the app, or now: `strata maintain \(store)`)"
            : "nothing left")
        if let m = info.migration {
            var what = "\(m.sourceVersion) → \(m.destinationVersion) unfinished: task \(m.taskIndex + 1)/\(m.taskCount) \(m.task)"
            what += ", \(Format.count(m.completed))\(m.total.map { "/\(Format.count($0))" } ?? "") records"
            what += ", \(Format.plural(m.batches, "batch", "batches")), started \(Format.date(m.startedAt)) by pid \(m.ownerPID)"
            row("Migration", what)
            lines.append("            the store reads as \(m.sourceVersion); `strata migrate \(store) --to MODEL.json` with the model of \(m.destinationVersion) resumes it")
        } else {
            row("Migration", "none")
        }
        Console.out(lines.joined(separator: "\n"))
    }
}

struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Print the model recorded in a store, in the documented schema JSON form.",
        discussion: """
            The output is the model that wrote the store, exactly as it is recorded; `strata create` and \
            `strata migrate --to` read the same form.

            Example:
              strata schema ./Posts.store > Posts-v3.json
            """)

    @Argument(help: "The store directory.") var store: String
    @OptionGroup var key: KeyFileOption

    func run() throws {
        let handle = try StoreAccess.openRecorded(store, readOnly: true, key: key)
        defer { handle.close() }
        Console.out(String(decoding: handle.schema.jsonData(prettyPrinted: true), as: UTF8.self))
    }
}

struct CreateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create a new, empty store for a model.",
        discussion: """
            MODEL.json is a schema in the documented JSON form (what `strata schema` prints). STORE must not \
            exist (or be an empty directory). The store is built beside STORE and renamed into place, so an \
            interrupted create leaves nothing.

            Example:
              strata create ./Fixtures.store --schema Posts-v3.json
            """)

    @Argument(help: "The new store's directory.") var store: String
    @OptionGroup var key: KeyFileOption
    @Option(name: .long, help: ArgumentHelp("The model, in the schema JSON form.", valueName: "MODEL.json")) var schema: String

    func run() throws {
        let model = try StoreAccess.loadModel(schema)
        let url = StoreAccess.url(store)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            let empty = isDirectory.boolValue && ((try? FileManager.default.contentsOfDirectory(atPath: url.path))?.isEmpty ?? false)
            if !empty { throw CLIFailure("\(store) already exists; give the path of a new store") }
        }
        let parent = url.deletingLastPathComponent().path
        if !FileManager.default.fileExists(atPath: parent, isDirectory: &isDirectory) || !isDirectory.boolValue {
            throw CLIFailure("the directory \(parent) does not exist; create it first (mkdir -p \(parent))")
        }
        do {
            var configuration = StoreConfiguration()
            configuration.encryption = try key.encryption()
            let handle = try Store.open(at: url, schema: model, configuration: configuration)
            handle.close()
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: store, modelFile: schema))
        }
        Console.out("Created \(store) for model \(model.versionIdentifier) (\(Format.plural(model.entities.count, "entity", "entities"))).")
    }
}

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Read every record, link and index entry of a store and list every problem.",
        discussion: """
            Checks record checksums and decoding under the recorded model, required values, relationships \
            and their inverses and counts, indexes and unique constraints, the object counter and the \
            migration state, on one snapshot, read-only. Each problem names its entity and object ID. The \
            exit status is 1 when any problem is found.

            Example:
              strata verify ./Posts.store
              strata verify ./Posts.store --json > report.json
            """)

    @Argument(help: "The store directory.") var store: String
    @OptionGroup var key: KeyFileOption
    @Flag(help: "Print the report as JSON (the fields of VerificationReport).") var json = false

    func run() throws {
        let handle = try StoreAccess.openRecorded(store, readOnly: true, key: key)
        defer { handle.close() }
        let report: VerificationReport
        do { report = try handle.verify() } catch { throw CLIFailure(ErrorText.describe(error, store: store)) }
        let problemCount = report.problems.count + report.problemsNotListed
        if json {
            Console.out(String(decoding: try Format.jsonEncoder().encode(report), as: UTF8.self))
        } else {
            Console.out("Checked \(Format.plural(report.objectsChecked, "object")), \(Format.plural(report.linksChecked, "link")) and \(Format.plural(report.indexEntriesChecked, "index entry", "index entries")) of \(store).")
            for note in report.notes { Console.out("Note: \(note)") }
            if problemCount == 0 {
                Console.out("No problems found.")
            } else {
                Console.out("\(Format.plural(problemCount, "problem")) found:")
                for p in report.problems { Console.out("  \(p)") }
                if report.problemsNotListed > 0 { Console.out("  … and \(Format.count(report.problemsNotListed)) more not listed") }
            }
        }
        if problemCount > 0 {
            throw CLIFailure("\(Format.plural(problemCount, "problem")) found in \(store) (listed above); restore the store from a backup, or copy what reads cleanly into a new store with `strata export --entity NAME`", status: 1)
        }
    }
}

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a consistent copy of a store, while it may be in use.",
        discussion: """
            The copy is one snapshot of the store (LMDB's mdb_env_copy2), written beside DEST and renamed \
            into place, so an interrupted backup leaves nothing at DEST. DEST must not exist. With \
            --compact, free pages are left out and the copy is renumbered (smaller, slower to make).

            Example:
              strata backup ./Posts.store ./Posts-before-v4.store --compact
            """)

    @Argument(help: "The store directory.") var store: String
    @OptionGroup var key: KeyFileOption
    @Argument(help: "The directory of the copy; it must not exist.") var destination: String
    @Flag(help: "Leave out free pages.") var compact = false

    func run() throws {
        let destinationURL = StoreAccess.url(destination)
        if FileManager.default.fileExists(atPath: destinationURL.path) {
            throw CLIFailure("\(destination) already exists; a backup needs the path of a new directory")
        }
        let handle = try StoreAccess.openRecorded(store, readOnly: true, key: key)
        defer { handle.close() }
        let start = now()
        do {
            try handle.backup(to: destinationURL, compact: compact)
        } catch {
            throw CLIFailure(ErrorText.describe(error, store: store))
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: destinationURL.path + "/data.mdb")[.size] as? Int) ?? 0
        Console.out("Backed up \(store) to \(destination)\(compact ? " (compacted)" : ""): \(ByteCount(size)) in \(Format.duration(now() - start)).")
    }
}
