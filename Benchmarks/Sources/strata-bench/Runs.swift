import BenchCore
import Foundation

/// One measurement of one scenario and system: what its child reported and its peak resident set.
struct Sample {
    var report: ChildReport
    var maxRSSBytes: Int
}

/// The figures of one run of a measurement, as the JSON keeps them beside the median.
struct RunFigures: Codable {
    var seconds: Double
    var recordsPerSecond: Double
    var peakRssBytes: Int
    var peakAnonBytes: Int
}

/// The median of `values` (the mean of the two middle values for an even count); 0 when empty.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

func median(_ values: [Int]) -> Int {
    Int(median(values.map(Double.init)).rounded())
}

extension ResultRow {
    /// The row of a measurement run `samples.count` times: the median of each figure (time, memory, every
    /// extra), the throughput from the median time, and the spread (fastest and slowest run).
    init(scenario: Scenario, system: System, samples: [Sample]) {
        let seconds = samples.map(\.report.seconds)
        let operations = samples.first?.report.operations ?? 0
        func rate(_ s: Double) -> Double { Double(operations) / max(s, 1e-12) }
        let medianSeconds = median(seconds)
        var extra: [String: Double] = [:]
        for key in Set(samples.flatMap(\.report.extra.keys)) {
            extra[key] = median(samples.compactMap { $0.report.extra[key] })
        }
        var notes: [String] = []
        for note in samples.flatMap(\.report.notes) where !notes.contains(note) { notes.append(note) }
        self.init(
            scenario: scenario.rawValue, system: system.rawValue, seconds: medianSeconds,
            recordsPerSecond: rate(medianSeconds),
            peakRssBytes: median(samples.map(\.maxRSSBytes)), peakAnonBytes: median(samples.map(\.report.peakAnonBytes)),
            baselineAnonBytes: median(samples.map(\.report.baselineAnonBytes)), operations: operations,
            unit: samples.first?.report.unit ?? "", fileBytes: median(samples.map(\.report.fileBytes)),
            ratioToLmdb: nil, ratioToSqlite: nil, ratioToGrdb: nil, extra: extra, notes: notes,
            runs: samples.count, secondsMin: seconds.min(), secondsMax: seconds.max(),
            recordsPerSecondMin: seconds.max().map(rate), recordsPerSecondMax: seconds.min().map(rate),
            perRun: samples.map {
                RunFigures(seconds: $0.report.seconds, recordsPerSecond: rate($0.report.seconds),
                           peakRssBytes: $0.maxRSSBytes, peakAnonBytes: $0.report.peakAnonBytes)
            })
    }
}
