/// Why bytes could not be decoded (a record, a metadata value); becomes a typed public error naming the
/// record or the metadata key.
struct DecodeFailure: Error, Sendable, Equatable, CustomStringConvertible {
    let reason: String
    init(_ reason: String) { self.reason = reason }
    var description: String { reason }
}
