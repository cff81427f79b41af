import Foundation

extension Store {
    /// The transactions committed after `token`, oldest first: at most `limit` of them, in one read
    /// transaction. See <doc:ChangeHistory>.
    ///
    /// ```swift
    /// var token = savedToken                      // nil the first time: from the first transaction
    /// repeat {
    ///     let page = try store.fetchHistory(after: token)
    ///     try apply(page.transactions)
    ///     token = page.next                      // save it with what you applied
    /// } while !page.isAtEnd
    /// ```
    ///
    /// Works on any handle of the store, whatever model it was opened with and even after another process
    /// migrated the store: transactions are named by the models that wrote them.
    /// - Parameters:
    ///   - token: the position to read after (a transaction's ``HistoryTransaction/token``, a page's
    ///     ``HistoryPage/next``, ``currentHistoryToken()``); nil to start from the first transaction recorded.
    ///   - limit: the most transactions to return.
    /// - Throws: ``StoreError/Code-swift.struct/historyDisabled``; ``StoreError/Code-swift.struct/historyExpired``
    ///   (the transactions after `token` were pruned: resynchronize fully);
    ///   ``StoreError/Code-swift.struct/historyTokenFromOtherStore``; ``StoreError/Code-swift.struct/historyDiverged``
    ///   (the store was replaced by an older copy); ``StoreError/Code-swift.struct/corruptedHistory``. Reading
    ///   never writes.
    /// - Complexity: one B-tree seek, then proportional to the entries returned.
    public func fetchHistory(after token: HistoryToken?, limit: Int = 1_000) throws -> HistoryPage {
        try readHistory { reader in try reader.page(after: try reader.position(of: token), limit: max(0, limit)) }
    }

    /// The transactions committed after `token`, then each new one as it commits — by this process or by
    /// another on the same store, across migrations (a migration is a transaction too). See
    /// ``HistoryFeed``.
    ///
    /// ```swift
    /// for try await transaction in store.history(after: savedToken) where transaction.author != "sync" {
    ///     try apply(transaction)
    ///     savedToken = transaction.token
    /// }
    /// ```
    public func history(after token: HistoryToken?) -> HistoryFeed {
        HistoryFeed(store: self, after: token)
    }

    /// The position after the last transaction committed: where a consumer that has just copied the store
    /// would start. (To copy objects and take the token consistently, read ``ReadContext/historyToken()`` in the
    /// same read.)
    /// - Throws: ``StoreError/Code-swift.struct/historyDisabled``.
    public func currentHistoryToken() throws -> HistoryToken {
        try readHistory { reader in try reader.token(after: try reader.head()) }
    }

    /// The size and extent of the change history.
    /// - Throws: ``StoreError/Code-swift.struct/historyDisabled``; ``StoreError/Code-swift.struct/corruptedHistory``.
    /// - Complexity: reads every entry.
    public func historyInfo() throws -> HistoryInfo {
        try readHistory { try $0.info() }
    }

    /// Deletes the transactions before `token` (those every consumer has applied), in bounded write transactions.
    /// The transaction the token was taken after is kept, so `token` stays valid; older tokens expire.
    /// - Throws: the errors of ``fetchHistory(after:limit:)`` for the token; ``StoreError/readOnly``.
    public func deleteHistory(before token: HistoryToken) throws {
        if isClosed { throw StoreError.closed }
        if readOnly { throw StoreError.readOnly }
        let position = try readHistory { try $0.position(of: token) }
        while !(try HistoryPruning.batch(environment: environment, meta: model.meta, before: position).isFinished) {}
    }

    /// Deletes now, in bounded write transactions, the transactions the history's retention no longer keeps
    /// (what the background pruning of a writable handle does after commits). Returns how many it deleted.
    /// - Throws: ``StoreError/Code-swift.struct/historyDisabled``; ``StoreError/readOnly``.
    @discardableResult
    public func pruneHistory() throws -> Int {
        if isClosed { throw StoreError.closed }
        if readOnly { throw StoreError.readOnly }
        _ = try readHistory { try $0.head() }
        var deleted = 0
        while true {
            let outcome = try HistoryPruning.batch(environment: environment, meta: model.meta)
            deleted += outcome.deleted
            if outcome.isFinished { return deleted }
        }
    }

    /// Runs `body` with a history reader on a snapshot of the store (whatever model the handle has).
    func readHistory<T>(_ body: (HistoryReader) throws -> T) throws -> T {
        if isClosed { throw StoreError.closed }
        return try environment.read { txn in try body(try HistoryReader(txn: txn, meta: model.meta)) }
    }
}
