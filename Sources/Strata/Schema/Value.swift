import Foundation

/// A value of an attribute, as the dynamic API reads and writes it.
///
/// Two values are equal when they are the same case and store the same bits: `.double(.nan)` equals
/// itself, and `.double(0)` differs from `.double(-0.0)`. That is the identity a store keeps; use
/// ``compare(_:)`` or the typed accessors for numeric comparisons.
///
/// `Value` can be written with literals: `"text"`, `42`, `3.5`, `true`, `nil`.
///
/// ## Topics
/// ### Reading a value
/// - ``isNull``
/// - ``int64Value``
/// - ``doubleValue``
/// - ``stringValue``
/// - ``boolValue``
/// - ``dateValue``
/// - ``dataValue``
/// - ``uuidValue``
/// - ``urlValue``
/// - ``decimalValue``
/// - ``decode(_:)``
/// ### Making a Codable value
/// - ``encoding(_:)``
public enum Value: Sendable {
    /// No value: an optional attribute that is not set.
    case null
    case int64(Int64)
    case int32(Int32)
    case int16(Int16)
    case double(Double)
    case float(Float)
    case bool(Bool)
    case string(String)
    case date(Date)
    case data(Data)
    case uuid(UUID)
    case url(URL)
    case decimal(Decimal)
    /// A `Codable` value in canonical JSON (UTF-8, sorted keys). Make one with ``encoding(_:)``.
    case codable(Data)

    /// Encodes `value` as canonical JSON (sorted keys) for a ``AttributeType/codable(_:)`` attribute.
    public static func encoding<T: Encodable>(_ value: T) throws -> Value {
        .codable(try CanonicalJSON.encode(value))
    }

    /// Decodes a ``codable(_:)`` value; throws ``StoreError/typeMismatch(expected:actual:)`` for any other case.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        guard case .codable(let data) = self else {
            throw StoreError.typeMismatch(expected: "a codable value", actual: caseName)
        }
        return try JSONDecoder().decode(T.self, from: data)
    }

    /// Whether this is ``null``.
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The integer value of any integer case.
    public var int64Value: Int64? {
        switch self {
        case .int64(let v): v
        case .int32(let v): Int64(v)
        case .int16(let v): Int64(v)
        default: nil
        }
    }

    /// The value of any numeric case as a `Double` (integers converted).
    public var doubleValue: Double? {
        switch self {
        case .double(let v): v
        case .float(let v): Double(v)
        case .int64(let v): Double(v)
        case .int32(let v): Double(v)
        case .int16(let v): Double(v)
        default: nil
        }
    }

    public var stringValue: String? { if case .string(let v) = self { v } else { nil } }
    public var boolValue: Bool? { if case .bool(let v) = self { v } else { nil } }
    public var dateValue: Date? { if case .date(let v) = self { v } else { nil } }
    public var dataValue: Data? { if case .data(let v) = self { v } else { nil } }
    public var uuidValue: UUID? { if case .uuid(let v) = self { v } else { nil } }
    public var urlValue: URL? { if case .url(let v) = self { v } else { nil } }
    public var decimalValue: Decimal? { if case .decimal(let v) = self { v } else { nil } }

    /// The name of the case, as used in error messages and JSON (`"int64"`, `"null"`, …): the name of the
    /// attribute type that stores it (``AttributeType/name``), or `"null"`.
    public var caseName: String { storageType?.name ?? "null" }

    /// Orders two values for sorting: numbers numerically (across integer and floating cases; NaN after
    /// every number, the same as any other NaN), strings by Unicode scalar order, dates chronologically,
    /// Booleans false < true, data and UUIDs by bytes. `.null` sorts before everything. Returns nil for
    /// values of unrelated kinds.
    public func compare(_ other: Value) -> ComparisonResult? {
        func order<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
            a < b ? .orderedAscending : (a == b ? .orderedSame : .orderedDescending)
        }
        switch (self, other) {
        case (.null, .null): return .orderedSame
        case (.null, _): return .orderedAscending
        case (_, .null): return .orderedDescending
        case (.string(let a), .string(let b)): return compareBytes(Array(a.utf8), Array(b.utf8))
        case (.bool(let a), .bool(let b)): return order(a ? 1 : 0, b ? 1 : 0)
        case (.date(let a), .date(let b)): return order(a, b)
        case (.uuid(let a), .uuid(let b)): return compareBytes(Array(a.bytes), Array(b.bytes))
        case (.data(let a), .data(let b)): return compareBytes(Array(a), Array(b))
        case (.url(let a), .url(let b)): return order(a.absoluteString, b.absoluteString)
        case (.decimal(let a), .decimal(let b)):
            if a.isNaN || b.isNaN { return nanOrder(a.isNaN, b.isNaN) }
            return order(a, b)
        case (.codable(let a), .codable(let b)): return compareBytes(Array(a), Array(b))
        default:
            if let a = int64Value, let b = other.int64Value { return order(a, b) }
            if let a = doubleValue, let b = other.doubleValue {
                if a.isNaN || b.isNaN { return nanOrder(a.isNaN, b.isNaN) }
                return order(a, b)
            }
            return nil
        }
    }

    /// NaN sorts after every number and the same as any other NaN (where indexes keep it), so that sorting by
    /// a numeric attribute is a total order.
    private func nanOrder(_ aIsNaN: Bool, _ bIsNaN: Bool) -> ComparisonResult {
        aIsNaN ? (bIsNaN ? .orderedSame : .orderedDescending) : .orderedAscending
    }

    private func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> ComparisonResult {
        if a == b { return .orderedSame }
        return a.lexicographicallyPrecedes(b) ? .orderedAscending : .orderedDescending
    }
}

