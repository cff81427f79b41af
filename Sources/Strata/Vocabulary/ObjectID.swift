/// The identity of an object, unique within its store and stable for the object's whole life — across
/// updates, reopenings and migrations, including renames of its entity.
///
/// Identifiers are allocated in increasing order from a store-wide counter and never reused.
public struct ObjectID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The identifier's number.
    public let rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static func < (lhs: ObjectID, rhs: ObjectID) -> Bool { lhs.rawValue < rhs.rawValue }

    public var description: String { "#\(rawValue)" }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}
