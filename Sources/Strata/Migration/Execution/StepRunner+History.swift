import Foundation

extension StepRunner {
    /// Writes the step's entry in the change history, in the switch transaction `txn` (so it exists exactly when
    /// the store is at the destination model): from → to, what the step did to each entity, and — when the stage
    /// asks (``MigrationStage/recordingChangesInHistory()``) — the objects its rewritten and custom entities
    /// gained, kept and lost. Every later transaction has a larger sequence, so a consumer always reads this
    /// entry before changes that name the destination model's properties.
    func recordMigration(state: HistoryState, in txn: Transaction) throws {
        let models = txn.environment.historyModels
        let from = models.model(of: source)
        let to = models.model(of: destination)
        try HistoryLog.store(from, in: txn)
        let lists = stage?.recordsChangesInHistory == true
        let policyBuilt = StepPlanner.policyBuiltEntities(stage: stage, mapping: mapping)
        var steps: [(tag: UInt32, step: HistoryMigration.Step)] = []
        var entities: [UInt32: EntityChanges] = [:]
        for binding in destination.entities {
            let step: HistoryMigration.Step
            switch kinds[binding.name] {
            case .rewritten: step = .rewritten
            case .built: step = policyBuilt.contains(binding.name) ? .custom : .added
            case .carried, nil: step = .inferred
            }
            steps.append((binding.tag, step))
            guard step == .rewritten || step == .custom else { continue }
            let before = source.entities.first { $0.tag == binding.tag }
            entities[binding.tag] = lists
                ? try listedChanges(before: before, after: binding, in: txn)
                : EntityChanges(isComplete: false)
        }
        let kept = Set(destination.entities.map(\.tag))
        for binding in source.entities where !kept.contains(binding.tag) {
            steps.append((binding.tag, .removed))
            if lists { entities[binding.tag] = try listedChanges(before: binding, after: nil, in: txn) }
        }
        steps.sort { $0.tag < $1.tag }
        entities = entities.filter { !$0.value.isComplete || !$0.value.inserted.isEmpty || !$0.value.updated.isEmpty || !$0.value.deleted.isEmpty }
        let entry = HistoryEntry(kind: .migration, time: HistoryRecording.now(), author: HistoryEntry.migrationAuthor,
                                 modelID: to.id, entities: entities,
                                 migration: HistoryEntry.MigrationPart(sourceModelID: from.id, steps: steps))
        _ = try HistoryLog.append(entry, model: to, state: state, in: txn)
    }

    /// The objects of an entity before the step (`before`'s records) and after it (`after`'s), compared by
    /// identifier: new ones inserted, common ones updated (every property: the stage may have changed any),
    /// missing ones deleted with their tombstones.
    private func listedChanges(before: EntityBinding?, after: EntityBinding?, in txn: Transaction) throws -> EntityChanges {
        var changes = EntityChanges()
        let old = try before.map { try txn.cursor($0.dbi) }
        let new = try after.map { try txn.cursor($0.dbi) }
        var o = try old?.first()
        var n = try new?.first()
        let preserved = before?.preservedAttributes ?? []
        func deleted(_ id: UInt64, _ record: UnsafeRawBufferPointer) throws {
            changes.deleted.append(id)
            guard let before, !preserved.isEmpty else { return }
            let values = try before.decodeValues(record, id: id)
            changes.tombstones.append(preserved.map { values[$0] })
        }
        while o != nil || n != nil {
            let oid = try o.map { try ObjectKey.decode($0.key) }
            let nid = try n.map { try ObjectKey.decode($0.key) }
            switch (oid, nid) {
            case let (a?, b?) where a == b:
                changes.updated.append((id: a, properties: .all))
                o = try old?.next()
                n = try new?.next()
            case let (a?, b?) where a < b:
                if let record = o?.value { try deleted(a, record) }
                o = try old?.next()
            case let (_, b?):
                changes.inserted.append(b)
                n = try new?.next()
            case let (a?, nil):
                if let record = o?.value { try deleted(a, record) }
                o = try old?.next()
            case (nil, nil):
                break
            }
        }
        if !changes.updated.isEmpty { changes.properties = .all }
        return changes
    }
}
