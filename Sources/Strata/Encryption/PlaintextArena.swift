/// Memory for the plain values one transaction opens from seals: bump-allocated from 64 KiB chunks (a value of more
/// than 16 KiB gets its own block) and freed together when the transaction ends — the lifetime LMDB gives the values
/// it returns from its map.
struct PlaintextArena {
    static let chunkSize = 64 << 10
    static let largeValue = chunkSize / 4

    /// The chunk values are cut from, and how much of it is taken.
    private var current: UnsafeMutableRawBufferPointer?
    private var used = 0
    /// Every block allocated (chunks and large values), freed by ``free()``.
    private var blocks: [UnsafeMutableRawBufferPointer] = []

    var isEmpty: Bool { blocks.isEmpty }

    /// Room for `count` bytes, 16-byte aligned, valid until ``free()``.
    mutating func allocate(_ count: Int) -> UnsafeMutableRawBufferPointer {
        if count > Self.largeValue {
            let block = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 16)
            blocks.append(block)
            return block
        }
        let size = (max(count, 1) + 15) & ~15
        if current == nil || used + size > Self.chunkSize {
            let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
            blocks.append(chunk)
            current = chunk
            used = 0
        }
        let start = used
        used += size
        return UnsafeMutableRawBufferPointer(rebasing: current.unsafelyUnwrapped[start..<(start + count)])
    }

    /// Frees every value allocated.
    mutating func free() {
        for block in blocks { block.deallocate() }
        blocks.removeAll()
        current = nil
        used = 0
    }
}
