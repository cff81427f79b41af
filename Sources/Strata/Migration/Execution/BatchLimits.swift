import Foundation

/// When a migration batch (one write transaction) ends: after ``MigrationOptions/batchSize`` records,
/// ``MigrationOptions/batchByteLimit`` bytes written, or ``MigrationOptions/batchDuration`` seconds,
/// whichever comes first. Every batch commits its journal with its records, so a crash loses at most the
/// batch in flight.
///
/// Bytes are what a batch's tasks report writing; the clock is read every ``clockInterval`` records
/// (reading it costs about as much as copying a small record).
struct BatchLimits {
    static let clockInterval = 64

    private let maximumRecords: Int
    private let maximumBytes: Int
    private let deadline: Double
    private(set) var records = 0
    private(set) var bytes = 0
    private var pastDeadline = false

    init(_ options: MigrationOptions, now: Double = MonotonicClock.now()) {
        maximumRecords = max(1, options.batchSize)
        maximumBytes = max(1, options.batchByteLimit)
        deadline = now + max(0, options.batchDuration)
    }

    /// Counts one record and the bytes its task wrote.
    @inline(__always)
    mutating func add(bytes written: Int) {
        records += 1
        bytes += written
        if records % Self.clockInterval == 0 && MonotonicClock.now() >= deadline { pastDeadline = true }
    }

    /// Whether the batch is full (it always holds at least one record).
    var isReached: Bool {
        records > 0 && (records >= maximumRecords || bytes >= maximumBytes || pastDeadline)
    }

    /// The number of batches a task over `records` records writing `bytes` bytes in `seconds` takes (for
    /// estimates).
    static func count(records: Int, bytes: Double, seconds: Double, options: MigrationOptions) -> Int {
        guard records > 0 else { return 0 }
        let size = max(1, options.batchSize)
        let byRecords = records / size + (records % size == 0 ? 0 : 1)
        func batches(_ amount: Double, per limit: Double) -> Int {
            guard limit > 0, amount.isFinite, amount > 0 else { return 1 }
            return Int(min(Double(records), (amount / limit).rounded(.up)))
        }
        let byBytes = batches(bytes, per: Double(max(1, options.batchByteLimit)))
        let byTime = batches(seconds, per: options.batchDuration)
        return max(1, byRecords, byBytes, byTime)
    }
}
