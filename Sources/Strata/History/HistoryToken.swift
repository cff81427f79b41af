import Foundation

/// A position in a store's change history: "every transaction up to here". Save the token of the last
/// transaction you applied, and ask for what follows it with ``Store/fetchHistory(after:limit:)`` or
/// ``Store/history(after:)`` — in another process, after the store was closed and opened again, or after it was
/// migrated.
///
/// A token is opaque: its text (``description``, also its `Codable` form, one JSON string) carries the store's
/// identity, the position and a checksum of the transaction it names, itself checksummed. A token is checked
/// before anything is read: a damaged one throws ``StoreError/Code-swift.struct/historyTokenInvalid``, one made
/// by another store ``StoreError/Code-swift.struct/historyTokenFromOtherStore``, one older than what the store
/// keeps ``StoreError/Code-swift.struct/historyExpired``, and one that names transactions the store has not
/// (an older copy was put in its place) ``StoreError/Code-swift.struct/historyDiverged``.
///
/// ```swift
/// let data = try JSONEncoder().encode(page.next)        // save it with what you applied
/// let token = try JSONDecoder().decode(HistoryToken.self, from: data)
/// ```
///
/// Tokens of one store are ordered as its transactions are; tokens of different stores compare by store first
/// (a total order, meaningless across stores).
public struct HistoryToken: Sendable, Hashable, Comparable, Codable, LosslessStringConvertible {
    /// The identity of the store that made the token (recorded when history was first turned on).
    public let storeIdentifier: UUID
    /// The history sequence number of the last transaction the token covers (0: before the first one).
    let sequence: UInt64
    /// The stored checksum of that transaction's entry (0 for sequence 0, or a position whose entry was
    /// deleted when the token was made).
    let entryChecksum: UInt32

    static let prefix = "strata-history-1."
    private static let byteCount = 1 + 16 + 8 + 4 + 4

    init(storeIdentifier: UUID, sequence: UInt64, entryChecksum: UInt32) {
        self.storeIdentifier = storeIdentifier
        self.sequence = sequence
        self.entryChecksum = entryChecksum
    }

    /// The token's text: save it and pass it to ``init(parsing:)``.
    public var description: String {
        var bytes: [UInt8] = [1]
        withUnsafeBytes(of: storeIdentifier.uuid) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: sequence.bigEndian) { bytes.append(contentsOf: $0) }
        withUnsafeBytes(of: entryChecksum.littleEndian) { bytes.append(contentsOf: $0) }
        let crc = Checksum.crc32c(bytes, seed: HistoryToken.seed)
        withUnsafeBytes(of: crc.littleEndian) { bytes.append(contentsOf: $0) }
        return HistoryToken.prefix + Base64URL.encode(bytes)
    }

    private static let seed = Checksum.crc32c(Array("strata.history.token".utf8))

    /// The token written as `description`, or nil when the text is not a valid token.
    public init?(_ description: String) {
        guard let token = try? HistoryToken(parsing: description) else { return nil }
        self = token
    }

    /// The token written as `text`.
    /// - Throws: ``StoreError/Code-swift.struct/historyTokenInvalid``, saying what is wrong with the text.
    public init(parsing text: String) throws(StoreError) {
        guard text.hasPrefix(HistoryToken.prefix) else {
            throw StoreError.historyTokenInvalid(reason: "it does not start with \"\(HistoryToken.prefix)\"")
        }
        guard let bytes = Base64URL.decode(text.dropFirst(HistoryToken.prefix.count)) else {
            throw StoreError.historyTokenInvalid(reason: "its text is not base64url")
        }
        guard bytes.count == HistoryToken.byteCount else {
            throw StoreError.historyTokenInvalid(reason: "it holds \(bytes.count) bytes, not \(HistoryToken.byteCount)")
        }
        let body = Array(bytes[0..<(bytes.count - 4)])
        let stored = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: bytes.count - 4, as: UInt32.self).littleEndian }
        guard Checksum.crc32c(body, seed: HistoryToken.seed) == stored else {
            throw StoreError.historyTokenInvalid(reason: "its checksum does not match")
        }
        guard bytes[0] == 1 else { throw StoreError.historyTokenInvalid(reason: "unknown token version \(bytes[0])") }
        let (uuid, sequence, checksum) = bytes.withUnsafeBytes { raw in
            (raw.loadUnaligned(fromByteOffset: 1, as: uuid_t.self),
             UInt64(bigEndian: raw.loadUnaligned(fromByteOffset: 17, as: UInt64.self)),
             UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 25, as: UInt32.self)))
        }
        self.init(storeIdentifier: UUID(uuid: uuid), sequence: sequence, entryChecksum: checksum)
    }

    /// Decodes the token from its text (one string).
    /// - Throws: ``StoreError/Code-swift.struct/historyTokenInvalid`` for a damaged text.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(parsing: text)
    }

    /// Encodes the token as its text (one string).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Orders tokens by store, then by position in the store's history.
    public static func < (a: HistoryToken, b: HistoryToken) -> Bool {
        if a.storeIdentifier != b.storeIdentifier {
            return withUnsafeBytes(of: a.storeIdentifier.uuid) { x in
                withUnsafeBytes(of: b.storeIdentifier.uuid) { y in x.lexicographicallyPrecedes(y) }
            }
        }
        return a.sequence < b.sequence
    }

    /// Tokens are equal when they name the same position of the same store's history.
    public static func == (a: HistoryToken, b: HistoryToken) -> Bool {
        a.storeIdentifier == b.storeIdentifier && a.sequence == b.sequence
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(storeIdentifier)
        hasher.combine(sequence)
    }
}

/// Base64 with the URL alphabet and no padding (RFC 4648 §5): tokens are safe in URLs, file names and JSON.
enum Base64URL {
    static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ text: Substring) -> [UInt8]? {
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }
}
