import Foundation

/// The whole migration a store would go through, before anything runs: every step, each entity's
/// mapping, the records each step touches, and whether a step rewrites records or changes metadata only.
/// Made by ``Store/explainMigration(at:schema:plan:configuration:)``; `strata plan` prints it.
public struct MigrationExplanation: Sendable, CustomStringConvertible {
    /// One step of the route.
    public struct Step: Sendable {
        public var source: String
        public var destination: String
        /// Whether a custom stage runs the step.
        public var isCustom: Bool
        /// The inferred mapping (nil when the step cannot be inferred; see ``diagnostics``).
        public var mapping: InferredMapping?
        /// Why the step cannot be inferred, if it cannot.
        public var diagnostics: [MigrationDiagnostic]
        /// The step's tasks, in order.
        public var tasks: [String]
        /// Whether any record is rewritten (otherwise the step changes metadata, and reads records only to
        /// check them or build indexes).
        public var rewritesRecords: Bool
        /// Objects per source entity at the step's start: exact for the store's own entities and for what
        /// lightweight steps carry over, estimated for what a custom stage creates (see ``ObjectCount``).
        public var recordCounts: [String: ObjectCount]
        /// Records the step reads or writes (rewrites, checks, index builds, policy passes) that are known
        /// before it runs; objects a custom stage creates add to it (see ``recordsTouchedIsLowerBound``).
        public var recordsTouched: Int
        /// Whether the step also touches objects created during the step, whose number is not known before.
        public var recordsTouchedIsLowerBound: Bool
        /// How each destination entity is produced: `"metadata"` (same records, new metadata), `"rewritten"`
        /// (every record rewritten), or `"created"` (by a custom stage's policies, or a new entity).
        public var entityHandling: [String: String]
        /// New indexes (`Entity.attribute`) the store's maintenance builds after the step, while the store is in
        /// use (queries scan until they are complete).
        public var backgroundIndexes: [String] = []
        /// The bytes the step is estimated to write: rewritten records, created objects, association and
        /// index entries, links, and the metadata of the switch (see ``MigrationExplanation/calibration``).
        /// Zero for a step that cannot be inferred.
        public var bytesToWrite: Int = 0
        /// The step's estimated duration in seconds, from the records it goes over and the per-record costs
        /// measured on this store (``MigrationExplanation/calibration``), plus the time the explanation itself
        /// took to open the store and plan the step (the migration repeats that work): a few milliseconds for
        /// a step that changes metadata only. A custom stage's own code (its policies' work beyond building and linking
        /// objects, its scripts) is not known before it runs. Zero for a step that cannot be inferred.
        public var estimatedSeconds: Double = 0
    }

    /// How many objects an entity has at a step's start: counted in the store, or estimated for entities a
    /// custom stage of an earlier step creates (one object per object of each source entity mapped to it,
    /// which is what most policies make; ``basis`` says which).
    public struct ObjectCount: Sendable, Hashable, CustomStringConvertible {
        /// The count, or the estimate.
        public var value: Int
        /// Why the count is an estimate (nil for a count read from the store or carried over exactly).
        public var basis: String?
        public var isEstimate: Bool { basis != nil }

        public init(_ value: Int, basis: String? = nil) {
            self.value = value
            self.basis = basis
        }

        public var description: String {
            let objects = "\(value) object\(value == 1 ? "" : "s")"
            return basis.map { "about \(objects), estimated: \($0)" } ?? objects
        }
    }

    /// The store's version, and whether it is already at the app's.
    public var storeVersion: String
    public var isUpToDate: Bool
    public var steps: [Step]
    /// The per-record costs the estimates come from, measured on the store as it was explained (nil when
    /// there is nothing to migrate).
    public var calibration: MigrationCalibration? = nil
    /// The plan's older versions that can still open the store once it is at the app's version, as it is,
    /// without migrating it: every change since each of them is additive (see <doc:Migrations>, "Opening a
    /// newer store with an older app"). Oldest first.
    public var versionsThatCanOpen: [String] = []
    /// While a key rotation of the encrypted store runs (``Store/rotateEncryptionKey(at:to:configuration:)``): the
    /// values still sealed under the previous key, at most, which the store's maintenance re-seals in the background.
    public var valuesUnderPreviousKey: Int? = nil
    /// While the store is being encrypted (``Store/encrypt(at:with:configuration:)``): the values still plain, at
    /// most, which the store's maintenance seals in the background.
    public var valuesToEncrypt: Int? = nil
    /// While the store is being decrypted (``Store/decrypt(at:configuration:)``): the values still sealed, at most,
    /// which the store's maintenance opens in the background.
    public var valuesToDecrypt: Int? = nil

    /// The sentence on a key change under way (a rotation, encrypting, decrypting), if any.
    public var keyRotationText: String? {
        func values(_ n: Int) -> String { "\(n) value\(n == 1 ? " is" : "s are")" }
        if let n = valuesUnderPreviousKey {
            return "A key rotation is under way: at most \(values(n)) still sealed under the previous key, which opening the store needs until the store's maintenance has re-sealed them."
        }
        if let n = valuesToEncrypt {
            return "The store is being encrypted: at most \(values(n)) still plain, which the store's maintenance seals in the background; opening the store needs its key already."
        }
        if let n = valuesToDecrypt {
            return "The store is being decrypted: at most \(values(n)) still sealed, which opening the store needs its key for until the store's maintenance has opened them; afterwards it opens without a key."
        }
        return nil
    }

