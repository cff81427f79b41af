import Foundation

/// Encodes and decodes single field values in the record format.
enum FieldCodec {
    /// Appends `value` (already of `type`, never null) to `w`.
    @inline(__always)
    static func encode(_ value: Value, as type: AttributeType, into w: inout BinaryWriter) throws(DecodeFailure) {
        switch (type, value) {
        case (.int64, .int64(let v)): w.fixed(v)
        case (.int32, .int32(let v)): w.fixed(v)
        case (.int16, .int16(let v)): w.fixed(v)
        case (.double, .double(let v)): w.fixed(v.bitPattern)
        case (.float, .float(let v)): w.fixed(v.bitPattern)
        case (.bool, .bool(let v)): w.u8(v ? 1 : 0)
        case (.date, .date(let v)): w.fixed(v.timeIntervalSinceReferenceDate.bitPattern)
        case (.uuid, .uuid(let v)): w.uuid(v)
        case (.string, .string(var s)):
            s.withUTF8 { w.lengthPrefixed($0) }
        case (.url, .url(let u)):
            var s = u.absoluteString
            s.withUTF8 { w.lengthPrefixed($0) }
        case (.data, .data(let d)):
            w.varint(UInt64(d.count))
            d.withUnsafeBytes { w.raw($0) }
        case (.decimal, .decimal(let d)):
            var s = d.isNaN ? "NaN" : d.description
            s.withUTF8 { w.lengthPrefixed($0) }
        case (.codable, .codable(let d)):
            w.varint(UInt64(d.count))
            d.withUnsafeBytes { w.raw($0) }
        default:
            throw DecodeFailure("a \(value.caseName) value cannot be stored in a \(type.name) field")
        }
    }

    /// Appends `value` to `w` as a field of type code `code` (see ``TypeCode``); returns false when the
    /// value is not of that type. The record writer's fast path: no `AttributeType` is copied.
    @inline(__always)
    static func encode(_ value: Value, code: UInt8, into w: inout BinaryWriter) -> Bool {
        // Switched on the value alone (a tuple with the code would copy it), each case checking the code.
        switch value {
        case .int64(let v): guard code == 1 else { return false }; w.fixed(v)
        case .int32(let v): guard code == 2 else { return false }; w.fixed(v)
        case .int16(let v): guard code == 3 else { return false }; w.fixed(v)
        case .double(let v): guard code == 4 else { return false }; w.fixed(v.bitPattern)
        case .float(let v): guard code == 5 else { return false }; w.fixed(v.bitPattern)
        case .bool(let v): guard code == 6 else { return false }; w.u8(v ? 1 : 0)
        case .string(let s): guard code == 7 else { return false }; w.string(s)
        case .date(let v): guard code == 8 else { return false }; w.fixed(v.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let d):
            guard code == 9 else { return false }
            w.varint(UInt64(d.count))
            d.withUnsafeBytes { w.raw($0) }
        case .uuid(let v): guard code == 10 else { return false }; w.uuid(v)
        case .url(let u): guard code == 11 else { return false }; w.string(u.absoluteString)
        case .decimal(let d): guard code == 12 else { return false }; w.string(d.isNaN ? "NaN" : d.description)
        case .codable(let d):
            guard code == 13 else { return false }
            w.varint(UInt64(d.count))
            d.withUnsafeBytes { w.raw($0) }
        default: return false
        }
        return true
    }

    /// Reads one non-null field of `type`.
    @inline(__always)
    static func decode(_ type: AttributeType, from r: inout BinaryReader) throws -> Value {
        try decode(code: TypeCode.code(type), from: &r)
    }

    /// Reads one non-null field whose type has this ``TypeCode`` (decoding by code spares copying an
    /// ``AttributeType``, whose `codable` case holds a string, for every field of every record).
    @inline(__always)
    static func decode(code: UInt8, from r: inout BinaryReader) throws -> Value {
        switch code {
        case 1: return .int64(try r.fixed(Int64.self))
        case 2: return .int32(try r.fixed(Int32.self))
        case 3: return .int16(try r.fixed(Int16.self))
        case 4: return .double(Double(bitPattern: try r.fixed(UInt64.self)))
        case 5: return .float(Float(bitPattern: try r.fixed(UInt32.self)))
        case 6:
            switch try r.u8() {
            case 0: return .bool(false)
            case 1: return .bool(true)
            case let b: throw DecodeFailure("invalid Boolean byte \(b)")
            }
        case 7: return .string(try r.string())
        case 8: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try r.fixed(UInt64.self))))
        case 9: return .data(Data(try r.lengthPrefixed()))
        case 10: return .uuid(try r.uuid())
        case 11:
            let s = try r.string()
            guard let url = URL(string: s) else { throw DecodeFailure("invalid URL text") }
            return .url(url)
        case 12:
            let s = try r.string()
            guard let d = DecimalText.parseCanonical(s) else { throw DecodeFailure("invalid decimal text") }
            return .decimal(d)
        case 13: return .codable(Data(try r.lengthPrefixed()))
        default: throw DecodeFailure("unknown field type code \(code)")
        }
    }

    /// Skips one non-null field of `type`, returning its byte range in the reader's buffer.
    @inline(__always)
    static func skip(_ type: AttributeType, in r: inout BinaryReader) throws -> Range<Int> {
        try skip(code: TypeCode.code(type), in: &r)
    }

    /// Skips one non-null field whose type has this ``TypeCode``, returning its byte range.
    @inline(__always)
    static func skip(code: UInt8, in r: inout BinaryReader) throws -> Range<Int> {
        let start = r.offset
        switch code {
        case 1, 4, 8: try r.skip(8)
        case 2, 5: try r.skip(4)
        case 3: try r.skip(2)
        case 6:
            let b = try r.u8()
            if b > 1 { throw DecodeFailure("invalid Boolean byte \(b)") }
        case 10: try r.skip(16)
        case 7, 9, 11, 12, 13: _ = try r.lengthPrefixed()
        default: throw DecodeFailure("unknown field type code \(code)")
        }
        return start..<r.offset
    }

    /// Writes a value with its type code first (for defaults and constants in metadata).
    static func encodeTagged(_ value: Value, into w: inout BinaryWriter) {
        guard let type = value.storageType else { w.u8(0); return }
        TypeCode.write(type, to: &w)
        // A value always matches its own storage type.
        try? encode(value, as: type, into: &w)
    }

    static func decodeTagged(from r: inout BinaryReader) throws -> Value {
        if r.remaining > 0, r.base[r.offset] == 0 { _ = try r.u8(); return .null }
        let type = try TypeCode.read(from: &r)
        return try decode(type, from: &r)
    }
}
