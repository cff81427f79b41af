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
    @Option(help: "Export only the objects of this entity.") var entity: String?

    func run() throws {
        let handle = try StoreAccess.openRecorded(store, readOnly: true)
        defer { handle.close() }
        let schema = handle.schema
        var entities = schema.entities
        if let name = entity {
            guard let e = schema.entity(named: name) else {
                throw CLIFailure("the store's model has no entity named \(name); it has \(schema.entities.map(\.name).joined(separator: ", "))")
            }
            entities = [e]
        }
        // Lines are written into one reusable buffer, straight from record views, and go out 64 KiB at a time.
        var buffer: [UInt8] = []
        let limit = 1 << 16
        buffer.reserveCapacity(limit + 4096)
        func flush() {
            guard !buffer.isEmpty else { return }
            buffer.withUnsafeBytes { Console.write(1, $0) }
            buffer.removeAll(keepingCapacity: true)
        }
        do {
            try handle.read { context in
                for entity in entities {
                    let writer = ExportLineWriter(entity: entity)
                    try context.forEachView(of: entity.name) { view in
                        try writer.write(view, context: context, into: &buffer)
                        if buffer.count >= limit { flush() }
                    }
                }
            }
        } catch {
            flush()
            throw CLIFailure("the export stopped: " + ErrorText.describe(error, store: store))
        }
        flush()
    }
}
