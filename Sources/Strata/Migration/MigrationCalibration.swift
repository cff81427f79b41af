import Foundation

/// What one record costs on this machine, measured on a store's own records just before a migration is
/// explained: the figures ``MigrationExplanation/Step/estimatedSeconds`` is computed from.
///
/// Reading, decoding and encoding are timed on a sample of each entity's first records (in a read
/// transaction of the store: nothing is written to it). Writing is timed in a scratch LMDB environment in
/// the temporary directory, removed afterwards: the same sample records appended in one write transaction
/// and committed durably, as a migration's batch is (four times: the first grows the new file; of the others
/// the fastest puts and the median commit are kept), then commits of a single record (the fixed cost of a
/// durable commit). So the store's files stay byte for byte as they were.
///
/// Each pass over the sample runs ``timedPasses`` times and the fastest is kept. A pass takes a millisecond or
/// two; on a machine shared with other tenants a run of passes can fall in a stretch where the core runs
/// 1.6–1.8× slower (measured on the benchmarks' Intel VM: every figure of a calibration slow at once, or from
/// its sixth pass on), which a migration of seconds only partly meets. The median of three followed such a
/// stretch whenever two passes fell in it; the fastest of five needs one pass outside it.
public struct MigrationCalibration: Sendable, Hashable {
    /// Records sampled (over every entity that has records).
    public var sampledRecords: Int
    /// Locating a record and verifying its checksum (what a rewrite or a check reads), per record.
    public var readSecondsPerRecord: Double
    /// Decoding a record into values (what a custom stage or an index build reads), per record.
    public var decodeSecondsPerRecord: Double
    /// Encoding values into a record, per record.
    public var encodeSecondsPerRecord: Double
    /// Putting a record (or an entry: a link, an association, an index key) into a database inside a write
    /// transaction, per record.
    public var writeSecondsPerRecord: Double
    /// Inserting an object through the object layer (``WriteContext/insert(_:orderedValues:)``: validation,
    /// encoding, the put), per object: measured by inserting the sampled objects into a new, empty store of
    /// the same model in the temporary directory (removed afterwards), in a transaction that is rolled back.
    public var insertSecondsPerRecord: Double
    /// A durable commit's cost per byte written.
    public var commitSecondsPerByte: Double
    /// A durable commit's fixed cost (the sync).
    public var commitSeconds: Double
    /// The average record size of each sampled entity (source names), in bytes.
    public var averageRecordBytes: [String: Double]

    /// The average record size of `entity`, or of every sampled record when it was not sampled.
    func recordBytes(_ entity: String?) -> Double {
        if let entity, let b = averageRecordBytes[entity] { return b }
        let all = averageRecordBytes.values
        return all.isEmpty ? 64 : all.reduce(0, +) / Double(all.count)
    }

    /// Figures used when nothing could be sampled (an empty store): only the commit costs matter then.
    static let unmeasured = MigrationCalibration(
        sampledRecords: 0, readSecondsPerRecord: 0, decodeSecondsPerRecord: 0, encodeSecondsPerRecord: 0,
        writeSecondsPerRecord: 0, insertSecondsPerRecord: 0, commitSecondsPerByte: 0, commitSeconds: 0.002,
        averageRecordBytes: [:])

    /// How many times each pass over the sample is timed (the fastest kept).
    static let timedPasses = 5

    /// The most records sampled per entity, and in all.
    static let samplePerEntity = 4_000
    static let sampleTotal = 10_000
}

/// The middle value (of three).