extension Value: Hashable {
    public static func == (lhs: Value, rhs: Value) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.int64(let a), .int64(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.int16(let a), .int16(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        case (.bool(let a), .bool(let b)): a == b
        case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
        case (.date(let a), .date(let b)): a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.data(let a), .data(let b)): a == b
        case (.uuid(let a), .uuid(let b)): a == b
        case (.url(let a), .url(let b)): a.absoluteString == b.absoluteString
        case (.decimal(let a), .decimal(let b)): a.isNaN ? b.isNaN : (!b.isNaN && a == b && a.description == b.description)
        case (.codable(let a), .codable(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(caseName)
        switch self {
        case .null: break
        case .int64(let v): hasher.combine(v)
        case .int32(let v): hasher.combine(v)
        case .int16(let v): hasher.combine(v)
        case .double(let v): hasher.combine(v.bitPattern)
        case .float(let v): hasher.combine(v.bitPattern)
        case .bool(let v): hasher.combine(v)
        case .string(let v): hasher.combine(Array(v.utf8))
        case .date(let v): hasher.combine(v.timeIntervalSinceReferenceDate.bitPattern)
        case .data(let v): hasher.combine(v)
        case .uuid(let v): hasher.combine(v)
        case .url(let v): hasher.combine(v.absoluteString)
        case .decimal(let v): hasher.combine(v.description)
        case .codable(let v): hasher.combine(v)
        }
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByStringInterpolation
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int64(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
}

extension Value: CustomStringConvertible {
    public var description: String {
        switch self {
        case .null: "null"
        case .int64(let v): "\(v)"
        case .int32(let v): "\(v) (int32)"
        case .int16(let v): "\(v) (int16)"
        case .double(let v): "\(v)"
        case .float(let v): "\(v) (float)"
        case .bool(let v): "\(v)"
        case .string(let v): "\"\(v)\""
        case .date(let v): Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(v)
        case .data(let v): "<\(v.count) bytes>"
        case .uuid(let v): v.uuidString
        case .url(let v): v.absoluteString
        case .decimal(let v): "\(v) (decimal)"
        case .codable(let v): String(decoding: v, as: UTF8.self)
        }
    }
}

extension UUID {
    /// The 16 bytes of the UUID, in RFC 4122 order.
    var bytes: [UInt8] {
        withUnsafeBytes(of: uuid) { Array($0) }
    }

    init(bytes p: UnsafeRawBufferPointer) {
        var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: p.prefix(16))) }
        self.init(uuid: u)
    }
}

extension Value {
    /// The attribute type that stores this value as it is (nil for null). Codable values carry no type
    /// name: they are stored under a placeholder, the field type decides on reading.
    var storageType: AttributeType? {
        switch self {
        case .null: nil
        case .int64: .int64
        case .int32: .int32
        case .int16: .int16
        case .double: .double
        case .float: .float
        case .bool: .bool
        case .string: .string
        case .date: .date
        case .data: .data
        case .uuid: .uuid
        case .url: .url
        case .decimal: .decimal
        case .codable: .codable("_")
        }
    }
}

extension Array where Element == Value {
    /// A copy of these values with storage of its own, for a row that is about to be written into.
    ///
    /// Writing into a shared array (a binding's initial values) copies it first through the runtime's generic
    /// `swift_arrayInitWithCopy`, one value-witness call per element (about 400 instructions for a post of the
    /// benchmark's split, allocation included); this copies each value in code specialized for `Value` instead
    /// (the split's dynamic policy, which makes two such rows a post, ran 185 instructions a post fewer).
    @inline(__always)
    func withOwnStorage() -> [Value] {
        // (`init(unsafeUninitializedCapacity:)` is not specialized here: it looks the storage type up each call.)
        var copy: [Value] = []
        copy.reserveCapacity(count)
        for value in self { copy.append(value) }
        return copy
    }
}
