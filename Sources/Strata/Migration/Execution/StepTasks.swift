import Foundation

extension StepRunner {
    // MARK: Scripts around the step

    func runWillMigrate() throws {
        guard let script = stage?.willMigrate else { return try single { _, _ in } }
        report(.willMigrate, entity: nil, completed: 0, total: 1)
        try single { txn, _ in
            let history = try HistoryRecording.activeState(meta, in: txn)
            let context = WriteContext(txn: txn, model: source, recordsHistory: history != nil)
            do {
                try script(context)
                try context.finish()
            } catch {
                throw stageFailure(error, entity: nil, object: nil)
            }
            try recordScriptChanges(context, model: source, history: history, in: txn)
        }
        report(.willMigrate, entity: nil, completed: 1, total: 1)
    }

    func runDidMigrate() throws {
        guard let script = stage?.didMigrate else { return }
        report(.didMigrate, entity: nil, completed: 0, total: 1)
        let generation = sourceGeneration &+ 1
        let start = journal
        journal = try environment.write { txn -> MigrationJournal in
            let history = try HistoryRecording.activeState(meta, in: txn)
            let context = WriteContext(txn: txn, model: destination, recordsHistory: history != nil)
            do {
                try script(context)
                try context.finish()
            } catch {
                throw stageFailure(error, entity: nil, object: nil)
            }
            try recordScriptChanges(context, model: destination, history: history, in: txn)
            try meta.delete(.journal, in: txn)
            try meta.put(.state, StateRecord(generation: generation, migrating: false).encoded(), in: txn)
            var j = start
            j.advance()
            return j
        }
        report(.didMigrate, entity: nil, completed: 1, total: 1)
    }

    /// Records what a `willMigrate` or `didMigrate` script changed, as any commit's changes: in the change
    /// history (author ``HistoryEntry/migrationAuthor``) and in the change log, so that observers and history
    /// feeds — in this process and others — hear of it.
    private func recordScriptChanges(_ context: WriteContext, model: BoundModel, history: HistoryState?, in txn: Transaction) throws {
        let changes = HistoryRecording.changes(of: context, model: model, txn: txn)
        guard !changes.entities.isEmpty else { return }
        if let history {
            try HistoryRecording.record(changes, model: model, author: HistoryEntry.migrationAuthor, state: history, in: txn)
        }
        try ChangeLog.append(changes.forObservers(downgraded: false), in: txn)
    }

    /// The error for something a custom stage's code threw: environmental store errors stay resumable.
    func stageFailure(_ error: any Error, entity: String?, object: ObjectID?) -> any Error {
        if let store = error as? StoreError, store.code.isEnvironmental { return store }
        if error is MigrationError { return error }
        return MigrationError.stageFailed(source: sourceVersion, destination: destinationVersion,
                                          phase: journal.currentTask?.phase.rawValue, entity: entity, object: object,
                                          underlying: error)
    }

    // MARK: Checks

    func runLinkCheck(entity: String, relationship: String, maximum: Int?, minimum: Int?) throws {
        let binding = try source.entity(entity)
        let r = try binding.relationship(relationship)
        let total = try environment.read { try $0.entryCount(binding.dbi) }
        if let maximum {
            try batched(over: r.dbi, phase: .checking, entity: entity, total: total, duplicates: true) { txn, _, id, j in
                if try ReadContext(txn: txn, model: self.source).linkCount(id, r) > maximum { j.record(finding: "\(id)") }
                return 0
            }
            try failIfFound { ids, total in
                .tooManyLinks(entity: entity, relationship: relationship, maximum: maximum, objects: ids, total: total)
            }
        }
        if let minimum {
            try batched(over: binding.dbi, phase: .checking, entity: entity, total: total) { txn, _, id, j in
                if try ReadContext(txn: txn, model: self.source).linkCount(id, r) < minimum { j.record(finding: "\(id)") }
                return 0
            }
            try failIfFound { ids, total in
                .tooFewLinks(entity: entity, relationship: relationship, minimum: minimum, objects: ids, total: total)
            }
        }
    }

