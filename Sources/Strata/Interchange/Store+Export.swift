import Foundation

extension Store {
    /// Writes the store's objects to a file as JSON Lines, one object per line (see <doc:ImportingAndExporting>).
    ///
    /// Entities come in the model's order (or the order of `entities`), objects in ID order, attributes and
    /// relationships in declaration order: every attribute (null included) and every relationship, on both
    /// sides (to-one: an ID or null; to-many: IDs in ascending order). Everything is read on one snapshot, so
    /// the same store always gives the same bytes, and importing them into a new store of the same model
    /// (``importObjects(from:entity:batchSize:progress:shouldStop:)-(URL,_,_,_,_)``) gives the same export again.
    ///
    /// ```swift
    /// try store.exportObjects(to: URL(fileURLWithPath: "posts.jsonl"))
    /// try store.exportObjects(to: tagsURL, entities: ["Tag"])
    /// ```
    ///
    /// - Parameters:
    ///   - url: The file, created or replaced.
    ///   - entities: The entities to export, in this order; every entity of the model when nil.
    ///   - progress: Called on this thread as the output is written.
    /// - Returns: The objects and bytes written.
    /// - Throws: ``StoreError/unknownEntity(_:)`` for a name the model does not have (nothing is written);
    ///   Foundation's error when the file cannot be created or written; a ``StoreError`` when a record cannot
    ///   be read (the complete lines before it are written).
    @discardableResult
    public func exportObjects(to url: URL, entities: [String]? = nil,
                              progress: ((InterchangeProgress) -> Void)? = nil) throws -> ExportSummary {
        let export = try ObjectExport(store: self, names: entities)
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSURLErrorKey: url])
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        return try export.run(progress: progress) { try handle.write(contentsOf: Data($0)) }
    }

    /// Writes the store's objects as JSON Lines to an open file, a pipe or standard output, from the handle's
    /// current offset: as ``exportObjects(to:entities:progress:)-(URL,_,_)`` does. The handle stays open.
    @discardableResult
    public func exportObjects(to fileHandle: FileHandle, entities: [String]? = nil,
                              progress: ((InterchangeProgress) -> Void)? = nil) throws -> ExportSummary {
        try ObjectExport(store: self, names: entities).run(progress: progress) { try fileHandle.write(contentsOf: Data($0)) }
    }

    /// The store's objects as JSON Lines in memory, as ``exportObjects(to:entities:progress:)-(URL,_,_)`` writes
    /// them to a file.
    public func exportObjects(entities: [String]? = nil) throws -> Data {
        var data = Data()
        _ = try ObjectExport(store: self, names: entities).run(progress: nil) { data.append(contentsOf: $0) }
        return data
    }

    /// Streams the store's objects as JSON Lines to `output`, in chunks of whole lines of about 64 KiB — to a
    /// socket, a compressor, a custom sink — as ``exportObjects(to:entities:progress:)-(URL,_,_)`` writes them
    /// to a file.
    ///
    /// - Parameters:
    ///   - entities: The entities to export, in this order; every entity of the model when nil.
    ///   - progress: Called on this thread as the output is written.
    ///   - output: Called with each chunk; the bytes are valid only during the call. An error it throws stops
    ///     the export and is thrown as it is.
    @discardableResult
    public func exportObjects(entities: [String]? = nil, progress: ((InterchangeProgress) -> Void)? = nil,
                              output: (UnsafeRawBufferPointer) throws -> Void) throws -> ExportSummary {
        try ObjectExport(store: self, names: entities).run(progress: progress, output: output)
    }
}
