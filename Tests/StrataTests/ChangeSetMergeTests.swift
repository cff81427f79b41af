import Foundation
@testable import Strata
import Testing

/// How an observation merges the commits that arrive before its consumer asks again (``PendingChanges``),
/// tested on the merge itself, so that every order of commits is reached deterministically (an observation
/// merges only when its consumer happens to be busy): the rules case by case, then random commit sequences
/// against an oracle that knows only which objects existed before and after, and which were touched.
@Suite struct ChangeSetMergeTests {
    static func merged(_ commits: [EntityChanges], observing properties: PropertyMask? = nil) -> ChangeSet {
        var pending = PendingChanges()
        for commit in commits { pending.merge(commit, observing: properties) }
        return pending.changeSet(entity: "Post")
    }

    static func ids(_ raw: [UInt64]) -> [ObjectID] { raw.map(ObjectID.init(rawValue:)) }
    static let title = PropertyMask(property: 0)
    static let views = PropertyMask(property: 1)

    @Test func insertedThenUpdatedIsOnlyInserted() {
        let set = Self.merged([EntityChanges(inserted: [1]), EntityChanges(updated: [(1, Self.title)], properties: Self.title)])
        #expect(set == ChangeSet(entity: "Post", inserted: Self.ids([1])))
    }

    @Test func insertedThenDeletedIsNoChange() {
        #expect(Self.merged([EntityChanges(inserted: [1]), EntityChanges(deleted: [1])]).isEmpty)
    }

    @Test func updatedThenDeletedIsOnlyDeleted() {
        let set = Self.merged([EntityChanges(updated: [(1, Self.title)], properties: Self.title), EntityChanges(deleted: [1])])
        #expect(set == ChangeSet(entity: "Post", deleted: Self.ids([1])))
    }

    /// Bug: `PendingChanges.merge` listing an object deleted and then inserted again with its ID
    /// (`WriteContext.insert(_:id:_:)`, as a replica or an import does) as inserted: a list would show it twice.
    @Test func deletedThenInsertedAgainWithItsIDIsUpdated() {
        let set = Self.merged([EntityChanges(deleted: [7]), EntityChanges(inserted: [7])])
        #expect(set == ChangeSet(entity: "Post", updated: Self.ids([7])))
    }

    /// Bug: `PendingChanges.merge` not carrying an entity's incomplete changes into the set.
    @Test func anIncompleteCommitMakesTheSetSayReload() {
        let set = Self.merged([EntityChanges(inserted: [1]), EntityChanges(isComplete: false), EntityChanges(inserted: [2])])
        #expect(!set.isComplete)
        #expect(set.inserted == Self.ids([1, 2]))
    }

    /// Bug: `PendingChanges.merge` defaulting the property filter the wrong way (`?? false`): an observation of
    /// every property would list no update.
    @Test func updatesAreListedByTheObservedProperties() {
        let commits = [EntityChanges(updated: [(1, Self.title), (2, Self.views)], properties: PropertyMask(bits: Self.title.bits | Self.views.bits))]
        #expect(Self.merged(commits).updated == Self.ids([1, 2]))
        #expect(Self.merged(commits, observing: Self.views).updated == Self.ids([2]))
    }

    /// Random sequences of commits over a few objects (inserting only absent ones, updating and deleting only
    /// present ones, objects coming back with their ID): the merged set must say what changed between the first
    /// commit and the last — inserted: absent before, present after; deleted: the reverse; updated: present at
    /// both ends and updated, or deleted and inserted again, in between.
    @Test func randomCommitSequencesMergeToTheNetChange() {
        var seed: UInt64 = 0x4D45_5247
        func next(_ n: Int) -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int((seed >> 33) % UInt64(n))
        }
        for _ in 0..<2_000 {
            let universe: [UInt64] = Array(1...6)
            var present = Set(universe.filter { _ in next(2) == 0 })
            let before = present
            var touched = Set<UInt64>()
            var commits: [EntityChanges] = []
            for _ in 0..<(1 + next(6)) {
                var commit = EntityChanges()
                for id in universe where next(3) == 0 {
                    if present.contains(id) {
                        if next(2) == 0 {
                            commit.deleted.append(id); present.remove(id); touched.insert(id)
                        } else if !commit.inserted.contains(id) {
                            commit.updated.append((id, Self.title)); commit.properties.formUnion(Self.title); touched.insert(id)
                        }
                    } else if !commit.deleted.contains(id) {
                        commit.inserted.append(id); present.insert(id)
                    }
                }
                commits.append(commit)
            }
            let set = Self.merged(commits)
            let want = ChangeSet(entity: "Post",
                                 inserted: Self.ids(present.subtracting(before).sorted()),
                                 updated: Self.ids(present.intersection(before).intersection(touched).sorted()),
                                 deleted: Self.ids(before.subtracting(present).sorted()))
            #expect(set == want, "\(commits.map { "+\($0.inserted) ~\($0.updated.map(\.id)) -\($0.deleted)" })")
            if set != want { return }
        }
    }
}
