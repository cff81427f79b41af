import Foundation

/// Bytes read from an input in large chunks into one buffer: what the line reader and the reader of the links'
/// temporary file consume, a read (a system call, or a copy from memory) per chunk rather than per line.
///
/// The unconsumed bytes are `buffer[start..<end]`; ``fill()`` moves them to the front and reads more after
/// them, growing the buffer only when they fill it (a line longer than the chunk).
final class InputBuffer {
    /// Where the bytes come from.
    enum Source {
        /// An open file, standard input or a pipe, read with `read(2)` on a duplicate of its descriptor, which
        /// the buffer closes when it is released: the handle's owner may close the handle at any time.
        case fileHandle(FileHandle)
        /// Bytes in memory.
        case memory(Data)
    }

    static let chunkSize = 1 << 20

    private enum Reading {
        case descriptor(Int32)
        case memory(Data)
    }

    private let reading: Reading
    private var memoryOffset = 0
    private(set) var storage: UnsafeMutableRawBufferPointer
    /// The first unconsumed byte.
    var start = 0
    /// The end of the bytes read.
    private(set) var end = 0
    /// Whether the source has no more bytes.
    private(set) var atEndOfInput = false

    init(_ source: Source) throws(SystemCallError) {
        switch source {
        case .fileHandle(let handle): reading = .descriptor(try FileDescriptorIO.duplicate(handle.fileDescriptor))
        case .memory(let data): reading = .memory(data)
        }
        storage = .allocate(byteCount: Self.chunkSize, alignment: 8)
    }

    deinit {
        storage.deallocate()
        if case .descriptor(let descriptor) = reading { FileDescriptorIO.close(descriptor) }
    }

    /// The unconsumed bytes.
    var available: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[start..<end]) }

    /// Reads more bytes after the unconsumed ones; false at the end of the input.
    func fill() throws(SystemCallError) -> Bool {
        guard !atEndOfInput else { return false }
        if start > 0 {
            let kept = end - start
            if kept > 0, let base = storage.baseAddress { base.copyMemory(from: base + start, byteCount: kept) }
            start = 0
            end = kept
        }
        if end == storage.count {
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: storage.count * 2, alignment: 8)
            larger.copyMemory(from: UnsafeRawBufferPointer(storage))
            storage.deallocate()
            storage = larger
        }
        let free = UnsafeMutableRawBufferPointer(rebasing: storage[end...])
        let n: Int
        switch reading {
        case .descriptor(let descriptor):
            n = try FileDescriptorIO.read(descriptor, into: free)
        case .memory(let data):
            n = min(free.count, data.count - memoryOffset)
            if n > 0 {
                let offset = memoryOffset
                data.withUnsafeBytes { free.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
                memoryOffset += n
            }
        }
        if n == 0 {
            atEndOfInput = true
            return false
        }
        end += n
        return true
    }
}
