/// LMDB's data file read page by page with positioned reads, never through the memory map: its meta pages,
/// and which pages its free list holds. Opening uses it to tell a data file that is really truncated from a
/// healthy one that LMDB left shorter than its last page number.
///
/// LMDB 0.9 can end a write transaction with pages at the end of the file that it allocated and then freed
/// before committing ("loose" pages: a page emptied by deletions in the same transaction). It never writes
/// them — `mdb_page_flush` skips loose pages — but they count in the meta page's last page number, and they
/// go to the free list. So a healthy file may be one or more pages shorter than `(last page + 1) × page
/// size`. Those pages are never read: a free page is reused only as a fresh page written with `pwrite`.
/// A file is damaged only when a page *in use* lies beyond its end (the first reader of that page would be
/// killed by SIGBUS): that is exactly when a missing page is not on the free list.
///
/// The format (LMDB 0.9, the data format 1 of `lmdb.h`; native byte order and word size `W`, 8 on 64-bit):
/// a page begins with its page number (`W` bytes), a pad and flags (2 + 2 bytes), and either the lower
/// and upper bounds of its free space (2 + 2) or, on an overflow page, its page count (4). Pages 0 and 1
/// are meta pages: after the header, magic `0xBEEFC0DE` (4), format version (4), map address (`W`), map
/// size (`W`), two database records of `8 + 5 W` bytes (the free list's, then the main database's; each
/// ends with its root page number, and the free list's first 4 bytes hold the page size), the last page
/// number (`W`) and the transaction ID (`W`). LMDB uses the meta page with the larger transaction ID.
/// Branch and leaf pages hold 2-byte offsets of their nodes after the header; a node is `lo`, `hi`,
/// `flags`, key size (2 bytes each), then the key and, on a leaf, the data (or, with flag `0x01`, the
/// number of its first overflow page). A branch node's child page number is `lo | hi << 16 | flags << 32`.
/// A free-list record's key is a transaction ID; its data is a count followed by that many page numbers.
struct DataFilePages: ~Copyable {
    /// What the newest meta page says.
    struct Meta: Equatable {
        var pageSize: Int
        var lastPage: UInt64
        var transactionID: UInt64
        var freeListRoot: UInt64
    }

    /// A reason the file cannot be read as LMDB's (the caller reports it as damage).
    struct Damage: Error, CustomStringConvertible {
        let description: String
    }

    /// What the end of the file holds.
    enum Tail: Equatable {
        /// Every page up to the last one is in the file.
        case complete
        /// The file ends before the last page, and every missing page is free: healthy.
        case unwrittenFreePages(Int)
        /// Pages in use lie beyond the file's end: the file was truncated. `firstMissingInUse` is the lowest
        /// such page.
        case truncated(firstMissingInUse: UInt64)

        var isTruncated: Bool { if case .truncated = self { true } else { false } }
    }

    private let file: ReadOnlyFile
    private let word = MemoryLayout<Int>.size
    private var headerSize: Int { word + 8 }
    /// LMDB's "no page" (`P_INVALID`, all ones): the root of an empty tree.
    private var noPage: UInt64 { word == 8 ? UInt64.max : UInt64(UInt32.max) }
    private static let pageFlagBranch: UInt16 = 0x01
    private static let pageFlagLeaf: UInt16 = 0x02
    private static let pageFlagOverflow: UInt16 = 0x04
    private static let nodeFlagBigData: UInt16 = 0x01

    init(path: String) throws(SystemCallError) {
        file = try ReadOnlyFile(path: path)
    }

    /// Reads through the data file descriptor of an open LMDB environment (`mdb_env_get_fd`), which must stay
    /// open while this value lives.
    init(environmentDescriptor descriptor: Int32, path: String) {
        file = ReadOnlyFile(borrowing: descriptor, path: path)
    }

    /// The file's size now.
    func fileSize() throws(SystemCallError) -> Int { try file.size() }

