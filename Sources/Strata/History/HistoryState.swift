import Foundation

/// What a store records about its change history (the metadata value `changeHistory`): whether history is on,
/// the store's identity in tokens, how far the history was pruned, and its retention. Written when history is
/// turned on or off, when its retention changes, and by pruning; never by an ordinary commit (the newest
/// position is the history database's last key).
struct HistoryState: Equatable, Sendable {
    var storeIdentifier: UUID
    var isEnabled: Bool
    /// Every entry at or below this sequence was deleted (0: none ever was). Entries above it, up to the last
    /// key of the history database, all exist: they are only ever deleted from the front.
    var floor: UInt64
    var maximumTransactions: Int?
    var maximumAgeMilliseconds: Int64?
    var maximumBytes: Int?

    init(storeIdentifier: UUID, isEnabled: Bool, floor: UInt64, configuration: HistoryConfiguration) {
        self.storeIdentifier = storeIdentifier
        self.isEnabled = isEnabled
        self.floor = floor
        maximumTransactions = configuration.maximumTransactions
        maximumAgeMilliseconds = configuration.maximumAgeMilliseconds
        maximumBytes = configuration.maximumBytes
    }

    /// The retention as the public configuration states it.
    var configuration: HistoryConfiguration {
        HistoryConfiguration(maximumTransactions: maximumTransactions,
                             maximumAge: maximumAgeMilliseconds.map { .milliseconds($0) }, maximumBytes: maximumBytes)
    }

    mutating func apply(_ configuration: HistoryConfiguration) {
        maximumTransactions = configuration.maximumTransactions
        maximumAgeMilliseconds = configuration.maximumAgeMilliseconds
        maximumBytes = configuration.maximumBytes
    }

    /// The state recorded in the store (nil when history was never turned on).
    static func read(_ meta: MetaTable, in txn: Transaction) throws -> HistoryState? {
        try meta.read(.changeHistory, in: txn, HistoryState.init(decoding:))
    }

    func write(_ meta: MetaTable, in txn: Transaction) throws {
        try meta.put(.changeHistory, encoded(), in: txn)
    }

    func encoded() -> [UInt8] {
        var w = BinaryWriter()
        w.u8(1)
        w.uuid(storeIdentifier)
        w.u8(isEnabled ? 1 : 0)
        w.varint(floor)
        w.u8((maximumTransactions != nil ? 1 : 0) | (maximumAgeMilliseconds != nil ? 2 : 0) | (maximumBytes != nil ? 4 : 0))
        if let n = maximumTransactions { w.varint(UInt64(max(0, n))) }
        if let n = maximumAgeMilliseconds { w.varint(UInt64(max(0, n))) }
        if let n = maximumBytes { w.varint(UInt64(max(0, n))) }
        return w.bytes
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        let version = try r.u8()
        guard version == 1 else { throw DecodeFailure("history state version \(version)") }
        storeIdentifier = try r.uuid()
        isEnabled = try r.u8() == 1
        floor = try r.varint()
        let limits = try r.u8()
        maximumTransactions = limits & 1 != 0 ? try r.count(limit: Int.max) : nil
        maximumAgeMilliseconds = limits & 2 != 0 ? Int64(try r.count(limit: Int.max)) : nil
        maximumBytes = limits & 4 != 0 ? try r.count(limit: Int.max) : nil
        guard r.isAtEnd else { throw DecodeFailure("history state: \(r.remaining) bytes past the end") }
    }
}
