import Foundation
import Synchronization

/// Something that wants to hear about commits: a query observation or a change-set observation.
protocol CommitSubscriber: AnyObject, Sendable {
    /// The model generation of the handle it observes through: a migration ends the observation.
    var generation: UInt64 { get }
    /// A commit (by this process or another) changed the store.
    func receive(_ commit: CommitChanges)
    /// The observation is over: the handle closed (nil) or the store was migrated.
    func end(_ error: StoreError?)
    /// The store was resumed after a suspension (``Store/resume()``).
    func resumed()
}

extension CommitSubscriber {
    func resumed() {}
}

/// One process's observers of one store's files: told of this process's commits at once, and of other
/// processes' commits by a ``CommitWatcher`` that runs while anyone observes.
final class ObservationHub: Sendable {
    private struct Registration {
        let subscriber: any CommitSubscriber
        let store: ObjectIdentifier
        let meta: MetaTable
    }

    private struct State {
        var registrations: [Int: Registration] = [:]
        var nextToken = 0
        var watcher: CommitWatcher?
        /// The last transaction ID whose changes were dispatched (or found to need none).
        var lastSeen: UInt64 = 0
        /// Commits of this process after `lastSeen`, already dispatched when they committed.
        var localCommits: Set<UInt64> = []
        /// The store is suspended: no watcher runs, whoever registers.
        var paused = false
        /// Whether `lastSeen` was set when a watcher started (and still counts).
        var hasBaseline = false
    }

    private let state = Mutex(State())
    /// Whether a watcher thread calls ``catchUp(environment:)``; false only for tests that call it themselves.
    private let runsWatcherThread: Bool

    /// A hub whose watcher runs a thread (`runsWatcherThread`, every store's hub), or none: then the hub's
    /// owner calls ``catchUp(environment:)`` itself, so that a test decides exactly when the hub looks.
    init(runsWatcherThread: Bool = true) {
        self.runsWatcherThread = runsWatcherThread
    }

    /// How many commits of this process the hub remembers as already dispatched (those after the last
    /// transaction it dispatched): bounded by the commits since the watcher last read the change log.
    var rememberedLocalCommits: Int { state.withLock { $0.localCommits.count } }
    /// How many observations are registered: the write path checks this before doing anything.
    private let registered = Atomic<Int>(0)

    var isObserved: Bool { registered.load(ordering: .relaxed) > 0 }

    /// The kernel's thread ID of the running watcher (nil when none runs, 0 until its thread has started).
    var watcherThreadID: Int64? {
        state.withLock { $0.watcher?.threadID.load(ordering: .acquiring) }
    }

    /// Registers a subscriber; starts watching for other processes' commits with the first one.
    func register(_ subscriber: any CommitSubscriber, store: ObjectIdentifier, meta: MetaTable, environment: Environment) -> Int {
        state.withLock { s in
            let token = s.nextToken
            s.nextToken += 1
            s.registrations[token] = Registration(subscriber: subscriber, store: store, meta: meta)
            registered.add(1, ordering: .relaxed)
            if s.watcher == nil, !s.paused {
                // What a read transaction sees, not the meta page: a commit in flight (meta page written, not
                // yet published to readers) is then still ahead, and is dispatched when it lands, while the
                // subscriber's first fetch may not see it.
                s.lastSeen = environment.snapshotTransactionID
                s.localCommits = []
                s.hasBaseline = true
                s.watcher = CommitWatcher(hub: self, environment: environment, startsThread: runsWatcherThread)
            }
            return token
        }
    }

    /// Removes a subscriber; the watcher stops with the last one.
    func unregister(_ token: Int) {
        let watcher = state.withLock { s -> CommitWatcher? in
            guard s.registrations.removeValue(forKey: token) != nil else { return nil }
            registered.subtract(1, ordering: .relaxed)
            guard s.registrations.isEmpty else { return nil }
            defer { s.watcher = nil }
            return s.watcher
        }
        watcher?.stop()
    }

    /// Ends every observation made through a handle that is closing, and waits for the watcher to stop
    /// when none is left (the environment may close next).
    func endObservations(of store: ObjectIdentifier) {
        let (ended, watcher) = state.withLock { s -> ([any CommitSubscriber], CommitWatcher?) in
            let tokens = s.registrations.filter { $0.value.store == store }.map(\.key)
            let ended = tokens.compactMap { s.registrations.removeValue(forKey: $0)?.subscriber }
            registered.subtract(ended.count, ordering: .relaxed)
            guard s.registrations.isEmpty else { return (ended, nil) }
            defer { s.watcher = nil }
            return (ended, s.watcher)
        }
        for subscriber in ended { subscriber.end(nil) }
        watcher?.stop()
    }

