import Foundation

/// The byte form of a stored record (format 1), documented in <doc:StorageFormat>:
///
/// ```
/// u8      format (1)
/// varint  layout ID: which physical layout of the entity wrote the record
/// bytes   null bitmap, ceil(fields / 8) bytes; bit i set = field i is null
/// fields  each non-null field in layout order:
///           int64/int32/int16/double/float/date  little-endian, 8/4/2/8/4/8 bytes (date = Double seconds
///                                                since 2001-01-01, as Foundation stores it)
///           bool   1 byte, 0 or 1
///           uuid   16 bytes
///           string, url, data, decimal, codable   varint length + bytes (UTF-8 / raw / Decimal text / JSON)
/// u32     CRC-32C, little-endian, of: entity tag (u32 BE) ‖ object ID (u64 BE) ‖ every byte above
/// ```
///
/// The checksum covers the record's key and entity too, so a record moved under another key is detected.
enum RecordFormat {
    static let version: UInt8 = 1
    static let checksumSize = 4
    /// The largest record Strata writes (LMDB allows up to 4 GiB; a map of that size is rarely wanted).
    static let maximumSize = 1 << 30
}

/// Type codes used in the catalog's binary form and for tagged values.
enum TypeCode {
    static func code(_ type: AttributeType) -> UInt8 {
        switch type {
        case .int64: 1
        case .int32: 2
        case .int16: 3
        case .double: 4
        case .float: 5
        case .bool: 6
        case .string: 7
        case .date: 8
        case .data: 9
        case .uuid: 10
        case .url: 11
        case .decimal: 12
        case .codable: 13
        }
    }

    /// The code of the type that stores `value` as it is (0 for null): compared with an attribute's code
    /// (``EntityBinding/attributeCodes``), it tells whether a value has the attribute's type without copying either.
    /// The same table as ``code(_:)``, switched on the value itself: `code(value.storageType)` costs the dynamic
    /// split 0.9 % more instructions (an `AttributeType` made for every value set by name). `RecordEncodingTests`
    /// checks that the two agree for every case.
    @inline(__always)
    static func code(of value: Value) -> UInt8 {
        switch value {
        case .null: 0
        case .int64: 1
        case .int32: 2
        case .int16: 3
        case .double: 4
        case .float: 5
        case .bool: 6
        case .string: 7
        case .date: 8
        case .data: 9
        case .uuid: 10
        case .url: 11
        case .decimal: 12
        case .codable: 13
        }
    }

    static func write(_ type: AttributeType, to w: inout BinaryWriter) {
        w.u8(code(type))
        if case .codable(let name) = type { w.string(name) }
    }

    static func read(from r: inout BinaryReader) throws -> AttributeType {
        switch try r.u8() {
        case 1: return .int64
        case 2: return .int32
        case 3: return .int16
        case 4: return .double
        case 5: return .float
        case 6: return .bool
        case 7: return .string
        case 8: return .date
        case 9: return .data
        case 10: return .uuid
        case 11: return .url
        case 12: return .decimal
        case 13: return .codable(try r.string())
        case let c: throw DecodeFailure("unknown type code \(c)")
        }
    }
}
