import Foundation

/// The result of ``Store/verify()``: every problem found reading every record, link and index entry.
public struct VerificationReport: Sendable, Codable, Hashable {
    /// One problem, with the entity and object it concerns.
    public struct Problem: Sendable, Codable, Hashable, CustomStringConvertible {
        public enum Kind: String, Sendable, Codable, Hashable {
            /// A record's checksum or encoding is wrong.
            case corruptedRecord
            /// A record's key is not an object identifier.
            case corruptedKey
            /// A required attribute is null.
            case missingRequiredValue
            /// A link points to an object that does not exist.
            case danglingLink
            /// A link has no matching link on the inverse side.
            case missingInverse
            /// A relationship holds more or fewer links than its counts allow.
            case countViolation
            /// An object's indexed value has no index entry.
            case missingIndexEntry
            /// An index entry points to a missing object or another value.
            case staleIndexEntry
            /// A unique attribute's value is shared.
            case uniqueViolation
            /// The store's metadata is inconsistent.
            case metadata
        }
        public var kind: Kind
        public var entity: String?
        public var objectID: UInt64?
        public var detail: String

        public var description: String {
            var s = kind.rawValue
            if let entity { s += " \(entity)" }
            if let objectID { s += " #\(objectID)" }
            return s + ": " + detail
        }
    }

    public var problems: [Problem] = []
    /// Notes that are not problems (a migration in progress, reader slots cleared).
    public var notes: [String] = []
    public var objectsChecked = 0
    public var linksChecked = 0
    public var indexEntriesChecked = 0
    /// Problems beyond the first 10,000 are counted, not listed.
    public var problemsNotListed = 0

    public var isClean: Bool { problems.isEmpty && problemsNotListed == 0 }

    mutating func add(_ kind: Problem.Kind, _ entity: String?, _ id: UInt64?, _ detail: String) {
        if problems.count < 10_000 {
            problems.append(Problem(kind: kind, entity: entity, objectID: id, detail: detail))
        } else {
            problemsNotListed += 1
        }
    }
}

extension Store {
    /// Reads every record, link and index entry of the store, on one snapshot, and reports every problem:
    /// damaged records (checksums, encoding under the recorded layouts), required values, relationships and
    /// their inverses and counts, indexes and unique constraints, and the migration state.
    public func verify() throws -> VerificationReport {
        if isClosed { throw StoreError.closed }
        return try environment.read { txn in
            var report = VerificationReport()
            let context = ReadContext(txn: txn, model: model)
            if case .unwrittenFreePages(let pages) = environment.dataFileTail() {
                report.notes.append("data.mdb ends \(pages) page\(pages == 1 ? "" : "s") before LMDB's last page number: pages LMDB allocated and freed without writing them (they are on its free list; not damage)")
            }
            if try model.meta.get(.journal, in: txn) != nil {
                report.notes.append("a migration is in progress; the store reads as its source version")
            }
            // An index the store's maintenance is still building is incomplete by design: not checked.
            let building = try MaintenanceRecord.read(model.meta, in: txn).buildingIndexes
            if !building.isEmpty {
                report.notes.append("\(building.count) index\(building.count == 1 ? " is" : "es are") still being built by the store's maintenance (not checked)")
            }
            var maxID: UInt64 = 0
            for binding in model.entities {
                try verifyEntity(binding, building: building, txn: txn, context: context, report: &report, maxID: &maxID)
            }
            for binding in model.entities {
                for r in binding.relationships { try verifyLinks(binding, r, txn: txn, context: context, report: &report) }
                for index in binding.indexes where !building.contains(index.tag) {
                    try verifyIndex(binding, index, txn: txn, context: context, report: &report)
                }
            }
            if let next = try model.meta.read(.counter, in: txn, CounterRecord.decode), maxID >= next {
                report.add(.metadata, nil, maxID, "the object counter (\(next)) is not above the largest identifier")
            }
            return report
        }
    }

    private func verifyEntity(_ binding: EntityBinding, building: Set<UInt32>, txn: Transaction, context: ReadContext,
                              report: inout VerificationReport, maxID: inout UInt64) throws {
        let cursor = try txn.cursor(binding.dbi)
        let indexCursors = try binding.indexes.map { try txn.cursor($0.dbi) }
        var entry = try cursor.first()
        while let e = entry {
            defer { report.objectsChecked += 1 }
            guard e.key.count == 8 else {
                report.add(.corruptedKey, binding.name, nil, "a key of \(e.key.count) bytes")
                entry = try cursor.next()
                continue
            }
            let id = UInt64(bigEndian: e.key.loadUnaligned(as: UInt64.self))
            maxID = max(maxID, id)
            do {
                let values = try binding.decodeValues(e.value, id: id)
                for a in binding.requiredAttributes where values[a].isNull {
                    report.add(.missingRequiredValue, binding.name, id, "\(binding.attributeNames[a]) is null")
                }
                for (k, index) in binding.indexes.enumerated() where !values[index.attribute].isNull && !building.contains(index.tag) {
                    let found = try txn.indexKeys(values[index.attribute]).contains { candidate in
                        try candidate.withUnsafeBytes { key in
                            try ObjectKey.with(id) { v in try indexCursors[k].find(key, value: v) != nil }
                        }
                    }
                    if !found {
                        report.add(.missingIndexEntry, binding.name, id, "\(binding.attributeNames[index.attribute]) = \(values[index.attribute]) is not indexed")
                    }
                }
            } catch let error as StoreError where error.code == .corruptedRecord {
                report.add(.corruptedRecord, binding.name, id, error.reason ?? error.description)
            }
            entry = try cursor.next()
        }
    }