    /// Stops the watcher for a suspension; the observations stay registered.
    func pauseWatching() {
        let watcher = state.withLock { s -> CommitWatcher? in
            s.paused = true
            defer { s.watcher = nil }
            return s.watcher
        }
        watcher?.stop()
    }

    /// Starts the watcher again after a suspension, if anyone observes: the commits other processes made
    /// meanwhile (after `lastSeen`) are dispatched by its first look.
    func resumeWatching(environment: Environment) {
        let baseline = state.withLock { $0.hasBaseline } ? nil : environment.snapshotTransactionID
        let subscribers = state.withLock { s -> [any CommitSubscriber] in
            s.paused = false
            let subscribers = s.registrations.values.map(\.subscriber)
            guard s.watcher == nil, !s.registrations.isEmpty else { return subscribers }
            if let baseline {
                s.lastSeen = baseline
                s.localCommits = []
                s.hasBaseline = true
            }
            s.watcher = CommitWatcher(hub: self, environment: environment, startsThread: runsWatcherThread)
            return subscribers
        }
        for subscriber in subscribers { subscriber.resumed() }
    }

    /// A commit of this process: dispatched at once (unless the watcher already did).
    func committed(_ commit: CommitChanges) {
        state.withLock { s in
            guard s.watcher != nil, commit.transactionID > s.lastSeen else { return }
            s.localCommits.insert(commit.transactionID)
            for registration in s.registrations.values { registration.subscriber.receive(commit) }
        }
    }

    /// What a call of ``catchUp(environment:)`` found.
    enum CatchUpResult {
        /// Every commit so far was dispatched.
        case upToDate
        /// Look again in a moment: a commit is in the data file but not yet visible to readers (its writer is
        /// publishing it), or the log could not be read (no reader slot free); nothing was marked seen.
        case retry
        /// No observation is left: the watcher stops.
        case noObservers
    }

    /// Called by the watcher: dispatches the commits made since the last call by other processes (or by
    /// this one outside ``Store/write(_:)``, such as a migration), and ends observations whose model changed.
    func catchUp(environment: Environment) -> CatchUpResult {
        let (from, meta, needsRead) = state.withLock { s -> (UInt64, MetaTable?, Bool) in
            let last = environment.lastTransactionID
            if last < s.lastSeen, last > 0 {
                // The file was replaced (a restored backup): its transaction IDs start again.
                let visible = environment.snapshotTransactionID
                s.lastSeen = visible > 0 ? min(visible, last) : last
                s.localCommits = []
                for registration in s.registrations.values { registration.subscriber.receive(.unknown(transactionID: last)) }
            }
            guard last > s.lastSeen else { return (s.lastSeen, nil, false) }
            let allLocal = s.localCommits.count >= Int(last - s.lastSeen)
                && (s.lastSeen + 1...last).allSatisfy { s.localCommits.contains($0) }
            if allLocal {
                s.lastSeen = last
                s.localCommits = []
                return (last, nil, false)
            }
            return (s.lastSeen, s.registrations.values.first?.meta, true)
        }
        guard needsRead, let meta else { return isObserved ? .upToDate : .noObservers }
        let read: (through: UInt64, log: [CommitChanges], continuous: Bool, generation: UInt64?)
        do {
            read = try environment.read { txn in
                let through = txn.id
                let (log, continuous) = try ChangeLog.entries(after: from, through: through, in: txn)
                let generation = try meta.read(.state, in: txn, StateRecord.init(decoding:))?.generation
                return (through, log, continuous, generation)
            }
        } catch {
            // No reader slot free, or the store closing: nothing is dispatched or marked seen, so a value
            // fetched now cannot miss a commit; the watcher looks again shortly.
            return .retry
        }
        let (ended, result) = state.withLock { s -> ([any CommitSubscriber], CatchUpResult) in
            guard read.through > s.lastSeen else { return ([], .retry) }
            var commits = read.log.filter { $0.transactionID > s.lastSeen && !s.localCommits.contains($0.transactionID) }
            if !read.continuous { commits.append(.unknown(transactionID: read.through)) }
            s.lastSeen = read.through
            s.localCommits = s.localCommits.filter { $0 > read.through }
            var ended: [any CommitSubscriber] = []
            for (token, registration) in s.registrations {
                if let generation = read.generation, generation != registration.subscriber.generation {
                    s.registrations[token] = nil
                    registered.subtract(1, ordering: .relaxed)
                    ended.append(registration.subscriber)
                    continue
                }
                for commit in commits { registration.subscriber.receive(commit) }
            }
            if s.registrations.isEmpty { s.watcher = nil }
            return (ended, s.registrations.isEmpty ? .noObservers : .upToDate)
        }
        for subscriber in ended { subscriber.end(.modelChanged(path: environment.path)) }
        return result
    }
}

extension Environment {
    /// This process's observers of the store.
    var observations: ObservationHub { attachment(ObservationHub.self) { ObservationHub() } }
}
