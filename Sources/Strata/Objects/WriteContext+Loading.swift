extension WriteContext {
    /// Whether this transaction checks relationships' minimum counts when it commits. Default true.
    ///
    /// Tools that load a graph in several transactions — objects first, links once every object exists, as
    /// `strata import` does — set it to false for those transactions: an object inserted before its links
    /// would otherwise fail its relationship's minimum at the first commit. Maximum counts are still checked
    /// as links are made. Objects left below a minimum are reported by ``Store/verify()`` (as
    /// ``VerificationReport/Problem/Kind/countViolation``); the loading tool should check them itself when it
    /// is done.
    ///
    /// ```swift
    /// try store.write { context in
    ///     context.checksMinimumCountsAtCommit = false
    ///     try context.insert("Comment", id: ObjectID(rawValue: 42), ["text": "First!"])
    /// }
    /// try store.write { context in
    ///     context.checksMinimumCountsAtCommit = false
    ///     try context.link(ObjectID(rawValue: 42), of: "Comment", "post", to: ObjectID(rawValue: 7))
    /// }
    /// ```
    public var checksMinimumCountsAtCommit: Bool {
        get { checksMinimumCounts }
        set { checksMinimumCounts = newValue }
    }
}
