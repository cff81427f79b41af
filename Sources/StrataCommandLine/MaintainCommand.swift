import ArgumentParser
import Foundation
import Strata

struct MaintainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "maintain",
        abstract: "Run a store's maintenance to completion: rewrite old-layout records, build indexes, empty retired databases.",
        discussion: """
            Metadata-only migrations (renames, added and removed attributes, widenings) leave records in the \
            layout that wrote them, read through projections, and build new indexes after the switch; an app's \
            store does this work in the background. This command does it now, in short write transactions that \
            other processes' writes interleave with; a kill or Ctrl-C loses nothing (run it again). \
            `strata info` shows what is left.

            Example:
              strata maintain ./Posts.store
            """,
        aliases: ["compact-layouts"])

    @Argument(help: "The store's directory.")
    var store: String
    @OptionGroup var key: KeyFileOption

    @Option(name: .customLong("batch-size"), help: "Records per write transaction (default 10000).")
    var batchSize: Int = 10_000

    func run() throws {
        guard batchSize > 0 else { throw ValidationError("--batch-size must be positive") }
        let handle = try StoreAccess.openRecorded(store, readOnly: false, key: key)
        defer { handle.close() }
        let display = ProgressDisplay()
        let start = now()
        let total: MaintenanceProgress
        let initial: MaintenanceStatus
        do {
            initial = try handle.maintenanceStatus()
            let todo = max(1, initial.oldLayoutRecords)
            total = try handle.performMaintenance(batchSize: batchSize) { p in
                display.update(.init(label: "maintain\(p.entity.map { " \($0)" } ?? "")",
                                     completed: min(todo, p.rewritten), total: todo))
            }
        } catch {
            display.finish()
            throw CLIFailure(ErrorText.describe(error, store: store))
        }
        display.finish()
        if initial.valuesToEncrypt != nil {
            // After encrypting, the pages are written again by a handle of its own (this one held plain pages).
            handle.close()
            do {
                let again = try StoreAccess.openRecorded(store, readOnly: false, key: key)
                defer { again.close() }
                try again.performMaintenance(batchSize: batchSize)
            } catch {
                throw CLIFailure(ErrorText.describe(error, store: store))
            }
            Console.out("Sealed \(Format.plural(total.resealed, "value")): the store is encrypted, and only its key opens it.")
        } else if initial.valuesToDecrypt != nil {
            Console.out("Opened \(Format.plural(total.resealed, "sealed value")): the store is decrypted, and opens only without a key now.")
        } else if total.resealed > 0 {
            Console.out("Re-sealed \(Format.plural(total.resealed, "value")) under the store's new key: the key rotation is done, and only the new key opens the store now.")
        }
        Console.out("Rewrote \(Format.plural(total.rewritten, "record")) into their current layouts, added \(Format.plural(total.indexed, "index entry", "index entries")) "
                    + "and deleted \(Format.plural(total.deleted, "retired entry", "retired entries")) in \(Format.duration(now() - start)).")
    }
}
