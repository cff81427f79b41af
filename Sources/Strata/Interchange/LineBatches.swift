import Foundation
import Synchronization

/// The import's input, read and parsed into batches on a thread of its own while the batch before is
/// inserted and committed: reading and parsing overlap with the transactions. At most two batches wait,
/// so memory stays bounded.
///
/// The batches come in input order, each ending at a known line; the thread stops at the first line it
/// cannot read (its problem carries the failure) or at the end of the input. What a batch holds and where a
/// failure is reported are exactly what reading the lines one by one would give: the batches are committed
/// (or not) by the caller in the same order, and a failing line's partial batch is never committed.
final class LineBatches: @unchecked Sendable {
    struct Batch: Sendable {
        var objects: [(line: Int, object: ObjectLine.Parsed)] = []
        /// The last line read for this batch (blank and skipped lines included).
        var throughLine = 0
        /// Lines of other entities than the import's `entity` skipped since the previous batch.
        var skipped = 0
    }

    enum Message: Sendable {
        /// A full batch.
        case batch(Batch)
        /// The end of the input: the last batch (possibly empty).
        case end(Batch)
        /// A line that cannot be imported (or a failed read), after the objects of `Batch` before it.
        case failure(Batch, LineFailure)
    }

    private let reader: LineReader
    private let parser: ObjectLineParser
    private let schema: Schema
    private let only: String?
    private let batchSize: Int
    private let condition = NSCondition()
    private var queue: [Message] = []
    private var stopped = false
    /// `stopped`, read by the thread between lines without taking the lock.
    private let stopRequested = Atomic<Bool>(false)
    /// Committed batches' arrays, given back to be emptied (their objects freed) and refilled here.
    private var returned: [[(line: Int, object: ObjectLine.Parsed)]] = []
    private static let capacity = 2

    init(reader: LineReader, parser: ObjectLineParser, schema: Schema, only: String?, batchSize: Int) {
        self.reader = reader
        self.parser = parser
        self.schema = schema
        self.only = only
        self.batchSize = batchSize
    }

    /// Starts reading.
    func start() {
        PlatformThread.start(name: "strata.import", stackSize: 1 << 20) { [self] in produce() }
    }

    /// The next message, waiting for it.
    func next() -> Message {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty { condition.wait() }
        let message = queue.removeFirst()
        condition.broadcast()
        return message
    }

    /// Hands a committed batch's objects back: the thread that allocated them frees them (malloc frees
    /// fastest in the arena of the thread that allocated) and reuses the array. `objects` is left empty.
    func giveBack(_ objects: inout [(line: Int, object: ObjectLine.Parsed)]) {
        var taken: [(line: Int, object: ObjectLine.Parsed)] = []
        swap(&taken, &objects)
        condition.lock()
        returned.append(taken)
        condition.unlock()
    }

    /// An empty array for the next batch: a given-back one emptied here, or a new one.
    private func emptyArray() -> [(line: Int, object: ObjectLine.Parsed)] {
        condition.lock()
        var array = returned.popLast()
        condition.unlock()
        guard array != nil else {
            var fresh: [(line: Int, object: ObjectLine.Parsed)] = []
            fresh.reserveCapacity(min(batchSize, 1 << 16))
            return fresh
        }
        array?.removeAll(keepingCapacity: true)
        return array ?? []
    }

    /// Tells the thread to stop: the caller wants no more batches. It stops before its next line (a read in
    /// progress, of a pipe that stays open, is not waited for: the reader stays the thread's).
    func stop() {
        stopRequested.store(true, ordering: .relaxed)
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Queues a message, waiting while two wait already; false when the caller stopped.
    private func put(_ message: Message) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while queue.count >= Self.capacity && !stopped { condition.wait() }
        guard !stopped else { return false }
        queue.append(message)
        condition.broadcast()
        return true
    }

    private func produce() {
        var batch = Batch(objects: emptyArray())
        while !stopRequested.load(ordering: .relaxed) {
            let line: UnsafeRawBufferPointer?
            do { line = try reader.nextBytes() } catch {
                _ = put(.failure(batch, LineFailure(line: reader.lineNumber + 1, reason: error.reason, kind: .unreadableInput)))
                return
            }
            guard let line else {
                batch.throughLine = reader.lineNumber
                _ = put(.end(batch))
                return
            }
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            // The fast parser reads the common lines; the others (and every bad line) take the general path,
            // whose answer and message are the line's.
            if case .object(let object) = parser.parse(line) {
                batch.objects.append((reader.lineNumber, object))
            } else {
                do {
                    if let object = try ObjectLine.parse(Data(line), schema: schema, only: only) {
                        batch.objects.append((reader.lineNumber, object))
                    } else {
                        batch.skipped += 1
                    }
                } catch {
                    _ = put(.failure(batch, LineFailure(line: reader.lineNumber, reason: error.reason, kind: .badLine)))
                    return
                }
            }
            if batch.objects.count >= batchSize {
                batch.throughLine = reader.lineNumber
                guard put(.batch(batch)) else { return }
                batch = Batch(objects: emptyArray())
            }
        }
    }
}
