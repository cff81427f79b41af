/// How far an import or an export is: reported through the `progress` closure of
/// `Store.importObjects(from:entity:batchSize:progress:shouldStop:)` and `Store.exportObjects(to:entities:progress:)`,
/// on the calling thread.
public struct InterchangeProgress: Sendable, Hashable, CustomStringConvertible {
    /// What is being done.
    public enum Phase: String, Sendable, Hashable {
        /// The import's first pass: objects inserted, reported after each committed batch (`total` is 0: the
        /// input's length is not known in advance).
        case importingObjects = "importing objects"
        /// The import's second pass: the committed lines' links made, reported after each committed batch of
        /// links (`completed` and `total` count link records: one per line and relationship).
        case makingLinks = "making links"
        /// The export: objects written, reported as the output is written (every 64 KiB) and after each entity.
        case exporting = "exporting"
    }

    public var phase: Phase
    /// The entity being exported (nil while importing).
    public var entity: String?
    /// Objects imported, link records made or objects exported so far.
    public var completed: Int
    /// What `completed` goes up to, or 0 when it is not known.
    public var total: Int

    public init(phase: Phase, entity: String? = nil, completed: Int, total: Int) {
        self.phase = phase
        self.entity = entity
        self.completed = completed
        self.total = total
    }

    /// The fraction done, from 0 to 1; nil when the total is not known.
    public var fractionCompleted: Double? { total > 0 ? min(1, Double(completed) / Double(total)) : nil }

    /// `importing objects 20000`, `making links 12/40`, `exporting Post 300/1000`.
    public var description: String {
        var text = phase.rawValue
        if let entity { text += " \(entity)" }
        return text + (total > 0 ? " \(completed)/\(total)" : " \(completed)")
    }
}
