import Foundation
import Synchronization

/// A custom stage's source objects, read and decoded on a thread of their own ahead of the writer: while the
/// writer runs the mapping's closure, inserts, links and commits (its `fdatasync` included), the next source
/// records are being located, checksummed and decoded on another core.
///
/// It only reads. Its thread opens read transactions of its own — one per chunk of ``chunkSize`` objects, so
/// that it never holds back the reuse of pages the writer frees — over the source entity's database, which
/// the step never writes, in key order from the object after the first one the writer asks for. The writer
/// still walks its own cursor, asks for each object by identifier (``take(_:)``), and decodes the object
/// itself whenever the answer is nil: an object the thread has not read yet (the writer never waits for the
/// thread, so it is never slower than without it but for the hand-over), an object asked for again (a batch run
/// again after the map grew), a record that does not decode (so the error, and the message, are the writer's
/// own), a failed read. What a pass reads, writes, commits and throws is therefore what it would without this;
/// only where the decoding runs changes. A kill loses nothing more: nothing here is ever written.
///
/// Memory stays bounded: at most ``depth`` chunks of decoded objects wait, in memory reused chunk after chunk.
final class SourceReadAhead<Decoded>: StoppableReadAhead, @unchecked Sendable {
    /// Decodes the record `bytes` of object `id` into `slot` (uninitialized), read in a transaction of the reading
    /// thread (`context`). Leaves `slot` uninitialized when it throws.
    typealias Decode = (_ context: ReadContext, _ id: UInt64, _ bytes: UnsafeRawBufferPointer,
                        _ slot: UnsafeMutablePointer<Decoded>) throws -> Void

    /// Objects decoded per read transaction, and per hand-over to the writer.
    static var chunkSize: Int { 512 }
    /// Chunks that may wait for the writer: enough to keep decoding through a batch's commit.
    static var depth: Int { 16 }

    private let environment: Environment
    private let model: BoundModel
    private let dbi: DatabaseHandle
    private let decode: Decode

    // Shared with the reading thread, under `condition`.
    private let condition = NSCondition()
    private var ready: [ReadAheadChunk] = []
    /// Chunks the writer has read, to be emptied and refilled.
    private var emptied: [ReadAheadChunk] = []
    private var isRunning = false
    /// Set to make the thread stop before its next chunk.
    private let stopRequested = Atomic<Bool>(false)

    /// The writer's side, on its own cache lines: written once per object, it must not share a line with what
    /// the reading thread reads.
    private let writerSide = WriterSide()

    private final class WriterSide {
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        var current: ReadAheadChunk? = nil
        var position = 0
        var hasStarted = false
        var isExhausted = false
        private let trailing: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
    }

    /// A reader of `model`'s database `dbi`; nothing is read before the writer asks for its first object.
    init(environment: Environment, model: BoundModel, dbi: DatabaseHandle, decode: @escaping Decode) {
        self.environment = environment
        self.model = model
        self.dbi = dbi
        self.decode = decode
    }

    deinit {
        stop()
    }

    /// The object `id` decoded ahead — valid until the next call, and to be read in place (`pointee`: its memory,
    /// and what it holds, are freed by the reading thread, which allocated them) — or nil when the caller must
    /// decode the object itself: the first object asked for (reading ahead starts after it); an object the thread
    /// has not read yet (the writer never waits for it: it skips, later, what the thread read meanwhile); an
    /// object asked for again, the thread having handed it over already (it starts again after it); a record that
    /// did not decode (the thread stops before it); anything after the end of what the thread could read.
    @inline(__always)
    func take(_ id: UInt64) -> UnsafeMutablePointer<Decoded>? {
        let w = writerSide
        if let chunk = w.current, w.position < chunk.count, chunk.ids[w.position] == id {
            let value = chunk.values.assumingMemoryBound(to: Decoded.self) + w.position
            w.position += 1
            return value
        }
        return takeAfterSkipping(id)
    }

    /// ``take(_:)`` when the next object read is not `id`: skips what the writer decoded itself, takes the next
    /// chunk if one is ready, starts the thread, or starts it again.
    private func takeAfterSkipping(_ id: UInt64) -> UnsafeMutablePointer<Decoded>? {
        let w = writerSide
        guard w.hasStarted else {
            w.hasStarted = true
            start(after: id)
            return nil
        }
        while !w.isExhausted {
            if let chunk = w.current {
                while w.position < chunk.count && chunk.ids[w.position] < id { w.position += 1 }
                if w.position < chunk.count {
                    guard chunk.ids[w.position] == id else { return restart(after: id) }
                    let value = chunk.values.assumingMemoryBound(to: Decoded.self) + w.position
                    w.position += 1
                    return value
                }
            }
            guard receiveIfReady() else { return nil }
        }
        return nil
    }

    /// The writer's walk and the thread's differ (its batch ran again after the map grew): reads again after `id`.
    private func restart(after id: UInt64) -> UnsafeMutablePointer<Decoded>? {
        stop()
        writerSide.isExhausted = false
        start(after: id)
        return nil
    }

