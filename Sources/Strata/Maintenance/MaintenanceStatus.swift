import Foundation

/// What a store's maintenance has left: records in older layouts (per entity and layout), indexes being
/// built, and retired databases still to empty. See ``Store/maintenanceStatus()``.
public struct MaintenanceStatus: Sendable, Codable, Hashable {
    /// One entity's state.
    public struct EntityStatus: Sendable, Codable, Hashable {
        public var name: String
        /// The layout new records are written in.
        public var currentLayout: UInt32
        /// Records left in each older layout, by layout ID; nil when the store does not know the counts (a
        /// store migrated by an earlier version of Strata: the sweep passes over the entity all the same).
        public var oldLayoutRecords: [UInt32: Int]?
        /// Indexes (attribute names) that writers maintain but that are not built yet: queries scan instead.
        public var indexesBuilding: [String]
    }

    public var entities: [EntityStatus]
    /// Databases earlier migrations retired that still hold entries.
    public var retiredDatabasesToEmpty: Int
    /// While a key rotation runs (``Store/rotateEncryptionKey(at:to:configuration:)``): the values still sealed under
    /// the previous key, at most — the previous key is needed to open the store until this is nil.
    public var valuesUnderPreviousKey: Int? = nil
    /// While the store is being encrypted (``Store/encrypt(at:with:configuration:)``): the values still plain, at most,
    /// then the entries whose pages are still to be written again (see <doc:Encryption>) — the key is needed to open
    /// the store from the beginning; this is nil once every value is sealed and every page written again
    /// (pieces of at most 15 bytes of a plain value can stay in free space: <doc:Encryption>, "Limits").
    public var valuesToEncrypt: Int? = nil
    /// While the store is being decrypted (``Store/decrypt(at:configuration:)``): the values still sealed, at most —
    /// the key is needed to open the store until this is nil; afterwards the store opens only without one.
    public var valuesToDecrypt: Int? = nil
    /// Records left in older layouts in all (counted ones).
    public var oldLayoutRecords: Int { entities.reduce(0) { $0 + ($1.oldLayoutRecords?.values.reduce(0, +) ?? 0) } }
    /// Whether nothing is left: every record in its current layout, every index built, nothing to empty.
    public var isComplete: Bool {
        valuesUnderPreviousKey == nil && valuesToEncrypt == nil && valuesToDecrypt == nil && retiredDatabasesToEmpty == 0 && entities.allSatisfy { ($0.oldLayoutRecords?.isEmpty ?? false) && $0.indexesBuilding.isEmpty }
    }
}

/// The progress of ``Store/performMaintenance(batchSize:progress:)``, after each batch.
public struct MaintenanceProgress: Sendable, CustomStringConvertible {
    /// The entity the last batch worked on (nil while retired databases are emptied).
    public var entity: String?
    /// Records rewritten into their current layout, index entries added and retired entries deleted so far.
    public var rewritten: Int
    public var indexed: Int
    public var deleted: Int
    /// Records of older layouts still counted, and indexes still being built.
    public var remainingOldRecords: Int
    public var remainingIndexes: Int
    /// Values a key change re-sealed under the new key (a rotation, encrypting) or stored plain (decrypting) so far.
    public var resealed: Int = 0

    public var description: String {
        "maintenance\(entity.map { " of \($0)" } ?? ""): \(rewritten) records rewritten, \(indexed) index entries, "
            + "\(deleted) retired entries deleted; \(remainingOldRecords) old-layout records and \(remainingIndexes) indexes left"
    }
}
