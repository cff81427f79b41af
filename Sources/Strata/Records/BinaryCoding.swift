import CStrataSupport
import Foundation

/// CRC-32C over a sequence of byte ranges (hardware-accelerated).
enum Checksum {
    @inline(__always)
    static func crc32c(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        strata_crc32c(seed, bytes.baseAddress, bytes.count)
    }

    /// The CRC-32C of `a` followed by `b`, in one pass (no running value inverted and inverted back between).
    @inline(__always)
    static func crc32c(_ a: UnsafeRawBufferPointer, then b: UnsafeRawBufferPointer) -> UInt32 {
        strata_crc32c_concat(a.baseAddress, a.count, b.baseAddress, b.count)
    }

    static func crc32c(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32c($0, seed: seed) }
    }
}

/// Appends little-endian integers, LEB128 varints and length-prefixed bytes to a reusable buffer of its own:
/// fixed-width values are stored, not appended element by element, and the buffer grows by doubling. Not
/// copyable: a writer has one owner, and ``reset()`` reuses its memory for the next record.
struct BinaryWriter: ~Copyable {
    private var storage: UnsafeMutableRawPointer
    /// The bytes written so far.
    private(set) var count: Int = 0
    private var capacity: Int

    /// A writer with room for `capacity` bytes; with 0, it allocates nothing until its first write (a writer
    /// whose buffer is swapped in from elsewhere).
    init(capacity: Int = 64) {
        self.capacity = max(0, capacity)
        storage = self.capacity == 0 ? BinaryWriter.noStorage : .allocate(byteCount: self.capacity, alignment: 16)
    }

    deinit { if capacity > 0 { storage.deallocate() } }

    /// Where a writer of capacity 0 points: never written to, never freed.
    nonisolated(unsafe) private static let noStorage = UnsafeMutableRawPointer.allocate(byteCount: 16, alignment: 16)

    /// Forgets what was written, keeping the memory.
    mutating func reset() { count = 0 }

    /// The bytes written, in place (valid until the next write).
    var buffer: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: storage, count: count) }

    /// A copy of the bytes written.
    var bytes: [UInt8] { Array(buffer) }

    @inline(__always) private mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(to: count + n) }
    }

    private mutating func grow(to needed: Int) {
        var next = max(16, capacity)
        while next < needed { next *= 2 }
        let grown = UnsafeMutableRawPointer.allocate(byteCount: next, alignment: 16)
        grown.copyMemory(from: storage, byteCount: count)
        if capacity > 0 { storage.deallocate() }
        storage = grown
        capacity = next
    }

    @inline(__always) mutating func u8(_ v: UInt8) {
        reserve(1)
        storage.storeBytes(of: v, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always) mutating func fixed<T: FixedWidthInteger>(_ v: T) {
        let size = MemoryLayout<T>.size
        reserve(size)
        storage.storeBytes(of: v.littleEndian, toByteOffset: count, as: T.self)
        count += size
    }

    @inline(__always) mutating func varint(_ value: UInt64) {
        reserve(10)
        var v = value
        while v >= 0x80 {
            storage.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: count, as: UInt8.self)
            count += 1
            v >>= 7
        }
        storage.storeBytes(of: UInt8(v), toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always) mutating func varint(_ value: Int) { varint(UInt64(value)) }

    /// A UUID's 16 bytes (``Foundation/UUID/store(to:)``).
    @inline(__always) mutating func uuid(_ u: UUID) {
        reserve(16)
        u.store(to: storage + count)
        count += 16
    }

    /// Sets bits of a byte already written (a record's null bitmap).
    @inline(__always) mutating func setBits(_ bits: UInt8, at offset: Int) {
        let old = storage.load(fromByteOffset: offset, as: UInt8.self)
        storage.storeBytes(of: old | bits, toByteOffset: offset, as: UInt8.self)
    }

    @inline(__always) mutating func raw(_ data: UnsafeRawBufferPointer) {
        guard let base = data.baseAddress, data.count > 0 else { return }
        reserve(data.count)
        (storage + count).copyMemory(from: base, byteCount: data.count)
        count += data.count
    }

    mutating func raw(_ data: [UInt8]) { data.withUnsafeBytes { raw($0) } }

    mutating func raw(_ data: ArraySlice<UInt8>) { data.withUnsafeBytes { raw($0) } }

    @inline(__always) mutating func lengthPrefixed(_ data: UnsafeRawBufferPointer) {
        varint(UInt64(data.count))
        raw(data)
    }

    mutating func lengthPrefixed(_ data: UnsafeBufferPointer<UInt8>) { lengthPrefixed(UnsafeRawBufferPointer(data)) }

    mutating func lengthPrefixed(_ data: [UInt8]) { data.withUnsafeBytes { lengthPrefixed($0) } }

    mutating func lengthPrefixed(_ data: Data) { data.withUnsafeBytes { lengthPrefixed($0) } }

    /// A string's UTF-8 bytes, length-prefixed: one copy straight from a native string's storage (no copy of
    /// the string itself); bridged or foreign strings are made contiguous first.
    @inline(__always) mutating func string(_ s: String) {
        let done: Void? = s.utf8.withContiguousStorageIfAvailable { lengthPrefixed(UnsafeRawBufferPointer($0)) }
        if done == nil {
            var s = s
            s.withUTF8 { lengthPrefixed(UnsafeRawBufferPointer($0)) }
        }
    }
}

