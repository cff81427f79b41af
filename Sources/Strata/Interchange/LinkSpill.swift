import Foundation

/// The links of the import's committed lines, waiting in a temporary file for the second pass (made once
/// every object exists): written once, read back once, removed when done. Memory holds one chunk.
///
/// A record is little-endian 64-bit words: the line, the entity's position in the model, the object's ID,
/// the relationship's position in the entity, the number of targets, the targets.
final class LinkSpill {
    struct Record {
        var line: Int
        var entity: Int
        var id: UInt64
        var relationship: Int
        var targets: [UInt64]
    }

    private let url: URL
    private let handle: FileHandle
    private var pending: [UInt8] = []
    /// The records written.
    private(set) var count = 0

    /// Creates the file in the temporary directory (`TMPDIR`).
    init() throws(LineProblem) {
        let directory = FileManager.default.temporaryDirectory
        url = directory.appendingPathComponent("strata-import-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600]),
              let handle = try? FileHandle(forUpdating: url) else {
            throw LineProblem("cannot create a temporary file in \(directory.path); set TMPDIR to a writable directory")
        }
        self.handle = handle
        pending.reserveCapacity(InputBuffer.chunkSize + 4096)
    }

    deinit {
        try? handle.close()
        try? FileManager.default.removeItem(at: url)
    }

    private func writeFailed(_ error: SystemCallError) -> LineProblem {
        LineProblem("writing the temporary file \(url.path) failed (\(error.systemMessage)); free disk space or set TMPDIR")
    }

    /// Adds the links of one object through one relationship.
    func append(line: Int, entity: Int, id: UInt64, relationship: Int, targets: [UInt64]) throws(LineProblem) {
        for word in [UInt64(line), UInt64(entity), id, UInt64(relationship), UInt64(targets.count)] { put(word) }
        for t in targets { put(t) }
        count += 1
        if pending.count >= InputBuffer.chunkSize { try flush() }
    }

    @inline(__always)
    private func put(_ word: UInt64) {
        withUnsafeBytes(of: word.littleEndian) { pending.append(contentsOf: $0) }
    }

    private func flush() throws(LineProblem) {
        guard !pending.isEmpty else { return }
        let descriptor = handle.fileDescriptor
        let written = pending.withUnsafeBytes { bytes in Result { () throws(SystemCallError) in try FileDescriptorIO.write(descriptor, bytes) } }
        if case .failure(let error) = written { throw writeFailed(error) }
        pending.removeAll(keepingCapacity: true)
    }

    /// Finishes writing and returns a reader of the records, from the first.
    func reader() throws(LineProblem) -> Reader {
        try flush()
        do {
            try handle.seek(toOffset: 0)
        } catch {
            throw LineProblem("reading the temporary file \(url.path) failed (\(error)); set TMPDIR to another directory")
        }
        do {
            return Reader(self, try InputBuffer(.fileHandle(handle)))
        } catch {
            throw LineProblem("reading the temporary file \(url.path) failed (\(error.systemMessage)); set TMPDIR to another directory")
        }
    }

    /// Reads the records back, in the order they were written.
    final class Reader {
        /// The file's owner, which removes it when released.
        private let spill: LinkSpill
        private let input: InputBuffer

        fileprivate init(_ spill: LinkSpill, _ input: InputBuffer) {
            self.spill = spill
            self.input = input
        }

        /// The next record, or nil at the end.
        func next() throws(LineProblem) -> Record? {
            guard try ensure(5 * 8) else { return nil }
            let header = (0..<5).map { word($0) }
            // A record the file cuts short, or one this import did not write, ends the reading.
            guard header[4] < UInt64(Int.max / 8 - 5), try ensure((5 + Int(header[4])) * 8) else { return nil }
            let targets = (0..<Int(header[4])).map { word(5 + $0) }
            input.start += (5 + targets.count) * 8
            return Record(line: Int(truncatingIfNeeded: header[0]), entity: Int(truncatingIfNeeded: header[1]), id: header[2],
                          relationship: Int(truncatingIfNeeded: header[3]), targets: targets)
        }

        private func word(_ k: Int) -> UInt64 {
            UInt64(littleEndian: input.available.loadUnaligned(fromByteOffset: k * 8, as: UInt64.self))
        }

        /// Whether `count` bytes are available, reading more as needed.
        private func ensure(_ count: Int) throws(LineProblem) -> Bool {
            while input.available.count < count {
                do {
                    guard try input.fill() else { return false }
                } catch {
                    throw LineProblem("reading the temporary file \(spill.url.path) failed (\(error.systemMessage)); set TMPDIR to another directory")
                }
            }
            return true
        }
    }
}
