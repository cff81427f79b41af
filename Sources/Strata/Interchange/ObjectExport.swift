import Foundation

/// Writes a store's objects as JSON Lines, streaming: entities in the given order (the model's by default),
/// objects in ID order, all read on one snapshot. Lines are written into one reusable buffer straight from
/// record views (``ObjectLineWriter``) and handed to the output 64 KiB at a time.
struct ObjectExport {
    let store: Store
    let entities: [Entity]

    static let chunkSize = 1 << 16

    /// The export of `names` (every entity of the model when nil).
    /// - Throws: ``StoreError/unknownEntity(_:)`` for a name the model does not have.
    init(store: Store, names: [String]?) throws {
        self.store = store
        let schema = store.schema
        guard let names else {
            entities = schema.entities
            return
        }
        entities = try names.map { name in
            guard let entity = schema.entity(named: name) else { throw StoreError.unknownEntity(name) }
            return entity
        }
    }

    /// Writes every line to `output`. When reading fails (a damaged record), the complete lines before it are
    /// written first, then the error is thrown; an error of `output` is thrown as it is.
    func run(progress: ((InterchangeProgress) -> Void)?, output: (UnsafeRawBufferPointer) throws -> Void) throws -> ExportSummary {
        var summary = ExportSummary()
        var buffer: [UInt8] = []
        buffer.reserveCapacity(Self.chunkSize + 4096)
        var outputFailed = false
        func flush() throws {
            guard !buffer.isEmpty else { return }
            do {
                try buffer.withUnsafeBytes { try output($0) }
            } catch {
                outputFailed = true
                throw error
            }
            summary.byteCount += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }
        do {
            try store.read { context in
                var total = 0
                for entity in entities { total += try context.count(entity.name) }
                var done = 0
                for entity in entities {
                    let writer = ObjectLineWriter(entity: entity)
                    var written = 0
                    defer { summary.objectsByEntity[entity.name, default: 0] += written }
                    func report() { progress?(InterchangeProgress(phase: .exporting, entity: entity.name, completed: done, total: total)) }
                    try context.forEachView(of: entity.name) { view in
                        try writer.write(view, context: context, into: &buffer)
                        written += 1
                        done += 1
                        if buffer.count >= Self.chunkSize {
                            try flush()
                            report()
                        }
                    }
                    report()
                }
            }
        } catch {
            if !outputFailed { try flush() }
            throw error
        }
        try flush()
        return summary
    }
}
