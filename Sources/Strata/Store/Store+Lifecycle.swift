/// Suspending a store while the app is in the background (<doc:ApplePlatforms>).
extension Store {
    /// How long ``suspend()`` waits for transactions of this process that are under way.
    static let suspensionWait = 1.0

    /// Lets go of every file lock and open file of the store, for an app about to be suspended.
    ///
    /// iOS kills an app that is suspended while it holds a file lock in a shared (app group) container
    /// (exception code `0xdead10cc`). `suspend()` pauses the store: the commit watcher of its observations
    /// stops, background maintenance finishes its current batch and pauses, and once the transactions under
    /// way in this process have ended (it waits up to a second for them) the LMDB environment is closed —
    /// which releases the `lock.mdb` lock and reader slots and unmaps the data file. `migration.lock` is held
    /// only while a migration runs; run long migrations in a background task (see <doc:ApplePlatforms>).
    /// Typically well under 50 ms.
    ///
    /// While suspended, reads and writes throw ``StoreError/Code-swift.struct/suspended`` — they do **not**
    /// resume the store by themselves: a transparent resume would take the locks again at the very moment the
    /// system is about to suspend the app, which is the crash this call exists to avoid. Call ``resume()``
    /// when the app returns to the foreground (or when a background task starts). Observations stay
    /// registered and resume with the store: commits made meanwhile by other processes (a widget, an
    /// extension) are delivered after ``resume()``.
    ///
    /// The LMDB environment is shared by every handle of this process on the same files, so suspending one
    /// handle suspends them all (the locks are the process's). Nothing is lost: every commit was durable when
    /// it returned, and a process killed while suspended leaves a store that opens as it was.
    ///
    /// ```swift
    /// // SwiftUI
    /// .onChange(of: scenePhase) { _, phase in
    ///     switch phase {
    ///     case .background: try? store.suspend()
    ///     case .active: try? store.resume()
    ///     default: break
    ///     }
    /// }
    /// ```
    ///
    /// Suspending a suspended store does nothing.
    ///
    /// - Throws: ``StoreError/Code-swift.struct/suspendBlocked`` when a read or write of this process stays open
    ///   for more than a second (the store is then left running, with its observers); ``StoreError/closed``.
    public func suspend() throws {
        if isClosed { throw StoreError.closed }
        let hub = environment.observations
        hub.pauseWatching()
        do {
            try environment.suspend(timeout: Self.suspensionWait)
        } catch {
            hub.resumeWatching(environment: environment)
            throw error
        }
    }

    /// Opens the store's files again after ``suspend()``: reads and writes work again, observations and
    /// background maintenance go on. Resuming a store that is not suspended does nothing.
    ///
    /// - Throws: what opening the store throws when its files changed meanwhile beyond what the handle can
    ///   follow (``StoreError/needsReopen``: open the store again), ``StoreError/closed``, or an I/O error.
    public func resume() throws {
        if isClosed { throw StoreError.closed }
        try environment.resume()
        environment.observations.resumeWatching(environment: environment)
    }

    /// Whether the store is suspended (by this handle or another handle of this process on the same files).
    public var isSuspended: Bool { environment.isSuspended }
}
