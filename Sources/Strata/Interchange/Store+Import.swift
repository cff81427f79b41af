import Foundation

extension Store {
    /// Adds objects to the store from a file of JSON Lines, one object per line, as
    /// ``exportObjects(to:entities:progress:)-(URL,_,_)`` writes them (see <doc:ImportingAndExporting>):
    ///
    /// ```json
    /// {"entity":"Post","id":12,"attributes":{"title":"Hello","views":3},"relationships":{"author":7,"tags":[3,4]}}
    /// ```
    ///
    /// Each line's values are typed by the store's model (``ValueJSON``); attributes a line leaves out take
    /// their default (or null); an `id` given is kept (it must not be in use), one left out is allocated. The
    /// import goes in two passes:
    ///
    /// 1. *Objects*, in batches of `batchSize` lines, each batch one write transaction. The input is read and
    ///    parsed a batch ahead, on a thread of its own, while a batch commits. Blank lines are skipped.
    /// 2. *Links*, once every object exists (they wait in a temporary file, in `TMPDIR`), again in batches: a
    ///    line may link to an object on a later line. A link already present is kept, so relationships
    ///    listed on both sides are made once.
    ///
    /// With `entity`, lines of other entities are skipped (and counted), lines without `"entity"` are objects
    /// of it, and links to objects of *other* entities that do not exist yet are left out (and counted): they
    /// are made from the other side when that entity is imported. So an export can be imported one entity at
    /// a time, in any order.
    ///
    /// ```swift
    /// let summary = try store.importObjects(from: url) { progress in print(progress) }
    /// print("\(summary.objectCount) objects, \(summary.linksMade) links")
    /// ```
    ///
    /// A bad line stops the import with an ``ImportError`` that names the line and the reason: the batches
    /// before it stay committed (``ImportError/committed`` says which lines), nothing of the failing batch is
    /// kept, and the links of the committed lines are still made where their targets exist. Import the rest
    /// of the input, from line `committed.linesCommitted + 1`, once the line is fixed.
    ///
    /// - Parameters:
    ///   - url: The JSON Lines file.
    ///   - entity: Import only objects of this entity (the `strata` tool's `--entity`).
    ///   - batchSize: Lines per transaction in the first pass, and about as many links per transaction in the
    ///     second (at least 1).
    ///   - shouldStop: Asked on this thread after each committed batch of objects: returning true stops the
    ///     import there (the links of the committed lines are made), with an ``ImportError`` of kind
    ///     ``ImportError/Kind-swift.struct/stopped``.
    ///   - progress: Called on this thread after each committed batch.
    /// - Returns: What was imported: objects by entity, links made, lines skipped and links left out with
    ///   `entity`, objects still below a relationship's minimum count with `entity`.
    /// - Throws: ``ImportError`` (a bad line or link, an input that cannot be read, a stop, objects below a
    ///   minimum count without `entity`); ``StoreError/unknownEntity(_:)`` for an `entity` the model does not
    ///   have, ``StoreError/readOnly`` and ``StoreError/closed`` (nothing is read); Foundation's error when
    ///   the file cannot be opened.
    @discardableResult
    public func importObjects(from url: URL, entity: String? = nil, batchSize: Int = 10_000,
                              progress: ((InterchangeProgress) -> Void)? = nil, shouldStop: (() -> Bool)? = nil) throws -> ImportSummary {
        let engine = try ObjectImport(store: self, only: entity, batchSize: batchSize, progress: progress, shouldStop: shouldStop)
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return try engine.run(.fileHandle(handle))
    }

    /// Adds objects to the store from JSON Lines read from an open file, a pipe or standard input, from the
    /// handle's current offset to its end, as ``importObjects(from:entity:batchSize:progress:shouldStop:)-(URL,_,_,_,_)``
    /// does.
    ///
    /// The input is read in chunks of 1 MiB, on a thread of its own, through a duplicate of the handle's file
    /// descriptor: the handle stays open, and may be closed as soon as the call returns. An import that stops
    /// early may have read up to a chunk beyond the line where it stopped.
    @discardableResult
    public func importObjects(from fileHandle: FileHandle, entity: String? = nil, batchSize: Int = 10_000,
                              progress: ((InterchangeProgress) -> Void)? = nil, shouldStop: (() -> Bool)? = nil) throws -> ImportSummary {
        try ObjectImport(store: self, only: entity, batchSize: batchSize, progress: progress, shouldStop: shouldStop).run(.fileHandle(fileHandle))
    }

    /// Adds objects to the store from JSON Lines in memory (UTF-8, one object per line), as
    /// ``importObjects(from:entity:batchSize:progress:shouldStop:)-(URL,_,_,_,_)`` does from a file.
    ///
    /// ```swift
    /// try store.importObjects(from: Data("""
    ///     {"entity":"Tag","id":3,"attributes":{"name":"swift"}}
    ///     {"entity":"Post","attributes":{"title":"Hello"},"relationships":{"tags":[3]}}
    ///     """.utf8))
    /// ```
    @discardableResult
    public func importObjects(from data: Data, entity: String? = nil, batchSize: Int = 10_000,
                              progress: ((InterchangeProgress) -> Void)? = nil, shouldStop: (() -> Bool)? = nil) throws -> ImportSummary {
        try ObjectImport(store: self, only: entity, batchSize: batchSize, progress: progress, shouldStop: shouldStop).run(.memory(data))
    }
}
