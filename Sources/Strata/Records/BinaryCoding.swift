import CStrataSupport
import Foundation

/// CRC-32C over a sequence of byte ranges (hardware-accelerated).
enum Checksum {
    @inline(__always)
    static func crc32c(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
        strata_crc32c(seed, bytes.baseAddress, bytes.count)
    }

    static func crc32c(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        bytes.withUnsafeBytes { crc32c($0, seed: seed) }
    }
}

/// Appends little-endian integers, LEB128 varints and length-prefixed bytes to a reusable buffer.
struct BinaryWriter {
    var bytes: [UInt8]

    init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func reset() { bytes.removeAll(keepingCapacity: true) }

    @inline(__always) mutating func u8(_ v: UInt8) { bytes.append(v) }

    @inline(__always) mutating func fixed<T: FixedWidthInteger>(_ v: T) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always) mutating func varint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    @inline(__always) mutating func varint(_ value: Int) { varint(UInt64(value)) }

    mutating func lengthPrefixed<C: Collection>(_ data: C) where C.Element == UInt8 {
        varint(UInt64(data.count))
        bytes.append(contentsOf: data)
    }

    mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { lengthPrefixed($0) }
    }

    mutating func raw(_ data: UnsafeRawBufferPointer) { bytes.append(contentsOf: data) }
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
    /// Decodes UTF-8, failing on invalid sequences instead of repairing them.
    init?(validatingUTF8Bytes raw: UnsafeRawBufferPointer) {
        let buffer = raw.assumingMemoryBound(to: UInt8.self)
        // ASCII (the common case) is valid UTF-8 as it is, and `String(decoding:)` of valid UTF-8 is exact:
        // a word-at-a-time check avoids the generic validating initializer's cost on every text field.
        if Self.isASCII(raw) {
            self = String(decoding: buffer, as: UTF8.self)
            return
        }
        guard let s = String(validating: buffer, as: UTF8.self) else { return nil }
        self = s
    }

    @inline(__always)
    private static func isASCII(_ raw: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        var bits: UInt64 = 0
        let n = raw.count
        while i + 8 <= n {
            bits |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            i += 8
        }
        while i < n {
            bits |= UInt64(raw[i])
            i += 1
        }
        return bits & 0x8080_8080_8080_8080 == 0
    }
}
