import Foundation
import Synchronization

/// Runs a store's migration on a background thread and reports its progress as an `AsyncSequence`,
/// for apps that migrate with a progress UI instead of inside `Store.open`.
///
/// ```swift
/// let migrator = Migrator(url: url, plan: Posts.plan)
/// Task { for await p in migrator.progress { progressView.update(p.fractionCompleted, p.description) } }
/// try await migrator.run()
/// let store = try Store.open(at: url, schema: Posts.v4, plan: Posts.plan)
/// ```
public final class Migrator: Sendable {
    public let url: URL
    public let plan: MigrationPlan
    public let configuration: StoreConfiguration
    /// Progress after every batch, step and phase; finishes when ``run()`` returns or throws.
    public let progress: AsyncStream<MigrationProgress>
    private let continuation: AsyncStream<MigrationProgress>.Continuation
    private let stopRequested = Atomic<Bool>(false)

    public init(url: URL, plan: MigrationPlan, configuration: StoreConfiguration = StoreConfiguration()) {
        self.url = url
        self.plan = plan
        self.configuration = configuration
        (progress, continuation) = AsyncStream.makeStream(of: MigrationProgress.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// Migrates the store to the plan's current schema.
    /// - Returns: the number of steps run.
    @discardableResult
    public func run() async throws -> Int {
        var configuration = configuration
        let continuation = continuation
        let userProgress = configuration.migration.progress
        configuration.migration.progress = { p in
            continuation.yield(p)
            userProgress?(p)
        }
        let userStop = configuration.migration.shouldStop
        configuration.migration.shouldStop = { [self] in
            self.stopRequested.load(ordering: .relaxed) || (userStop?() ?? false)
        }
        let url = url, plan = plan, frozen = configuration
        defer { continuation.finish() }
        return try await withCheckedThrowingContinuation { (result: CheckedContinuation<Int, any Error>) in
            PlatformThread.start(name: "strata.migrate") {
                result.resume(with: Result { try Store.migrate(at: url, plan: plan, configuration: frozen) })
            }
        }
    }

    /// Asks the migration to stop after its current batch; ``run()`` then throws
    /// ``MigrationError/stopped(source:destination:)`` and a later run resumes.
    public func stop() { stopRequested.store(true, ordering: .relaxed) }
}
