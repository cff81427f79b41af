#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A file opened for positioned reads (`pread`), never mapped: what is read of a file that may be shorter
/// than it should be (a page beyond its end read through a memory map raises SIGBUS; `pread` returns less).
struct ReadOnlyFile: ~Copyable {
    private let descriptor: Int32
    /// Whether this value opened the descriptor (and closes it).
    private let ownsDescriptor: Bool
    let path: String

    init(path: String) throws(SystemCallError) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemCallError(errno: errno, operation: "open \(path)") }
        self.descriptor = fd
        self.ownsDescriptor = true
        self.path = path
    }

    /// Reads through `descriptor`, an open descriptor of `path` that its owner keeps open while this value
    /// lives and closes itself (an LMDB environment's, from `mdb_env_get_fd`): no second open of the file.
    init(borrowing descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.ownsDescriptor = false
        self.path = path
    }

    deinit { if ownsDescriptor { close(descriptor) } }

    /// The file's size in bytes now.
    func size() throws(SystemCallError) -> Int {
        var st = stat()
        guard fstat(descriptor, &st) == 0 else { throw SystemCallError(errno: errno, operation: "fstat \(path)") }
        return Int(st.st_size)
    }

    /// Up to `count` bytes at `offset`: fewer only where the file ends.
    func read(count: Int, at offset: Int) throws(SystemCallError) -> [UInt8] {
        guard count > 0, offset >= 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return 0 }
                return pread(descriptor, base + done, count - done, off_t(offset + done))
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw SystemCallError(errno: errno, operation: "pread \(path)")
            }
            if n == 0 { break }
            done += n
        }
        if done < count { bytes.removeLast(count - done) }
        return bytes
    }
}