    private func verifyLinks(_ binding: EntityBinding, _ r: RelationshipBinding, txn: Transaction, context: ReadContext,
                             report: inout VerificationReport) throws {
        let destination = model.entities[r.destination]
        let inverse = destination.relationships[r.inversePosition]
        let cursor = try txn.cursor(r.dbi)
        let inverseCursor = try txn.cursor(inverse.dbi)
        var entry = try cursor.first()
        var currentSource: UInt64? = nil
        var count = 0
        func finishSource() {
            guard let s = currentSource else { return }
            if let max = r.maxCount, count > max {
                report.add(.countViolation, binding.name, s, "\(r.name) holds \(count) objects, at most \(max) allowed")
            }
            if let min = r.minCount, count < min {
                report.add(.countViolation, binding.name, s, "\(r.name) holds \(count) objects, at least \(min) required")
            }
        }
        while let e = entry {
            report.linksChecked += 1
            guard e.key.count == 8, e.value.count == 8 else {
                report.add(.danglingLink, binding.name, nil, "\(r.name): a link of \(e.key.count)/\(e.value.count) bytes")
                entry = try cursor.next()
                continue
            }
            let source = UInt64(bigEndian: e.key.loadUnaligned(as: UInt64.self))
            let target = UInt64(bigEndian: e.value.loadUnaligned(as: UInt64.self))
            if source != currentSource {
                finishSource()
                currentSource = source
                count = 0
            }
            count += 1
            if try !context.exists(source, binding) {
                report.add(.danglingLink, binding.name, source, "\(r.name) links from a missing object")
            }
            if try !context.exists(target, destination) {
                report.add(.danglingLink, binding.name, source, "\(r.name) links to missing \(destination.name) #\(target)")
            }
            let inverseFound = try ObjectKey.with(target) { k in try ObjectKey.with(source) { v in try inverseCursor.find(k, value: v) != nil } }
            if !inverseFound {
                report.add(.missingInverse, binding.name, source, "\(r.name) → #\(target) has no \(destination.name).\(inverse.name) link back")
            }
            entry = try cursor.next()
        }
        finishSource()
        if let min = r.minCount, min > 0 {
            // Objects with no link at all are not in the links database.
            let objects = try txn.sharedCursor(binding.dbi)
            var o = try objects.first()
            while let e = o {
                if e.key.count == 8 {
                    let id = UInt64(bigEndian: e.key.loadUnaligned(as: UInt64.self))
                    if try context.linkCount(id, r) == 0 {
                        report.add(.countViolation, binding.name, id, "\(r.name) holds 0 objects, at least \(min) required")
                    }
                }
                o = try objects.next()
            }
        }
    }

    private func verifyIndex(_ binding: EntityBinding, _ index: IndexBinding, txn: Transaction, context: ReadContext,
                             report: inout VerificationReport) throws {
        let name = binding.attributeNames[index.attribute]
        let cursor = try txn.cursor(index.dbi)
        var entry = try cursor.first()
        var previousKey: [UInt8]? = nil
        while let e = entry {
            report.indexEntriesChecked += 1
            let key = Array(e.key)
            guard e.value.count == 8 else {
                report.add(.staleIndexEntry, binding.name, nil, "\(name): an entry of \(e.value.count) bytes")
                entry = try cursor.next()
                continue
            }
            let id = UInt64(bigEndian: e.value.loadUnaligned(as: UInt64.self))
            do {
                if let object = try context.object(id, binding) {
                    if !txn.indexKeys(object.values[index.attribute]).contains(key) {
                        report.add(.staleIndexEntry, binding.name, id, "\(name): the index holds another value than the object")
                    }
                } else {
                    report.add(.staleIndexEntry, binding.name, id, "\(name): the index points to a missing object")
                }
            } catch let error as StoreError where error.code == .corruptedRecord {
                // Reported with the record.
            }
            if index.isUnique, key == previousKey, !IndexKey.isHashed(key) {
                report.add(.uniqueViolation, binding.name, id, "\(name) shares its value with another object")
            }
            previousKey = key
            entry = try cursor.next()
        }
    }
}
