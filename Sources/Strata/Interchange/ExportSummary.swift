/// What an export wrote: returned by `Store.exportObjects(to:entities:progress:)`.
public struct ExportSummary: Sendable, Hashable {
    /// Objects written, by entity name (every exported entity, those without objects included).
    public var objectsByEntity: [String: Int] = [:]
    /// The bytes of JSON Lines written.
    public var byteCount = 0

    public init() {}

    /// All the objects written.
    public var objectCount: Int { objectsByEntity.values.reduce(0, +) }
}
