import Foundation

/// One committed write transaction, as the change history keeps it: its token, when and by whom it was
/// committed, the model version that wrote it, and what it changed in each entity. A migration step is a
/// transaction too (``migration``).
///
/// ```swift
/// let page = try store.fetchHistory(after: savedToken)
/// for transaction in page.transactions where transaction.author != "sync" {
///     if let posts = transaction.changes(of: Post.self) {
///         upload(inserted: posts.inserted, updated: posts.updated.filter { $0.changed(\.title) }.map(\.id))
///     }
/// }
/// savedToken = page.next
/// ```
///
/// ## Topics
/// ### The transaction
/// - ``token``
/// - ``date``
/// - ``author``
/// - ``modelVersion``
/// - ``migration``
/// ### What it changed
/// - ``changes``
/// - ``changes(of:)-(String)``
/// - ``changes(of:)-(EntityModel.Type)``
/// - ``changeCount``
public struct HistoryTransaction: Sendable, Identifiable {
    /// The position just after this transaction: save it once the transaction is applied, and resume after it.
    public let token: HistoryToken
    /// When the transaction committed (the writing machine's clock).
    public let date: Date
    /// The name the app gave the write (``Store/write(author:_:)``, ``StoreConfiguration/historyAuthor``), or
    /// nil. Strata's own entries for a migration (its scripts' commits and the step) say `"strata.migration"`.
    public let author: String?
    /// The model version that wrote the transaction (an older app writing to a newer store names its own).
    public let modelVersion: String
    /// For a migration step's entry: what the step did. Nil for an ordinary commit.
    public let migration: HistoryMigration?
    /// What the transaction did to each entity it changed, by entity name ascending.
    public let changes: [HistoryEntityChanges]

    /// The token, as the transaction's identity.
    public var id: HistoryToken { token }

    /// The number of objects listed in ``changes``.
    public var changeCount: Int { changes.reduce(0) { $0 + $1.count } }

    /// What the transaction did to `entity` (named as the model that wrote the transaction names it), or nil.
    public func changes(of entity: String) -> HistoryEntityChanges? {
        changes.first { $0.entity == entity }
    }

    /// What the transaction did to the objects of a model type (matched by ``EntityModel/entityName``), with
    /// properties as key paths of the type.
    public func changes<T: EntityModel>(of type: T.Type) -> HistoryModelChanges<T>? {
        changes(of: T.entityName).map(HistoryModelChanges<T>.init)
    }
}

/// A page of the change history: what ``Store/fetchHistory(after:limit:)`` returns.
public struct HistoryPage: Sendable {
    /// The transactions after the token asked for, oldest first.
    public let transactions: [HistoryTransaction]
    /// Where the next fetch starts: the last transaction's token, or the token asked for when the page is
    /// empty. Save it together with what you applied from the page.
    public let next: HistoryToken
    /// Whether the page reaches the newest transaction (when it was read).
    public let isAtEnd: Bool
}

/// The size and extent of a store's change history: what ``Store/historyInfo()`` returns.
public struct HistoryInfo: Sendable {
    /// Whether the store records history.
    public let isEnabled: Bool
    /// Its retention.
    public let configuration: HistoryConfiguration
    /// The store's identity in tokens.
    public let storeIdentifier: UUID
    /// The oldest token a consumer may resume from (older ones have expired).
    public let oldest: HistoryToken
    /// The newest token (the position after the last transaction).
    public let newest: HistoryToken
    /// The transactions kept.
    public let transactions: Int
    /// The objects they list, in all.
    public let changes: Int
    /// The bytes the history's entries take in the data file (its database's pages).
    public let bytes: Int

    /// Bytes of history per listed change (0 when there is none).
    public var bytesPerChange: Double { changes == 0 ? 0 : Double(bytes) / Double(changes) }
}
