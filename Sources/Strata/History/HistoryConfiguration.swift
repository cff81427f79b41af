import Foundation

/// How long a store keeps its change history: transactions older than any of the limits are pruned, oldest
/// first, in short background write transactions (see <doc:ChangeHistory>).
///
/// Leave a limit nil to have none. The defaults keep a month of history, at most 256 MiB of it: enough for an
/// extension or a replica that has not run for weeks, bounded for an app that writes all day. A consumer whose
/// token is older than what is kept gets ``StoreError/Code-swift.struct/historyExpired`` and resynchronizes fully.
public struct HistoryConfiguration: Sendable, Hashable {
    /// The most transactions kept (nil: no limit by count).
    public var maximumTransactions: Int?
    /// The oldest a kept transaction may be, by its commit time (nil: no limit by age).
    public var maximumAge: Duration?
    /// The most bytes the history's entries may take in the data file (nil: no limit by size).
    public var maximumBytes: Int?

    /// A retention with the given limits (by default: 30 days, 256 MiB, any number of transactions).
    public init(maximumTransactions: Int? = nil, maximumAge: Duration? = .seconds(30 * 86_400), maximumBytes: Int? = 256 << 20) {
        self.maximumTransactions = maximumTransactions
        self.maximumAge = maximumAge
        self.maximumBytes = maximumBytes
    }

    /// 30 days, 256 MiB, any number of transactions.
    public static let `default` = HistoryConfiguration()

    /// No limit: history is kept until ``Store/deleteHistory(before:)`` deletes it.
    public static let unlimited = HistoryConfiguration(maximumTransactions: nil, maximumAge: nil, maximumBytes: nil)

    /// The age limit in milliseconds (how it is recorded in the store).
    var maximumAgeMilliseconds: Int64? {
        guard let age = maximumAge else { return nil }
        let (seconds, attoseconds) = age.components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? 0 : Int64.max }
        return max(0, milliseconds.addingReportingOverflow(attoseconds / 1_000_000_000_000_000).partialValue)
    }
}

/// Whether a store keeps a change history, as ``StoreConfiguration/history`` asks when the store is opened.
///
/// The setting is recorded in the store, not in the handle: once an app turns history on, every handle and
/// process that writes to the store — a widget, a tool, an older build of the app — records its transactions,
/// so the history has no gaps. A store with history on has format 2: a Strata that knows nothing of history
/// refuses to open it rather than write transactions the history would miss.
public enum HistorySetting: Sendable, Hashable {
    /// Follow what the store records (history stays as it is). The default.
    case asRecorded
    /// Turn history on (from this open on) or change its retention. Needs a writable handle.
    case enabled(HistoryConfiguration)
    /// Turn history off and delete it: every token made so far then expires
    /// (``StoreError/Code-swift.struct/historyExpired``), even if history is turned on again later.
    case disabled
}
