import Foundation

/// The documented JSON forms of attribute values (see <doc:SchemaJSON>):
///
/// | type | JSON |
/// |---|---|
/// | int64, int32, int16 | a number |
/// | double, float | a number, or `"nan"`, `"inf"`, `"-inf"` |
/// | bool | `true` / `false` |
/// | string | a string |
/// | date | a number: seconds since 2001-01-01T00:00:00Z (Core Data's reference date), exact; an ISO 8601 string is accepted on input |
/// | data | a Base64 string |
/// | uuid | a string such as `"E621E1F8-C36C-495A-93FC-0C247A3E6E5F"` |
/// | url | a string |
/// | decimal | a string such as `"-12.5"` (or `"NaN"`) |
/// | codable | the JSON value itself |
/// | null | `null` |
public enum ValueJSON {
    /// The JSON form of `value`.
    public static func json(for value: Value) -> JSONValue {
        switch value {
        case .null: return .null
        case .int64(let v): return .integer(v)
        case .int32(let v): return .integer(Int64(v))
        case .int16(let v): return .integer(Int64(v))
        case .double(let v): return floating(v)
        // Through `floating` like doubles, so that -0.0 keeps its sign (a bare `-0` reads back as integer 0).
        case .float(let v): return floating(Double(v))
        case .bool(let v): return .bool(v)
        case .string(let v): return .string(v)
        case .date(let v): return floating(v.timeIntervalSinceReferenceDate)
        case .data(let v): return .string(v.base64EncodedString())
        case .uuid(let v): return .string(v.uuidString)
        case .url(let v): return .string(v.absoluteString)
        case .decimal(let v): return .string(v.isNaN ? "NaN" : v.description)
        case .codable(let data): return (try? JSONValue.parse(data)) ?? .null
        }
    }

    private static func floating(_ v: Double) -> JSONValue {
        if v.isNaN { return .string("nan") }
        if v.isInfinite { return .string(v < 0 ? "-inf" : "inf") }
        if v == 0 && v.sign == .minus { return .string("-0") }
        return .number(v)
    }

    /// Reads a value of `type` from its JSON form.
    /// - Throws: ``ValueJSONError`` saying what was expected.
    public static func value(from json: JSONValue, type: AttributeType) throws(ValueJSONError) -> Value {
        if case .null = json { return .null }
        switch type {
        case .int64:
            guard let i = integer(json) else { throw .expected("an integer", got: json) }
            return .int64(i)
        case .int32:
            guard let i = integer(json), let v = Int32(exactly: i) else { throw .expected("a 32-bit integer", got: json) }
            return .int32(v)
        case .int16:
            guard let i = integer(json), let v = Int16(exactly: i) else { throw .expected("a 16-bit integer", got: json) }
            return .int16(v)
        case .double:
            guard let d = double(json) else { throw .expected("a number", got: json) }
            return .double(d)
        case .float:
            guard let d = double(json) else { throw .expected("a number", got: json) }
            return .float(d.isNaN ? .nan : Float(d))
        case .bool:
            guard case .bool(let b) = json else { throw .expected("true or false", got: json) }
            return .bool(b)
        case .string:
            guard case .string(let s) = json else { throw .expected("a string", got: json) }
            return .string(s)
        case .date:
            if let d = double(json), !d.isNaN { return .date(Date(timeIntervalSinceReferenceDate: d)) }
            if case .string(let s) = json, let date = parseISO8601(s) { return .date(date) }
            throw .expected("a date (seconds since 2001-01-01, or ISO 8601)", got: json)
        case .data:
            guard case .string(let s) = json, let d = Data(base64Encoded: s) else { throw .expected("Base64 data", got: json) }
            return .data(d)
        case .uuid:
            guard case .string(let s) = json, let u = UUID(uuidString: s) else { throw .expected("a UUID string", got: json) }
            return .uuid(u)
        case .url:
            guard case .string(let s) = json, let u = URL(string: s) else { throw .expected("a URL string", got: json) }
            return .url(u)
        case .decimal:
            guard case .string(let s) = json, let d = DecimalText.parse(s) else { throw .expected("a decimal string", got: json) }
            return .decimal(d)
        case .codable:
            guard let data = try? json.serialized() else { throw .expected("a JSON value", got: json) }
            return .codable(data)
        }
    }

    private static func integer(_ json: JSONValue) -> Int64? {
        switch json {
        case .integer(let i): i
        case .number(let d): Int64(exactly: d)
        default: nil
        }
    }

    private static func double(_ json: JSONValue) -> Double? {
        switch json {
        case .integer(let i): Double(i)
        case .number(let d): d
        case .string("nan"): .nan
        case .string("inf"): .infinity
        case .string("-inf"): -.infinity
        case .string("-0"): -0.0
        default: nil
        }
    }

    private static func parseISO8601(_ s: String) -> Date? {
        if let d = try? Date(s, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) { return d }
        return try? Date(s, strategy: Date.ISO8601FormatStyle())
    }
}

/// A JSON value that is not of the form an attribute's type needs.
public enum ValueJSONError: Error, Sendable, Hashable, CustomStringConvertible {
    case expected(String, got: JSONValue)

    public var description: String {
        switch self {
        case .expected(let what, let got):
            return "expected \(what), got \(JSONText.short(got))"
        }
    }
}

/// Exact text form of `Decimal`.
enum DecimalText {
    /// Parses decimal text (`-12.50`, `1e-3`, `NaN`), refusing anything that is not entirely a number, and
    /// returns the canonical value (the one its own description reads back as), so that storing it again
    /// gives the same value.
    static func parse(_ s: String) -> Decimal? {
        if s == "NaN" { return Decimal.nan }
        guard isNumber(s), let d = Decimal(string: s, locale: posix), !d.isNaN else { return nil }
        guard let canonical = Decimal(string: d.description, locale: posix), canonical == d else { return nil }
        return canonical
    }

    /// Parses the text Strata writes in records (`Decimal.description`), and only that: any other spelling
    /// of a number is damage.
    static func parseCanonical(_ s: String) -> Decimal? {
        guard let d = parse(s) else { return nil }
        return d.isNaN || d.description == s ? d : nil
    }

    private static let posix = Locale(identifier: "en_US_POSIX")

    /// `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`
    static func isNumber(_ s: String) -> Bool {
        var bytes = Array(s.utf8)[...]
        func digits() -> Int {
            var n = 0
            while let b = bytes.first, b >= 48 && b <= 57 { bytes.removeFirst(); n += 1 }
            return n
        }
        if let b = bytes.first, b == 43 || b == 45 { bytes.removeFirst() }
        var mantissa = digits()
        if bytes.first == 46 {
            bytes.removeFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return false }
        if let b = bytes.first, b == 101 || b == 69 {
            bytes.removeFirst()
            if let b = bytes.first, b == 43 || b == 45 { bytes.removeFirst() }
            guard digits() > 0 else { return false }
        }
        return bytes.isEmpty
    }
}
