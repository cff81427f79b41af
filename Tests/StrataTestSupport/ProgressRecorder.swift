import Foundation
import Strata
import Synchronization

/// Collects migration progress reports from any thread.
public final class ProgressRecorder: Sendable {
    private let reports = Mutex<[MigrationProgress]>([])

    public init() {}

    /// Options whose progress callback records here (after calling `also`, if given).
    public func options(_ base: MigrationOptions = MigrationOptions()) -> MigrationOptions {
        var options = base
        let previous = base.progress
        options.progress = { [self] p in
            previous?(p)
            self.reports.withLock { $0.append(p) }
        }
        return options
    }

    public var all: [MigrationProgress] { reports.withLock { $0 } }

    /// The steps completed, as `"source→destination"`.
    public var completedSteps: [String] {
        all.filter { $0.phase == .completed }.map { "\($0.sourceVersion)→\($0.destinationVersion)" }
    }
}
