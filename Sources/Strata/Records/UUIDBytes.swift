import Foundation

/// A UUID field's 16 bytes, read and written as they lie in the record.
///
/// Foundation's `UUID` holds one `uuid_t`. Building one with `init(uuid:)`, or reading its `uuid`, passes a tuple of
/// 16 bytes through a call into Foundation — about 50 instructions, paid for every UUID a scan reads or an insert
/// writes. Where a `UUID` is its 16 bytes in order (checked once per process, against `init(uuid:)` and `uuid`),
/// it is loaded and stored directly; where it is not (a Foundation that keeps it otherwise), through the tuple.
extension UUID {
    /// Whether a `UUID`'s memory is its 16 bytes, in order, and nothing else.
    @usableFromInline
    static let isItsBytes: Bool = {
        guard MemoryLayout<UUID>.size == 16, _isPOD(UUID.self) else { return false }
        let probe: uuid_t = (0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF)
        let made = UUID(uuid: probe)
        let loaded = withUnsafeBytes(of: probe) { $0.loadUnaligned(as: UUID.self) }
        let memory = withUnsafeBytes(of: made) { Array($0) }
        return loaded == made && memory == withUnsafeBytes(of: probe) { Array($0) }
    }()

    /// The UUID whose 16 bytes start at `pointer` (any alignment).
    @inlinable @inline(__always)
    static func loaded(from pointer: UnsafeRawPointer) -> UUID {
        isItsBytes ? pointer.loadUnaligned(as: UUID.self) : UUID(uuid: pointer.loadUnaligned(as: uuid_t.self))
    }

    /// Writes the UUID's 16 bytes at `pointer` (any alignment).
    @inline(__always)
    func store(to pointer: UnsafeMutableRawPointer) {
        // As two words of the tuple's memory (whatever a `UUID` is): a UUID taken out of a `Value` is in two
        // registers, and stored as a tuple it went out byte by byte.
        let words = unsafeBitCast(uuid, to: (UInt64, UInt64).self)
        pointer.storeBytes(of: words.0, as: UInt64.self)
        pointer.storeBytes(of: words.1, toByteOffset: 8, as: UInt64.self)
    }
}