    /// Stops the thread and waits for it to end (it finishes the chunk it is reading), and frees what was read
    /// and not taken. Call when the pass ends, however it ends.
    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        condition.lock()
        condition.broadcast()
        while isRunning { condition.wait() }
        let waiting = ready
        ready.removeAll()
        emptied.removeAll()
        condition.unlock()
        let w = writerSide
        if let chunk = w.current { discard(chunk) }
        for chunk in waiting { discard(chunk) }
        w.current = nil
        w.position = 0
        w.isExhausted = true
    }

    /// Deinitializes the values of `chunk`, leaving it empty.
    private func discard(_ chunk: ReadAheadChunk) {
        chunk.values.assumingMemoryBound(to: Decoded.self).deinitialize(count: chunk.count)
        chunk.ids.removeAll(keepingCapacity: true)
    }

    private func start(after id: UInt64) {
        guard id < UInt64.max else { return writerSide.isExhausted = true }
        stopRequested.store(false, ordering: .relaxed)
        condition.lock()
        isRunning = true
        condition.unlock()
        environment.readAheadThreads.add(1, ordering: .relaxed)
        PlatformThread.start(name: "strata.migrate.read", stackSize: 1 << 20) { [self] in
            produce(from: id + 1)
            condition.lock()
            isRunning = false
            condition.broadcast()
            condition.unlock()
            environment.readAheadThreads.subtract(1, ordering: .relaxed)
        }
    }

    /// Hands the chunk read back and takes the next one, if the thread has one ready: false when it has none yet
    /// (the writer does not wait), or has ended.
    private func receiveIfReady() -> Bool {
        let w = writerSide
        condition.lock()
        defer { condition.unlock() }
        if let chunk = w.current { emptied.append(chunk) }
        w.current = nil
        w.position = 0
        guard !ready.isEmpty else {
            if !isRunning { w.isExhausted = true }
            return false
        }
        w.current = ready.removeFirst()
        condition.broadcast()
        return true
    }

    /// Whether a chunk waits for the writer, and whether the thread still reads (for tests, which wait for the
    /// thread before they ask).
    var state: (hasChunkReady: Bool, isReading: Bool) {
        condition.lock()
        defer { condition.unlock() }
        return (!ready.isEmpty, isRunning)
    }

    /// Queues a chunk, waiting while ``depth`` wait already; false when the writer stopped reading (the chunk's
    /// values are then freed here).
    private func deliver(_ chunk: ReadAheadChunk) -> Bool {
        condition.lock()
        while ready.count >= Self.depth && !stopRequested.load(ordering: .relaxed) { condition.wait() }
        guard !stopRequested.load(ordering: .relaxed) else {
            condition.unlock()
            discard(chunk)
            return false
        }
        ready.append(chunk)
        condition.broadcast()
        condition.unlock()
        return true
    }

    /// An empty chunk: one the writer handed back, emptied here (so that this thread frees what it allocated:
    /// malloc frees fastest in the arena of the thread that allocated), or a new one.
    private func emptyChunk() -> ReadAheadChunk {
        condition.lock()
        let chunk = emptied.popLast()
        condition.unlock()
        guard let chunk else {
            return ReadAheadChunk(capacity: Self.chunkSize, values: UnsafeMutableRawPointer(
                UnsafeMutablePointer<Decoded>.allocate(capacity: Self.chunkSize)))
        }
        discard(chunk)
        return chunk
    }

    /// The thread: chunk after chunk, each in its own read transaction, until the database's end, a record that
    /// does not decode, a failed read or no free reader slot (the writer then decodes from there itself), or
    /// ``stop()``.
    private func produce(from first: UInt64) {
        var next: UInt64? = first
        while let from = next, !stopRequested.load(ordering: .relaxed) {
            let chunk = emptyChunk()
            let values = chunk.values.assumingMemoryBound(to: Decoded.self)
            do {
                // Never waits for a reader slot: when the app's readers hold them all, the writer decodes alone
                // (a restart waits for this thread, and those readers may be waiting for the migration).
                next = try environment.readIfSlotFree { txn -> UInt64? in
                    let context = ReadContext(txn: txn, model: model)
                    let cursor = try txn.cursor(dbi)
                    var entry = try ObjectKey.with(from) { try cursor.seek($0) }
                    while let e = entry, chunk.count < Self.chunkSize {
                        let id = try ObjectKey.decode(e.key)
                        do { try decode(context, id, e.value, values + chunk.count) } catch { return nil }
                        chunk.ids.append(id)
                        entry = try cursor.next()
                    }
                    guard entry != nil, let last = chunk.ids.last, last < UInt64.max else { return nil }
                    return last + 1
                } ?? nil
            } catch {
                next = nil
            }
            guard chunk.count > 0, deliver(chunk) else { return }
        }
    }
}

/// Objects a ``SourceReadAhead`` decoded in one read transaction: their identifiers, in key order, and their values
/// (of the reader's type) in memory this chunk owns and reuses. Not generic, so that handing chunks over never
/// looks up generic metadata.
final class ReadAheadChunk {
    var ids: [UInt64]
    /// Room for `capacity` values; the first `count` are initialized.
    let values: UnsafeMutableRawPointer

    var count: Int { ids.count }

    init(capacity: Int, values: UnsafeMutableRawPointer) {
        ids = []
        ids.reserveCapacity(capacity)
        self.values = values
    }

    deinit {
        values.deallocate()
    }
}

/// A ``SourceReadAhead`` whatever it decodes: what a pass stops when it ends.
protocol StoppableReadAhead: AnyObject {
    func stop()
}