    /// The estimated duration of the whole migration, in seconds.
    public var estimatedSeconds: Double { steps.reduce(0) { $0 + $1.estimatedSeconds } }
    /// The estimated bytes the whole migration writes.
    public var bytesToWrite: Int { steps.reduce(0) { $0 + $1.bytesToWrite } }

    /// The sentence on ``versionsThatCanOpen``.
    var olderVersionsText: String {
        versionsThatCanOpen.isEmpty
            ? "No older version of the plan can open the store at the app's version without migrating it."
            : "Older versions that can still open the store at the app's version (every change since is additive): "
                + versionsThatCanOpen.joined(separator: ", ") + "."
    }

    public var description: String {
        if isUpToDate {
            return "The store is at \(storeVersion), the app's version: nothing to migrate. " + olderVersionsText
                + (keyRotationText.map { " " + $0 } ?? "")
        }
        var lines = ["The store is at \(storeVersion); \(steps.count) step\(steps.count == 1 ? "" : "s") to \(steps.last?.destination ?? "?"):"]
        for (i, step) in steps.enumerated() {
            let kind = step.isCustom ? "custom stage" : "lightweight"
            let cost = step.rewritesRecords ? "rewrites records" : "metadata only"
            let touched = step.mapping == nil ? "cannot be inferred"
                : "touches \(step.recordsTouchedIsLowerBound ? "at least " : "")\(step.recordsTouched) record\(step.recordsTouched == 1 ? "" : "s")"
            lines.append("")
            lines.append("Step \(i + 1): \(step.source) → \(step.destination) (\(kind), \(cost), \(touched))")
            if !step.diagnostics.isEmpty {
                lines.append("  Cannot be inferred:")
                for d in step.diagnostics { lines.append("    - \(d)") }
                continue
            }
            for entity in step.mapping?.entities ?? [] {
                let count = entity.sourceName.flatMap { step.recordCounts[$0] }.map { " (\($0))" } ?? ""
                switch (entity.sourceName, entity.destinationName) {
                case (nil, let d?): lines.append("  \(d): added")
                case (let s?, nil): lines.append("  \(s)\(count): removed")
                case (let s?, let d?):
                    let how: String
                    switch step.entityHandling[d] {
                    case "created": how = "created by the custom stage from \(s)"
                    case "rewritten": how = "every record rewritten"
                    default: how = "metadata only"
                    }
                    lines.append("  \(d)\(count): \(s == d ? how : "renamed from \(s), \(how)")")
                    for a in entity.attributes where a.description != "\(a.name): copied" { lines.append("    \(a)") }
                    for a in entity.droppedAttributes { lines.append("    \(a): dropped") }
                    for r in entity.relationships where r.description != "\(r.name): copied" { lines.append("    \(r)") }
                    for r in entity.droppedRelationships { lines.append("    \(r): dropped") }
                    for i in entity.indexesAdded {
                        let later = step.backgroundIndexes.contains("\(d).\(i)")
                        lines.append("    index on \(i): built\(later ? " in the background after the step" : "")")
                    }
                    for i in entity.indexesDropped { lines.append("    index on \(i): dropped") }
                    for u in entity.uniquenessAdded { lines.append("    \(u): made unique (existing values checked)") }
                default: break
                }
            }
            lines.append("  Tasks: " + step.tasks.joined(separator: ", "))
            lines.append("  Estimate: writes about \(ByteCount(step.bytesToWrite)), takes about \(Self.secondsText(step.estimatedSeconds))"
                         + (step.isCustom ? " plus the stage's own code" : ""))
        }
        lines.append("")
        lines.append(olderVersionsText)
        if let rotation = keyRotationText {
            lines.append("")
            lines.append(rotation)
        }
        if let c = calibration, c.sampledRecords > 0 {
            lines.append("")
            lines.append("Estimates are calibrated on \(c.sampledRecords) records of this store: per record, read \(Self.secondsText(c.readSecondsPerRecord)), decode \(Self.secondsText(c.decodeSecondsPerRecord)), encode \(Self.secondsText(c.encodeSecondsPerRecord)), write \(Self.secondsText(c.writeSecondsPerRecord)), insert an object \(Self.secondsText(c.insertSecondsPerRecord)); a durable commit \(Self.secondsText(c.commitSeconds)).")
        }
        return lines.joined(separator: "\n")
    }

    /// `1.2 s`, `35 ms`, `0.8 µs`-style text.
    static func secondsText(_ seconds: Double) -> String {
        if seconds >= 1 { return String(format: "%.1f s", seconds) }
        if seconds >= 1e-3 { return String(format: "%.0f ms", seconds * 1e3) }
        if seconds >= 1e-6 { return String(format: "%.1f µs", seconds * 1e6) }
        return String(format: "%.0f ns", seconds * 1e9)
    }
}