    private func failIfFound(_ diagnostic: ([ObjectID], Int) -> MigrationDiagnostic) throws {
        guard journal.findingsTotal > 0 else { return }
        let ids = journal.findings.compactMap { UInt64($0) }.map(ObjectID.init(rawValue:))
        throw MigrationError.dataCheckFailed(source: sourceVersion, destination: destinationVersion,
                                             diagnostics: [diagnostic(ids, journal.findingsTotal)])
    }

    private func failIfValuesFound(entity: String, attribute: String) throws {
        guard journal.findingsTotal > 0 else { return }
        throw MigrationError.dataCheckFailed(source: sourceVersion, destination: destinationVersion, diagnostics: [
            .duplicateValues(entity: entity, attribute: attribute, values: journal.findings, total: journal.findingsTotal),
        ])
    }

    func runUniqueCheck(entity: String, attribute: String) throws {
        let binding = try destination.entity(entity)
        let a = try binding.attribute(attribute)
        guard let index = binding.index(on: a) else { return try single { _, _ in } }
        let total = try environment.read { try $0.entryCount(binding.dbi) }
        let cursorDBI = index.dbi
        // Walk the index key by key; the journal cursor is not a key here, so run in one read pass per
        // batch-sized chunk of keys, committing the findings.
        try environment.read { txn in
            let context = ReadContext(txn: txn, model: destination)
            let cursor = try txn.cursor(cursorDBI)
            var entry = try cursor.first()
            var findings: [String] = []
            var found = 0
            while let e = entry {
                if try cursor.duplicateCount() > 1 {
                    let id = try ObjectKey.decode(e.value)
                    let value = try context.object(id, binding)?.values[a] ?? .null
                    found += 1
                    if findings.count < 100 { findings.append(value.description) }
                }
                entry = try cursor.nextKey()
            }
            if found > 0 {
                throw MigrationError.dataCheckFailed(source: sourceVersion, destination: destinationVersion, diagnostics: [
                    .duplicateValues(entity: entity, attribute: attribute, values: findings, total: found),
                ])
            }
        }
        try single { _, _ in }
        report(.checking, entity: entity, completed: total, total: total)
    }

    func runRequiredCheck(entity: String) throws {
        let binding = try destination.entity(entity)
        let total = try environment.read { try $0.entryCount(binding.dbi) }
        var missing: [String: (ids: [ObjectID], total: Int)] = [:]
        var tooFew: [String: (min: Int, ids: [ObjectID], total: Int)] = [:]
        try environment.read { txn in
            let context = ReadContext(txn: txn, model: destination)
            let cursor = try txn.cursor(binding.dbi)
            var entry = try cursor.first()
            while let e = entry {
                let id = try ObjectKey.decode(e.key)
                let values = try binding.decodeValues(e.value, id: id)
                for a in binding.requiredAttributes where values[a].isNull {
                    var m = missing[binding.attributeNames[a]] ?? ([], 0)
                    m.total += 1
                    if m.ids.count < 100 { m.ids.append(ObjectID(rawValue: id)) }
                    missing[binding.attributeNames[a]] = m
                }
                for r in binding.relationships {
                    guard let min = r.minCount, min > 0 else { continue }
                    if try context.linkCount(id, r) < min {
                        var t = tooFew[r.name] ?? (min, [], 0)
                        t.total += 1
                        if t.ids.count < 100 { t.ids.append(ObjectID(rawValue: id)) }
                        tooFew[r.name] = t
                    }
                }
                entry = try cursor.next()
            }
        }
        var diagnostics: [MigrationDiagnostic] = []
        for (attribute, m) in missing.sorted(by: { $0.key < $1.key }) {
            diagnostics.append(.requiredValuesMissing(entity: entity, attribute: attribute, objects: m.ids, total: m.total))
        }
        for (relationship, t) in tooFew.sorted(by: { $0.key < $1.key }) {
            diagnostics.append(.tooFewLinks(entity: entity, relationship: relationship, minimum: t.min, objects: t.ids, total: t.total))
        }
        if !diagnostics.isEmpty {
            throw MigrationError.dataCheckFailed(source: sourceVersion, destination: destinationVersion, diagnostics: diagnostics)
        }
        try single { _, _ in }
        report(.checking, entity: entity, completed: total, total: total)
    }

