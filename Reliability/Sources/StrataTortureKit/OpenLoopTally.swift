/// What one `open-loop` child of the reliability suite saw, by outcome: written by the child as a `TALLY` line
/// of JSON and read by `OpenLoopTests` (one definition for both sides).
public struct OpenLoopTally: Codable, Sendable {
    public var attempts = 0
    public var opened = 0
    /// Refused opens, by error kind (`StoreError.migrationRequired`, …).
    public var refused: [String: Int] = [:]
    /// Errors after a successful open (reading or writing), by kind.
    public var failedAfterOpen: [String: Int] = [:]
    public var corrupted = 0
    public var corruptedMessages: [String] = []
    public var wrongValues = 0
    public var itemsChecked = 0
    public var inserted = 0
    /// Write transactions that inserted objects and deleted them again (the inserting child's undone imports).
    public var undoneImports = 0
    /// Opens of a data file shorter than LMDB's last page number (pages freed unwritten; healthy).
    public var shortFileOpens = 0
    public var byVersion: [String: Int] = [:]
    public var rounds = 0

    public init() {}
}
