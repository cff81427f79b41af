import Foundation
import Strata

/// What `strata plan --json` prints: ``MigrationExplanation`` with its estimates (fields documented in
/// `CommandLineTool.md`).
struct PlanJSON: Encodable {
    struct Count: Encodable {
        var objects: Int
        /// Why the count is an estimate; absent for a count read from the store.
        var estimatedFrom: String?
    }

    struct EntityMapping: Encodable {
        var source: String?
        var destination: String?
        /// One line per change: attributes and relationships not simply copied, dropped, indexes, uniqueness.
        var changes: [String]
    }

    struct Step: Encodable {
        var source: String
        var destination: String
        var isCustom: Bool
        var rewritesRecords: Bool
        var inferable: Bool
        var diagnostics: [String]
        var entities: [EntityMapping]
        var entityHandling: [String: String]
        var recordCounts: [String: Count]
        var recordsTouched: Int
        var recordsTouchedIsLowerBound: Bool
        var tasks: [String]
        /// New indexes (`Entity.attribute`) built after the step, while the store is in use.
        var backgroundIndexes: [String]
        var bytesToWrite: Int
        var estimatedSeconds: Double
    }

    struct Calibration: Encodable {
        var sampledRecords: Int
        var readSecondsPerRecord: Double
        var decodeSecondsPerRecord: Double
        var encodeSecondsPerRecord: Double
        var writeSecondsPerRecord: Double
        var insertSecondsPerRecord: Double
        var commitSeconds: Double
        var commitSecondsPerByte: Double
        var averageRecordBytes: [String: Double]
    }

    struct Unfinished: Encodable {
        var sourceVersion: String
        var destinationVersion: String
        var task: Int
        var taskCount: Int
        var recordsDone: Int
    }

    var storeVersion: String
    var destinationVersion: String
    var isUpToDate: Bool
    var steps: [Step]
    var bytesToWrite: Int
    var estimatedSeconds: Double
    var calibration: Calibration?
    var unfinishedMigration: Unfinished?
    /// The plan's older versions that can open the store at the destination without migrating it.
    var versionsThatCanOpen: [String]

    init(_ e: MigrationExplanation, destination: String, unfinished: StoreInfo.MigrationState?) {
        storeVersion = e.storeVersion
        destinationVersion = destination
        isUpToDate = e.isUpToDate
        versionsThatCanOpen = e.versionsThatCanOpen
        steps = e.steps.map { step in
            Step(
                source: step.source, destination: step.destination, isCustom: step.isCustom,
                rewritesRecords: step.rewritesRecords, inferable: step.mapping != nil,
                diagnostics: step.diagnostics.map { "\($0)" },
                entities: (step.mapping?.entities ?? []).map { m in
                    var changes: [String] = []
                    for a in m.attributes where a.description != "\(a.name): copied" { changes.append("\(a)") }
                    for a in m.droppedAttributes { changes.append("\(a): dropped") }
                    for r in m.relationships where r.description != "\(r.name): copied" { changes.append("\(r)") }
                    for r in m.droppedRelationships { changes.append("\(r): dropped") }
                    for i in m.indexesAdded { changes.append("index on \(i): built") }
                    for i in m.indexesDropped { changes.append("index on \(i): dropped") }
                    for u in m.uniquenessAdded { changes.append("\(u): made unique") }
                    return EntityMapping(source: m.sourceName, destination: m.destinationName, changes: changes)
                },
                entityHandling: step.entityHandling,
                recordCounts: step.recordCounts.mapValues { Count(objects: $0.value, estimatedFrom: $0.basis) },
                recordsTouched: step.recordsTouched, recordsTouchedIsLowerBound: step.recordsTouchedIsLowerBound,
                tasks: step.tasks, backgroundIndexes: step.backgroundIndexes, bytesToWrite: step.bytesToWrite, estimatedSeconds: step.estimatedSeconds)
        }
        bytesToWrite = e.bytesToWrite
        estimatedSeconds = e.estimatedSeconds
        calibration = e.calibration.map {
            Calibration(sampledRecords: $0.sampledRecords, readSecondsPerRecord: $0.readSecondsPerRecord,
                        decodeSecondsPerRecord: $0.decodeSecondsPerRecord, encodeSecondsPerRecord: $0.encodeSecondsPerRecord,
                        writeSecondsPerRecord: $0.writeSecondsPerRecord, insertSecondsPerRecord: $0.insertSecondsPerRecord,
                        commitSeconds: $0.commitSeconds,
                        commitSecondsPerByte: $0.commitSecondsPerByte, averageRecordBytes: $0.averageRecordBytes)
        }
        unfinishedMigration = unfinished.map {
            Unfinished(sourceVersion: $0.sourceVersion, destinationVersion: $0.destinationVersion, task: $0.taskIndex + 1,
                       taskCount: $0.taskCount, recordsDone: $0.completed)
        }
    }
}