    // MARK: Rewrites

    func runRewrite(entity: String, source sourceName: String) throws {
        let sourceBinding = try source.entity(sourceName)
        let destBinding = try destinationForWrites.entity(entity)
        guard let plan = mapping.entity(entity),
              let sourceEntry = sourceCatalog.entity(named: sourceName),
              let destEntry = destination.catalog.entity(named: entity) else {
            throw StoreError.corrupted(path: path, reason: .metadata("no mapping for \(entity)"))
        }
        let total = try environment.read { try $0.entryCount(sourceBinding.dbi) }
        let scripts = stage?.scripts.filter { $0.entity == entity } ?? []
        var writer = BinaryWriter(capacity: 1024)
        if scripts.isEmpty {
            var transcoder = try RecordTranscoder(source: sourceEntry, destination: destEntry, plan: plan)
            try batched(over: sourceBinding.dbi, phase: .instances, entity: entity, total: total) { txn, e, id, _ in
                do {
                    try transcoder.transcode(e.value, id: id, sourceTag: sourceEntry.tag, into: &writer)
                } catch let failure as DecodeFailure {
                    throw StoreError.corruptedRecord(entity: sourceName, id: ObjectID(rawValue: id), reason: failure.reason)
                }
                return try self.append(txn, destBinding.dbi, id, writer.buffer)
            }
        } else {
            let intermediate = try IntermediateModel(source: sourceSchema, destination: destinationSchema, entity: entity, plan: plan)
            try batched(over: sourceBinding.dbi, phase: .script, entity: entity, total: total) { txn, e, id, _ in
                let values = try sourceBinding.decodeValues(e.value, id: id)
                var object = try intermediate.object(id: id, sourceValues: values, sourceBinding: sourceBinding)
                do {
                    for script in scripts { try script.body(&object) }
                    try object.checkAssignments()
                } catch {
                    throw self.stageFailure(error, entity: entity, object: ObjectID(rawValue: id))
                }
                var row = try intermediate.destinationValues(of: object, destination: destBinding)
                do {
                    try destBinding.validate(&row)
                } catch {
                    throw self.stageFailure(error, entity: entity, object: ObjectID(rawValue: id))
                }
                try destBinding.encode(row, id: id, into: &writer)
                return try self.append(txn, destBinding.dbi, id, writer.buffer)
            }
        }
    }

    /// Appends a record to a staging database (keys arrive in increasing order).
    func append(_ txn: Transaction, _ dbi: DatabaseHandle, _ id: UInt64, _ bytes: UnsafeRawBufferPointer) throws -> Int {
        try ObjectKey.with(id) { key in
            // The cursor lent, not retained: no reference counted (two atomic updates) per record.
            let appended = try txn.withSharedCursor(dbi) { try $0.append(key: key, value: bytes) }
            if !appended { _ = try txn.put(dbi, key: key, value: bytes) }
        }
        return bytes.count + 8
    }

    // MARK: Indexes

    func runIndexBuild(entity: String, attribute: String) throws {
        let binding = try destination.entity(entity)
        let a = try binding.attribute(attribute)
        guard let index = binding.index(on: a) else { return try single { _, _ in } }
        let total = try environment.read { try $0.entryCount(binding.dbi) }
        try batched(over: binding.dbi, phase: .indexing, entity: entity, total: total) { txn, e, id, j in
            let value = try binding.decodeValues(e.value, id: id)[a]
            if value.isNull { return 0 }
            let key = txn.indexKey(value)
            if index.isUnique {
                let context = ReadContext(txn: txn, model: self.destination)
                let holders = try context.indexLookup(binding, attribute: a, index: index, value: value).filter { $0 != id }
                // Each shared value is listed (and counted) once, when its second holder is met; later holders
                // go into the staging index too so that they are seen as repeats (the step then rolls back).
                if holders.count == 1 { j.record(finding: value.description) }
            }
            try key.withUnsafeBytes { k in
                try ObjectKey.with(id) { v in _ = try txn.put(index.dbi, key: k, value: v, flags: LMDBFlags.noDupData) }
            }
            return key.count + 8
        }
        try failIfValuesFound(entity: entity, attribute: attribute)
    }
}
