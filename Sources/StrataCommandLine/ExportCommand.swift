import ArgumentParser
import Foundation
import Strata

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a store's objects as JSON Lines.",
        discussion: """
            One object per line: {"entity":"Post","id":12,"attributes":{...},"relationships":{...}}. \
            Entities in the order of the model, objects in ID order, attributes and relationships in \
            declaration order, every attribute (null included) and every relationship (to-one: an ID or \
            null; to-many: IDs in ascending order) — on both sides. Values use the documented JSON forms \
            (dates: seconds since 2001-01-01; data: Base64; …). The store is read on one snapshot, with its \
            recorded model; `strata import` of the output into a new store of the same model gives the same \
            export again.

            Example:
              strata export ./Posts.store > posts.jsonl
              strata export ./Posts.store --entity Tag | head
            """)

    @Argument(help: "The store directory.") var store: String
    @OptionGroup var key: KeyFileOption
    @Option(help: "Export only the objects of this entity.") var entity: String?

    func run() throws {
        let handle = try StoreAccess.openRecorded(store, readOnly: true, key: key)
        defer { handle.close() }
        let schema = handle.schema
        if let name = entity, schema.entity(named: name) == nil {
            throw CLIFailure("the store's model has no entity named \(name); it has \(schema.entities.map(\.name).joined(separator: ", "))")
        }
        // Whole lines, 64 KiB at a time, straight to standard output.
        do {
            try handle.exportObjects(entities: entity.map { [$0] }) { Console.write(1, $0) }
        } catch {
            throw CLIFailure("the export stopped: " + ErrorText.describe(error, store: store))
        }
    }
}
