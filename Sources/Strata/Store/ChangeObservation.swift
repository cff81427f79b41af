import Foundation
import Synchronization

/// The objects of one entity that commits inserted, updated and deleted: what a list needs to animate.
///
/// When several commits arrive before the consumer asks for the next change set, they are merged: an object
/// inserted and then deleted appears in neither list, one inserted and then updated only as inserted, one
/// updated and then deleted only as deleted. Each list is sorted by identifier.
public struct ChangeSet: Sendable, Hashable {
    /// The entity the changes are to.
    public let entity: String
    /// Objects that did not exist before.
    public var inserted: [ObjectID]
    /// Objects whose observed properties (attributes, or links of a relationship) changed.
    public var updated: [ObjectID]
    /// Objects that no longer exist.
    public var deleted: [ObjectID]
    /// False when the changes could not be listed object by object (a transaction that changed more than
    /// 10,000 objects of the entity, an observer that fell more than 1,024 commits behind, a damaged change
    /// log entry): the lists are then empty or partial and the observer should reload the entity.
    public var isComplete: Bool

    /// A change set (for previews and tests; observations make their own).
    public init(entity: String, inserted: [ObjectID] = [], updated: [ObjectID] = [], deleted: [ObjectID] = [], isComplete: Bool = true) {
        self.entity = entity
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.isComplete = isComplete
    }

    /// Whether nothing is listed and nothing needs reloading.
    public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && deleted.isEmpty && isComplete }
}

/// The change sets of an entity, one per commit (or per burst of commits): an `AsyncSequence` made by
/// ``Store/changes(of:properties:)``.
///
/// Only commits after iteration starts are reported. A commit that changes no object of the entity, or
/// (with `properties`) only other properties of its objects, wakes nobody. The sequence ends when the
/// iterating task is cancelled or the handle closes, and throws ``StoreError/Code-swift.struct/modelChanged``
/// when the store is migrated.
public struct ChangeObservation: AsyncSequence, Sendable {
    public typealias Element = ChangeSet

    let store: Store
    let binding: EntityBinding
    let properties: PropertyMask?

    public func makeAsyncIterator() -> Iterator {
        Iterator(observation: self)
    }

    /// Waits for the entity's next change set; see ``ChangeObservation``.
    public struct Iterator: AsyncIteratorProtocol {
        let observation: ChangeObservation
        private var subscription: Subscription<ChangeSubscriber>?
        private var isFinished = false

        init(observation: ChangeObservation) { self.observation = observation }

        public mutating func next() async throws -> ChangeSet? {
            guard !isFinished else { return nil }
            do {
                if subscription == nil {
                    let o = observation
                    subscription = try o.store.subscribe(ChangeSubscriber(
                        generation: o.store.model.generation, tag: o.binding.tag, properties: o.properties))
                }
                guard let subscriber = subscription?.subscriber else { return finish() }
                while true {
                    // Changes that cancel out (inserted, then deleted before anyone looked) are no change.
                    guard let pending = try await subscriber.mailbox.next() else { return finish() }
                    let changes = pending.changeSet(entity: observation.binding.name)
                    if !changes.isEmpty { return changes }
                }
            } catch let error as StoreError where error.code == .closed {
                return finish()
            } catch {
                _ = finish()
                throw error
            }
        }

        private mutating func finish() -> ChangeSet? {
            isFinished = true
            subscription = nil
            return nil
        }
    }
}

/// A change-set observation's registration: filters commits to its entity and properties, and merges them
/// until the consumer takes them.
final class ChangeSubscriber: CommitSubscriber {
    let generation: UInt64
    let tag: UInt32
    let properties: PropertyMask?
    let mailbox = Mailbox<PendingChanges>()

    init(generation: UInt64, tag: UInt32, properties: PropertyMask?) {
        self.generation = generation
        self.tag = tag
        self.properties = properties
    }

    func receive(_ commit: CommitChanges) {
        if commit.isUnknown {
            mailbox.post { pending in
                var p = pending.take() ?? PendingChanges()
                p.isComplete = false
                pending = p
            }
            return
        }
        guard let changes = commit.entities[tag], changes.concerns(properties) else { return }
        mailbox.post { pending in
            var p = pending.take() ?? PendingChanges()
            p.merge(changes, observing: properties)
            pending = p
        }
    }

    func end(_ error: StoreError?) { mailbox.end(error) }
}

/// Change sets merged across commits.
struct PendingChanges: Sendable {
    private var inserted: Set<UInt64> = []
    private var updated: Set<UInt64> = []
    private var deleted: Set<UInt64> = []
    var isComplete = true

    mutating func merge(_ changes: EntityChanges, observing properties: PropertyMask?) {
        if !changes.isComplete { isComplete = false }
        for id in changes.inserted {
            if deleted.remove(id) != nil { updated.insert(id) } else { inserted.insert(id) }
        }
        for (id, mask) in changes.updated where properties.map(mask.intersects) ?? true {
            if !inserted.contains(id) { updated.insert(id) }
        }
        for id in changes.deleted {
            updated.remove(id)
            if inserted.remove(id) == nil { deleted.insert(id) }
        }
    }

    func changeSet(entity: String) -> ChangeSet {
        ChangeSet(entity: entity, inserted: inserted.sorted().map(ObjectID.init(rawValue:)),
                  updated: updated.sorted().map(ObjectID.init(rawValue:)),
                  deleted: deleted.sorted().map(ObjectID.init(rawValue:)), isComplete: isComplete)
    }
}
