import Foundation

/// Reads the change history in one read transaction: checks a token against the store's history, and turns
/// stored entries into ``HistoryTransaction``s named by the models that wrote them.
struct HistoryReader {
    let txn: Transaction
    let state: HistoryState
    /// The entries database (nil when no entry was ever written).
    let entries: DatabaseHandle?
    var path: String { txn.environment.path }

    /// - Throws: ``StoreError/Code-swift.struct/historyDisabled`` when the store keeps no history.
    init(txn: Transaction, meta: MetaTable) throws {
        guard let state = try HistoryState.read(meta, in: txn), state.isEnabled else {
            throw StoreError.historyDisabled(path: txn.environment.path)
        }
        self.txn = txn
        self.state = state
        entries = try HistoryLog.entries(in: txn)
    }

    func head() throws -> UInt64 { try HistoryLog.head(state, in: txn) }

    /// The stored bytes of the entry `sequence`, if it exists.
    private func storedEntry(_ sequence: UInt64) throws -> UnsafeRawBufferPointer? {
        guard let entries, sequence > 0 else { return nil }
        return try HistoryLog.withKey(sequence) { try txn.get(entries, key: $0) }
    }

    /// The token of the position after transaction `sequence` (0: before the first).
    func token(after sequence: UInt64) throws -> HistoryToken {
        let checksum = try storedEntry(sequence).map(HistoryCodec.storedChecksum) ?? 0
        return HistoryToken(storeIdentifier: state.storeIdentifier, sequence: sequence, entryChecksum: checksum)
    }

    /// The position `token` names, once checked: made by this store, not older than the history kept, not past
    /// its newest transaction, and naming the transaction this store has there. Nil means "from the first
    /// transaction ever recorded".
    func position(of token: HistoryToken?) throws -> UInt64 {
        guard let token else {
            if state.floor > 0 {
                throw StoreError.historyExpired(path: path, reason: "transactions 1 to \(state.floor) were deleted; the history starts after them")
            }
            return 0
        }
        guard token.storeIdentifier == state.storeIdentifier else {
            throw StoreError.historyTokenFromOtherStore(path: path, tokenStore: token.storeIdentifier.uuidString,
                                                        store: state.storeIdentifier.uuidString)
        }
        let head = try head()
        if token.sequence > head {
            throw StoreError.historyDiverged(path: path, reason: "the token is at transaction \(token.sequence), the store's history ends at \(head)")
        }
        if token.sequence < state.floor {
            throw StoreError.historyExpired(path: path, reason: "the token is at transaction \(token.sequence); transactions up to \(state.floor) were deleted")
        }
        if token.entryChecksum != 0, let stored = try storedEntry(token.sequence),
           HistoryCodec.storedChecksum(stored) != token.entryChecksum {
            throw StoreError.historyDiverged(path: path, reason: "transaction \(token.sequence) is not the one the token was taken after")
        }
        return token.sequence
    }

    /// Up to `limit` transactions after `sequence`, oldest first.
    func page(after sequence: UInt64, limit: Int) throws -> HistoryPage {
        var transactions: [HistoryTransaction] = []
        var last = sequence
        var lastChecksum: UInt32? = nil
        var isAtEnd = true
        if let entries, limit > 0 {
            let cursor = try txn.cursor(entries)
            var entry = try HistoryLog.withKey(sequence &+ 1) { try cursor.seek($0) }
            var expected = sequence &+ 1
            while let current = entry {
                guard let n = HistoryLog.number(of: current.key) else {
                    throw StoreError.corruptedHistory(path: path, sequence: expected, reason: "a key of \(current.key.count) bytes")
                }
                guard n == expected else {
                    throw StoreError.corruptedHistory(path: path, sequence: expected, reason: "transaction \(expected) is missing (the next kept is \(n))")
                }
                if transactions.count >= limit {
                    isAtEnd = false
                    break
                }
                let decoded: HistoryEntry
                do {
                    decoded = try HistoryCodec.decode(current.value, sequence: n)
                } catch {
                    throw StoreError.corruptedHistory(path: path, sequence: n, reason: error.reason)
                }
                let checksum = HistoryCodec.storedChecksum(current.value)
                transactions.append(try transaction(decoded, sequence: n, checksum: checksum))
                last = n
                lastChecksum = checksum
                expected = n &+ 1
                entry = try cursor.next()
            }
        }
        let next = try lastChecksum.map { HistoryToken(storeIdentifier: state.storeIdentifier, sequence: last, entryChecksum: $0) }
            ?? token(after: last)
        return HistoryPage(transactions: transactions, next: next, isAtEnd: isAtEnd)
    }

