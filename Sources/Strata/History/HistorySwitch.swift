import Foundation

/// Records ``StoreConfiguration/history`` in the store when a writable handle opens it: turns the change
/// history on (the first time, with a new store identity for tokens), changes its retention, or turns it off.
enum HistorySwitch {
    static func apply(_ setting: HistorySetting, environment: Environment, meta: MetaTable) throws {
        switch setting {
        case .asRecorded:
            return
        case .enabled(let configuration):
            let recorded = try environment.read { try HistoryState.read(meta, in: $0) }
            if let recorded, recorded.isEnabled, recorded.configuration == configuration { return }
            try environment.write { txn in
                var state = try HistoryState.read(meta, in: txn)
                    ?? HistoryState(storeIdentifier: UUID(), isEnabled: true, floor: 0, configuration: configuration)
                // Turned on again after being off: the floor was moved past the last transaction when it was
                // turned off, so tokens from before expire (the commits made meanwhile are not in the history).
                state.isEnabled = true
                state.apply(configuration)
                try state.write(meta, in: txn)
                _ = try HistoryLog.entries(in: txn, create: true)
                _ = try HistoryLog.models(in: txn, create: true)
                try setFormat(FormatRecord.versionWithHistory, meta: meta, in: txn)
            }
        case .disabled:
            let recorded = try environment.read { try HistoryState.read(meta, in: $0) }
            guard recorded?.isEnabled == true else { return }
            try environment.write { txn in
                guard var state = try HistoryState.read(meta, in: txn), state.isEnabled else { return }
                let head = try HistoryLog.head(state, in: txn)
                if let dbi = try HistoryLog.entries(in: txn) { try txn.drop(dbi, delete: false) }
                // No transaction is recorded while history is off: every token made so far must expire, even
                // if history is turned on again.
                state.floor = try HistoryLog.sequence(after: head, path: environment.path)
                state.isEnabled = false
                try state.write(meta, in: txn)
                try setFormat(FormatRecord.versionWithoutHistory, meta: meta, in: txn)
            }
        }
    }

    /// Sets the store's format: 2 while it keeps a history, so that a Strata without history (which would commit
    /// without recording) refuses it.
    private static func setFormat(_ version: UInt16, meta: MetaTable, in txn: Transaction) throws {
        guard var format = try meta.read(.format, in: txn, FormatRecord.init(decoding:)) else {
            throw StoreError.corrupted(path: meta.path, reason: .metadata("the format record is missing"))
        }
        // An encrypted store keeps format 3 with or without history (no older Strata reads either), and one being
        // encrypted or decrypted keeps 4.
        guard format.formatVersion != version, format.formatVersion < FormatRecord.versionEncrypted else { return }
        format.formatVersion = version
        try meta.put(.format, format.encoded(), in: txn)
    }
}
