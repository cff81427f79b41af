import Foundation

/// The type of an attribute's values.
///
/// Each case fixes how values are stored in a record and how they appear in the schema's JSON form and in
/// exported objects (see <doc:SchemaJSON>).
///
/// ## Topics
/// ### Numbers
/// - ``int64``
/// - ``int32``
/// - ``int16``
/// - ``double``
/// - ``float``
/// - ``decimal``
/// ### Other scalars
/// - ``bool``
/// - ``string``
/// - ``date``
/// - ``data``
/// - ``uuid``
/// - ``url``
/// ### Encoded values
/// - ``codable(_:)``
public enum AttributeType: Sendable, Hashable {
    /// A 64-bit signed integer (Swift `Int` on 64-bit platforms, `Int64`).
    case int64
    /// A 32-bit signed integer.
    case int32
    /// A 16-bit signed integer.
    case int16
    /// A 64-bit IEEE 754 floating-point number.
    case double
    /// A 32-bit IEEE 754 floating-point number.
    case float
    /// A Boolean.
    case bool
    /// A Unicode string, stored as UTF-8.
    case string
    /// A point in time, stored exactly as Foundation's `timeIntervalSinceReferenceDate`.
    case date
    /// Raw bytes.
    case data
    /// A UUID.
    case uuid
    /// A URL, stored as its absolute string.
    case url
    /// A Foundation `Decimal`, stored exactly.
    case decimal
    /// A `Codable` value, stored as canonical JSON (sorted keys).
    ///
    /// `typeName` names the shape of the value (for example `"Point2D"`). It is part of the entity's
    /// version hash: when the shape changes, give it a new name (`"Point3D"`) so that stores written with
    /// the old shape are recognised and migrated.
    case codable(String)

    /// The name used in the schema JSON form and in version hashes (`"int64"`, `"codable"`, …).
    public var name: String {
        switch self {
        case .int64: "int64"
        case .int32: "int32"
        case .int16: "int16"
        case .double: "double"
        case .float: "float"
        case .bool: "bool"
        case .string: "string"
        case .date: "date"
        case .data: "data"
        case .uuid: "uuid"
        case .url: "url"
        case .decimal: "decimal"
        case .codable: "codable"
        }
    }

    /// The type's canonical spelling in version hashes: its ``name``, and for ``codable(_:)`` its type name.
    var canonicalSpelling: String {
        if case .codable(let typeName) = self { return "codable:" + typeName }
        return name
    }

    /// Creates a type from its JSON name; `codableTypeName` is required for `"codable"`.
    init?(name: String, codableTypeName: String?) {
        switch name {
        case "int64": self = .int64
        case "int32": self = .int32
        case "int16": self = .int16
        case "double": self = .double
        case "float": self = .float
        case "bool": self = .bool
        case "string": self = .string
        case "date": self = .date
        case "data": self = .data
        case "uuid": self = .uuid
        case "url": self = .url
        case "decimal": self = .decimal
        case "codable":
            guard let codableTypeName else { return nil }
            self = .codable(codableTypeName)
        default: return nil
        }
    }

    /// Whether values of this type are integers.
    public var isInteger: Bool { self == .int64 || self == .int32 || self == .int16 }

    /// The number of bits of an integer type.
    var integerBitWidth: Int? {
        switch self {
        case .int64: 64
        case .int32: 32
        case .int16: 16
        default: nil
        }
    }

    /// Whether a value of type `self` can be converted to `other` without loss, by a lightweight migration:
    /// Int16 → Int32 → Int64, Float → Double, any integer → Double.
    public func widens(to other: AttributeType) -> Bool {
        if let from = integerBitWidth, let to = other.integerBitWidth { return from < to }
        if self == .float && other == .double { return true }
        if isInteger && other == .double { return true }
        return false
    }

    /// Whether `value` is a non-null value of exactly this type's case (which ``coerce(_:)`` returns as it is).
    @inline(__always)
    func holdsExactly(_ value: Value) -> Bool {
        switch (self, value) {
        case (.int64, .int64), (.int32, .int32), (.int16, .int16), (.double, .double), (.float, .float),
             (.bool, .bool), (.string, .string), (.date, .date), (.data, .data), (.uuid, .uuid), (.url, .url),
             (.decimal, .decimal), (.codable, .codable):
            return true
        default:
            return false
        }
    }

    /// Returns `value` as a value of this type when that is exact: the same case, or a number literal
    /// that fits (an `.int64(5)` given for an Int16 attribute, a `.double` that is exactly a `Float`).
    /// `.null` is returned unchanged. Returns nil when the value cannot be stored without loss.
    public func coerce(_ value: Value) -> Value? {
        switch (self, value) {
        case (_, .null): return .null
        case (.int64, .int64), (.int32, .int32), (.int16, .int16), (.double, .double), (.float, .float),
             (.bool, .bool), (.string, .string), (.date, .date), (.data, .data), (.uuid, .uuid), (.url, .url),
             (.decimal, .decimal), (.codable, .codable):
            return value
        case (.int64, .int32(let v)): return .int64(Int64(v))
        case (.int64, .int16(let v)): return .int64(Int64(v))
        case (.int32, .int64(let v)): return Int32(exactly: v).map(Value.int32)
        case (.int32, .int16(let v)): return .int32(Int32(v))
        case (.int16, .int64(let v)): return Int16(exactly: v).map(Value.int16)
        case (.int16, .int32(let v)): return Int16(exactly: v).map(Value.int16)
        case (.double, .float(let v)): return .double(Double(v))
        case (.double, .int64(let v)):
            guard let d = Double(exactly: v) else { return nil }
            return .double(d)
        case (.float, .double(let v)):
            if v.isNaN { return .float(.nan) }
            guard let f = Float(exactly: v) else { return nil }
            return .float(f)
        default: return nil
        }
    }
}
