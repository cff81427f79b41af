import Foundation

/// What one transaction did to the objects of a model type: ``HistoryEntityChanges`` with the properties as key
/// paths of `Model`.
///
/// ```swift
/// if let posts = transaction.changes(of: Post.self) {
///     for update in posts.updated where update.changed(\.title) { reindex(update.id) }
///     for deletion in posts.deleted { server.delete(deletion[\.serverID]) }
/// }
/// ```
public struct HistoryModelChanges<Model: EntityModel>: Sendable {
    /// The changes as names.
    public let changes: HistoryEntityChanges

    init(_ changes: HistoryEntityChanges) { self.changes = changes }

    /// Objects that did not exist before.
    public var inserted: [ObjectID] { changes.inserted }
    /// Objects whose properties changed.
    public var updated: [HistoryModelUpdate<Model>] { changes.updated.map(HistoryModelUpdate.init) }
    /// Objects that no longer exist.
    public var deleted: [HistoryModelDeletion<Model>] { changes.deleted.map(HistoryModelDeletion.init) }
    /// False when a consumer should read the entity again (see ``HistoryEntityChanges/isComplete``).
    public var isComplete: Bool { changes.isComplete }
}

/// An update of an object of a model type.
public struct HistoryModelUpdate<Model: EntityModel>: Sendable {
    /// The update as names.
    public let update: HistoryUpdate

    init(_ update: HistoryUpdate) { self.update = update }

    /// The object.
    public var id: ObjectID { update.id }

    /// Whether the property at `keyPath` (an attribute, or a relationship's links) changed. A key path that is no
    /// stored property of the model is never changed.
    public func changed(_ keyPath: PartialKeyPath<Model>) -> Bool {
        guard let name = Model.propertyName(for: keyPath) else { return false }
        return update.properties.contains(name)
    }
}

/// A deletion of an object of a model type, with its tombstone.
public struct HistoryModelDeletion<Model: EntityModel>: Sendable {
    /// The deletion as names.
    public let deletion: HistoryDeletion

    init(_ deletion: HistoryDeletion) { self.deletion = deletion }

    /// The object.
    public var id: ObjectID { deletion.id }

    /// The preserved value of the attribute at `keyPath` when the object was deleted; nil when the attribute is
    /// not preserved, was null, or does not convert to `V`.
    public subscript<V: ModelScalar>(keyPath: KeyPath<Model, V>) -> V? {
        value(keyPath)
    }

    /// The preserved value of an optional attribute when the object was deleted (nil as the other subscript).
    public subscript<V: ModelScalar>(keyPath: KeyPath<Model, V?>) -> V? {
        value(keyPath)
    }

    private func value<V: ModelScalar>(_ keyPath: AnyKeyPath) -> V? {
        guard let name = Model.propertyName(for: keyPath), let stored = deletion.tombstone[name] else { return nil }
        return V(storedValue: stored)
    }
}