/// Reads what ``BinaryWriter`` wrote, from bytes that may be damaged: every read is bounds-checked and
/// throws ``DecodeFailure`` instead of trapping.
struct BinaryReader {
    let base: UnsafeRawBufferPointer
    var offset: Int
    let end: Int

    init(_ bytes: UnsafeRawBufferPointer, end: Int? = nil) {
        base = bytes
        offset = 0
        self.end = end ?? bytes.count
    }

    var remaining: Int { end - offset }
    var isAtEnd: Bool { offset >= end }

    @inline(__always) mutating func u8() throws -> UInt8 {
        guard offset < end else { throw DecodeFailure("truncated at byte \(offset)") }
        defer { offset += 1 }
        return base[offset]
    }

    @inline(__always) mutating func fixed<T: FixedWidthInteger>(_: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        guard end - offset >= size else { throw DecodeFailure("truncated at byte \(offset)") }
        let v = base.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += size
        return T(littleEndian: v)
    }

    @inline(__always) mutating func varint() throws -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard offset < end else { throw DecodeFailure("truncated varint at byte \(offset)") }
            let b = base[offset]
            offset += 1
            if shift == 63 && b > 1 { throw DecodeFailure("varint overflows 64 bits") }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 { throw DecodeFailure("overlong varint") }
                return result
            }
            shift += 7
            if shift > 63 { throw DecodeFailure("varint longer than 10 bytes") }
        }
    }

    /// A varint that must fit in `Int` and be at most `limit`.
    @inline(__always) mutating func count(limit: Int) throws -> Int {
        let v = try varint()
        guard limit >= 0, v <= UInt64(limit) else { throw DecodeFailure("count \(v) exceeds \(limit)") }
        return Int(v)
    }

    /// `length` bytes, pointing into the source.
    @inline(__always) mutating func bytes(_ length: Int) throws -> UnsafeRawBufferPointer {
        guard length >= 0, end - offset >= length else {
            throw DecodeFailure("length \(length) runs past the end (\(end - offset) bytes left)")
        }
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: base[offset..<(offset + length)])
    }

    /// A UUID's 16 bytes (``Foundation/UUID/loaded(from:)``).
    @inline(__always) mutating func uuid() throws -> UUID {
        UUID.loaded(from: try bytes(16).baseAddress.unsafelyUnwrapped)
    }

    @inline(__always) mutating func lengthPrefixed() throws -> UnsafeRawBufferPointer {
        let n = try count(limit: end - offset)
        return try bytes(n)
    }

    mutating func string() throws -> String {
        let raw = try lengthPrefixed()
        guard let s = String(validatingUTF8Bytes: raw) else { throw DecodeFailure("invalid UTF-8") }
        return s
    }

    mutating func skip(_ n: Int) throws { _ = try bytes(n) }
}

extension String {
    /// Decodes UTF-8, failing on invalid sequences instead of repairing them. ASCII text (the common case) is
    /// recognised eight bytes at a time and decoded without further checks; other text is decoded by the
    /// standard library's repairing decoder and accepted only when nothing was repaired. (The standard
    /// library's validating initializer is generic and not specialized for callers: it costs more than the
    /// decoding itself for short strings.)
    @inline(__always)
    init?(validatingUTF8Bytes raw: UnsafeRawBufferPointer) {
        let bytes = raw.assumingMemoryBound(to: UInt8.self)
        let decoded = String(decoding: bytes, as: UTF8.self)
        if !raw.isASCII {
            var same = false
            var copy = decoded
            copy.withUTF8 { utf8 in
                same = utf8.count == bytes.count && (bytes.isEmpty || memcmp(utf8.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
            }
            guard same else { return nil }
            self = copy
            return
        }
        self = decoded
    }
}

extension UnsafeRawBufferPointer {
    /// Whether every byte is below 0x80.
    @inline(__always)
    var isASCII: Bool {
        guard let base = baseAddress else { return true }
        var i = 0
        var high: UInt64 = 0
        while i + 8 <= count {
            high |= base.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < count {
            high |= UInt64(base.load(fromByteOffset: i, as: UInt8.self))
            i += 1
        }
        return high & 0x8080_8080_8080_8080 == 0
    }
}