    /// The newest valid meta page, as LMDB picks it (the larger transaction ID of two valid meta pages).
    func newestMeta() throws -> Meta {
        let metaSize = headerSize + 8 + 2 * word + 2 * (8 + 5 * word) + 2 * word
        let first = try file.read(count: metaSize, at: 0)
        guard first.count == metaSize else { throw Damage(description: "the first meta page is cut off") }
        // The page size is kept in the free list's database record (its first 4 bytes).
        let pageSize = Int(load32(first, headerSize + 8 + 2 * word))
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else {
            throw Damage(description: "the meta page gives a page size of \(pageSize) bytes")
        }
        let second = try file.read(count: metaSize, at: pageSize)
        guard second.count == metaSize else { throw Damage(description: "the second meta page is cut off") }
        switch (meta(from: first, pageSize: pageSize), meta(from: second, pageSize: pageSize)) {
        case let (a?, b?): return b.transactionID > a.transactionID ? b : a
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): throw Damage(description: "neither meta page is valid")
        }
    }

    private func meta(from bytes: [UInt8], pageSize: Int) -> Meta? {
        let body = headerSize
        guard load32(bytes, body) == 0xBEEF_C0DE, load32(bytes, body + 4) == 1 else { return nil }
        let freeList = body + 8 + 2 * word
        let afterDatabases = freeList + 2 * (8 + 5 * word)
        return Meta(pageSize: pageSize,
                    lastPage: loadWord(bytes, afterDatabases),
                    transactionID: loadWord(bytes, afterDatabases + word),
                    freeListRoot: loadWord(bytes, freeList + 8 + 4 * word))
    }

    /// What the file's end holds for `meta`: complete, short by free pages only, or truncated.
    ///
    /// `meta` must stay the newest committed state while this runs, or its free list's pages must be protected
    /// from reuse (a read transaction begun before `meta` was read pins them).
    func tail(of meta: Meta) throws -> Tail {
        let pagesInFile = UInt64(try file.size() / meta.pageSize)
        guard pagesInFile <= meta.lastPage else { return .complete }
        guard pagesInFile >= 2 else { return .truncated(firstMissingInUse: pagesInFile) }
        var free = Set<UInt64>()
        if meta.freeListRoot != noPage {
            var visited = 0
            try collectFreePages(page: meta.freeListRoot, depth: 0, meta: meta, pagesInFile: pagesInFile,
                                 visited: &visited, into: &free)
        }
        var page = pagesInFile
        while page <= meta.lastPage {
            if !free.contains(page) { return .truncated(firstMissingInUse: page) }
            page += 1
        }
        return .unwrittenFreePages(Int(meta.lastPage - pagesInFile + 1))
    }

    /// Walks the free list's B-tree from `page`, adding every page number its records hold.
    private func collectFreePages(page: UInt64, depth: Int, meta: Meta, pagesInFile: UInt64,
                                  visited: inout Int, into free: inout Set<UInt64>) throws {
        guard depth <= 32 else { throw Damage(description: "the free list is deeper than 32 levels") }
        visited += 1
        guard UInt64(visited) <= pagesInFile else { throw Damage(description: "the free list's pages form a cycle") }
        let bytes = try readPage(page, meta: meta, pagesInFile: pagesInFile, role: "free-list")
        let flags = load16(bytes, word + 2)
        let lower = Int(load16(bytes, word + 4))
        guard lower >= headerSize, lower <= bytes.count else {
            throw Damage(description: "free-list page \(page) has a bad header")
        }
        let count = (lower - headerSize) / 2
        for i in 0..<count {
            let node = Int(load16(bytes, headerSize + 2 * i))
            guard node >= headerSize, node + 8 <= bytes.count else {
                throw Damage(description: "free-list page \(page) points outside itself")
            }
            let lo = UInt64(load16(bytes, node)), hi = UInt64(load16(bytes, node + 2))
            let nodeFlags = load16(bytes, node + 4)
            let keySize = Int(load16(bytes, node + 6))
            if flags & Self.pageFlagBranch != 0 {
                let child = lo | hi << 16 | (word == 8 ? UInt64(nodeFlags) << 32 : 0)
                try collectFreePages(page: child, depth: depth + 1, meta: meta, pagesInFile: pagesInFile,
                                     visited: &visited, into: &free)
                continue
            }
            guard flags & Self.pageFlagLeaf != 0 else {
                throw Damage(description: "free-list page \(page) is neither a branch nor a leaf")
            }
            let dataSize = Int(lo | hi << 16)
            let dataStart = node + 8 + keySize
            let data: [UInt8]
            if nodeFlags & Self.nodeFlagBigData != 0 {
                guard dataStart + word <= bytes.count else { throw Damage(description: "free-list page \(page) is cut short") }
                data = try readOverflow(loadWord(bytes, dataStart), size: dataSize, meta: meta, pagesInFile: pagesInFile)
            } else {
                guard dataStart + dataSize <= bytes.count else { throw Damage(description: "free-list page \(page) is cut short") }
                data = Array(bytes[dataStart..<dataStart + dataSize])
            }
            guard data.count >= word else { throw Damage(description: "a free-list record is empty") }
            let pages = Int(loadWord(data, 0))
            guard pages >= 0, (pages + 1) * word <= data.count else {
                throw Damage(description: "a free-list record counts \(pages) pages in \(data.count) bytes")
            }
            for j in 0..<pages { free.insert(loadWord(data, (j + 1) * word)) }
        }
    }

    /// The `size` bytes of a value stored on overflow pages from `page`.
    private func readOverflow(_ page: UInt64, size: Int, meta: Meta, pagesInFile: UInt64) throws -> [UInt8] {
        let first = try readPage(page, meta: meta, pagesInFile: pagesInFile, role: "free-list overflow")
        guard load16(first, word + 2) & Self.pageFlagOverflow != 0 else {
            throw Damage(description: "page \(page) is not an overflow page")
        }
        let pages = UInt64(load32(first, word + 4))
        guard pages >= 1, page + pages <= pagesInFile, headerSize + size <= Int(pages) * meta.pageSize else {
            throw Damage(description: "the free list's overflow pages from \(page) are beyond the file's end")
        }
        let bytes = try file.read(count: size, at: Int(page) * meta.pageSize + headerSize)
        guard bytes.count == size else { throw Damage(description: "the free list's overflow page \(page) is cut off") }
        return bytes
    }

    /// Page `page` whole, checking that it is in the file and says it is that page.
    private func readPage(_ page: UInt64, meta: Meta, pagesInFile: UInt64, role: String) throws -> [UInt8] {
        guard page >= 2, page < pagesInFile else {
            throw Damage(description: "\(role) page \(page) is beyond the file's end (\(pagesInFile) pages)")
        }
        let bytes = try file.read(count: meta.pageSize, at: Int(page) * meta.pageSize)
        guard bytes.count == meta.pageSize else { throw Damage(description: "\(role) page \(page) is cut off") }
        guard loadWord(bytes, 0) == page else { throw Damage(description: "\(role) page \(page) says it is page \(loadWord(bytes, 0))") }
        return bytes
    }

    private func load16(_ bytes: [UInt8], _ offset: Int) -> UInt16 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt16.self) }
    }

    private func load32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
    }

    /// A native word (`size_t`: page numbers, transaction IDs, counts).
    private func loadWord(_ bytes: [UInt8], _ offset: Int) -> UInt64 {
        bytes.withUnsafeBytes { raw in
            word == 8 ? raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                      : UInt64(raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        }
    }
}
