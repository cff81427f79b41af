import Crypto
import Foundation

/// Order-preserving encodings of attribute values as index keys.
///
/// Every key starts with a byte `0x01` (so that an empty string still makes a non-empty key), followed by:
/// - integers of any width: 8 bytes big-endian with the sign bit flipped, so Int16, Int32 and Int64 values
///   of one attribute keep the same keys when a migration widens it;
/// - floating-point numbers and dates: the IEEE 754 double, sign-flipped so byte order is numeric order;
/// - Booleans: one byte; UUIDs: 16 bytes; strings and URLs: UTF-8 (Unicode scalar order);
///   data and Codable values: their bytes; decimals: their text (equality only).
///
/// LMDB keys are at most 511 bytes. An encoding longer than ``inlineLimit`` bytes is cut to its first
/// ``inlineLimit`` bytes followed by its SHA-256, and lookups through such keys compare the objects'
/// actual values, so that two long values sharing a key are never confused.
///
/// An encrypted store keys its indexes by a keyed hash of the whole encoding instead
/// (``Transaction/indexKey(_:)``), which answers equality and unique constraints but orders nothing.
enum IndexKey {
    static let inlineLimit = 440

    static func encode(_ value: Value) -> [UInt8] {
        var out = plainEncoding(value)
        if out.count > 1 + inlineLimit {
            let digest = SHA256.hash(data: out[1...])
            out.removeSubrange((1 + inlineLimit)...)
            out.append(contentsOf: digest)
        }
        return out
    }

    /// The whole encoding of `value`, never cut: what an encrypted store hashes (``StoreCipher/indexKey(_:)``).
    static func plainEncoding(_ value: Value) -> [UInt8] {
        var out: [UInt8] = [0x01]
        switch value {
        case .null: break
        case .int64(let v): appendInteger(v, &out)
        case .int32(let v): appendInteger(Int64(v), &out)
        case .int16(let v): appendInteger(Int64(v), &out)
        case .double(let v): appendDouble(v, &out)
        case .float(let v): appendDouble(Double(v), &out)
        case .date(let v): appendDouble(v.timeIntervalSinceReferenceDate, &out)
        case .bool(let v): out.append(v ? 1 : 0)
        case .uuid(let v): out.append(contentsOf: v.bytes)
        case .string(let s): out.append(contentsOf: s.utf8)
        case .url(let u): out.append(contentsOf: u.absoluteString.utf8)
        case .data(let d): out.append(contentsOf: d)
        case .codable(let d): out.append(contentsOf: d)
        case .decimal(let d): out.append(contentsOf: (d.isNaN ? "NaN" : d.description).utf8)
        }
        return out
    }

    /// Whether a key was cut and hashed, so that matches must be confirmed against the objects' values.
    static func isHashed(_ key: [UInt8]) -> Bool { key.count > 1 + inlineLimit }

    private static func appendInteger(_ v: Int64, _ out: inout [UInt8]) {
        let u = UInt64(bitPattern: v) ^ (1 << 63)
        withUnsafeBytes(of: u.bigEndian) { out.append(contentsOf: $0) }
    }

    private static func appendDouble(_ v: Double, _ out: inout [UInt8]) {
        let canonical = v.isNaN ? Double.nan : (v == 0 ? 0.0 : v)
        var bits = canonical.bitPattern
        bits = (bits & (1 << 63)) != 0 ? ~bits : bits | (1 << 63)
        withUnsafeBytes(of: bits.bigEndian) { out.append(contentsOf: $0) }
    }
}