    /// A stored entry, named by its model.
    func transaction(_ entry: HistoryEntry, sequence: UInt64, checksum: UInt32) throws -> HistoryTransaction {
        let model = try HistoryLog.model(entry.modelID, in: txn, sequence: sequence)
        var source: HistoryModel? = nil
        var migration: HistoryMigration? = nil
        if let part = entry.migration {
            let from = try HistoryLog.model(part.sourceModelID, in: txn, sequence: sequence)
            source = from
            var steps: [String: HistoryMigration.Step] = [:]
            for (tag, step) in part.steps {
                guard let names = model.entity(tag: tag) ?? from.entity(tag: tag) else {
                    throw StoreError.corruptedHistory(path: path, sequence: sequence, reason: "its migration names an entity (tag \(tag)) neither model has")
                }
                steps[names.name] = step
            }
            migration = HistoryMigration(sourceVersion: from.versionIdentifier, destinationVersion: model.versionIdentifier, steps: steps)
        }
        var changes: [HistoryEntityChanges] = []
        changes.reserveCapacity(entry.entities.count)
        for (tag, e) in entry.entities {
            guard let names = model.entity(tag: tag) ?? source?.entity(tag: tag) else {
                throw StoreError.corruptedHistory(path: path, sequence: sequence, reason: "it names an entity (tag \(tag)) its model does not have")
            }
            changes.append(Self.changes(e, names: names))
        }
        changes.sort { $0.entity < $1.entity }
        return HistoryTransaction(
            token: HistoryToken(storeIdentifier: state.storeIdentifier, sequence: sequence, entryChecksum: checksum),
            date: Date(timeIntervalSince1970: Double(entry.time) / 1000), author: entry.author,
            modelVersion: model.versionIdentifier, migration: migration, changes: changes)
    }

    private static func changes(_ e: EntityChanges, names: HistoryModel.Entity) -> HistoryEntityChanges {
        // Updates are grouped by mask: each group's names are made once and shared.
        var namesOfMask: [UInt64: [String]] = [:]
        let updated = e.updated.map { update -> HistoryUpdate in
            if let known = namesOfMask[update.properties.bits] { return HistoryUpdate(id: ObjectID(rawValue: update.id), properties: known) }
            let made = names.names(of: update.properties)
            namesOfMask[update.properties.bits] = made
            return HistoryUpdate(id: ObjectID(rawValue: update.id), properties: made)
        }
        var deleted: [HistoryDeletion] = []
        deleted.reserveCapacity(e.deleted.count)
        for (i, id) in e.deleted.enumerated() {
            var tombstone: [String: Value] = [:]
            if i < e.tombstones.count {
                for (k, value) in e.tombstones[i].enumerated() where k < names.preserved.count {
                    tombstone[names.attributes[names.preserved[k]]] = value
                }
            }
            deleted.append(HistoryDeletion(id: ObjectID(rawValue: id), tombstone: tombstone))
        }
        return HistoryEntityChanges(entity: names.name, inserted: e.inserted.map(ObjectID.init(rawValue:)), updated: updated,
                                    deleted: deleted, isComplete: e.isComplete)
    }

    /// The history's extent and size.
    func info() throws -> HistoryInfo {
        let head = try head()
        var transactions = 0
        var changes = 0
        var bytes = 0
        if let entries {
            let stat = try txn.statistics(entries)
            transactions = stat.ms_entries
            bytes = (stat.ms_branch_pages + stat.ms_leaf_pages + stat.ms_overflow_pages) * Int(stat.ms_psize)
            let cursor = try txn.cursor(entries)
            var entry = try cursor.first()
            while let current = entry {
                let n = HistoryLog.number(of: current.key) ?? 0
                do {
                    changes += try HistoryCodec.decode(current.value, sequence: n).changeCount
                } catch {
                    throw StoreError.corruptedHistory(path: path, sequence: n, reason: error.reason)
                }
                entry = try cursor.next()
            }
        }
        return HistoryInfo(isEnabled: state.isEnabled, configuration: state.configuration, storeIdentifier: state.storeIdentifier,
                           oldest: try token(after: state.floor), newest: try token(after: head),
                           transactions: transactions, changes: changes, bytes: bytes)
    }
}

extension ReadContext {
    /// The change history's position at this snapshot: the token after the last transaction this read sees.
    /// Read it in the same ``Store/read(_:)`` as the objects you copy, and follow the history from it: nothing
    /// is missed, nothing applied twice.
    /// - Throws: ``StoreError/Code-swift.struct/historyDisabled`` when the store keeps no history.
    public func historyToken() throws -> HistoryToken {
        let reader = try HistoryReader(txn: txn, meta: model.meta)
        return try reader.token(after: try reader.head())
    }
}
