/// Object IDs as LMDB keys: 8 bytes big-endian, so that LMDB's byte order is numeric order and new
/// objects (increasing IDs) are appended at the end of their entity's tree.
enum ObjectKey {
    static let size = 8

    @inline(__always)
    static func with<T>(_ id: UInt64, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        var be = id.bigEndian
        return try withUnsafeBytes(of: &be) { try body($0) }
    }

    @inline(__always)
    static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeFailure) -> UInt64 {
        guard bytes.count == size else { throw DecodeFailure("object key of \(bytes.count) bytes") }
        return UInt64(bigEndian: bytes.loadUnaligned(as: UInt64.self))
    }

    static func bytes(_ id: UInt64) -> [UInt8] {
        withUnsafeBytes(of: id.bigEndian) { Array($0) }
    }
}

extension Transaction {
    /// The object identifier an entity database's key holds; a key of another size is a corrupted store.
    @inline(__always)
    func objectID(ofKey key: UnsafeRawBufferPointer) throws -> UInt64 {
        do { return try ObjectKey.decode(key) } catch {
            throw StoreError.corrupted(path: environment.path, reason: .structure("an object key of \(key.count) bytes"))
        }
    }
}
