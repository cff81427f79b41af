/// Why an import stopped, where, and what the store keeps.
///
/// An import commits its objects batch by batch, then makes their links, batch by batch. When it stops, the
/// batches committed before stay committed — ``committed`` says which lines and how many objects of each
/// entity — and nothing of the failing batch is kept:
///
/// ```swift
/// do {
///     try store.importObjects(from: url)
/// } catch let error as ImportError where error.kind == .badLine {
///     print("line \(error.line): \(error.reason)")          // line 5: attribute name: expected a string, got 42
///     print("kept lines 1–\(error.committed.linesCommitted)")
/// }
/// ```
///
/// New kinds can be added in later releases: switch over ``kind`` with a `default` case.
public struct ImportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure an import error is. Compare with the static members (`error.kind == .badLine`).
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The kind's name, as in `ImportError.Kind.badLine` (`"badLine"`).
        public let name: String
        init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A line cannot be imported: it is not JSON, names an unknown entity, attribute or relationship, has a
        /// value of the wrong form or an ID in use, or breaks a unique constraint, a required value or a maximum
        /// count. Found in the first pass: nothing of its batch is kept.
        public static let badLine = Kind("badLine")
        /// Reading the input failed (``ImportError/line`` is the line it was reading), or writing or reading the
        /// temporary file where links wait for the second pass.
        public static let unreadableInput = Kind("unreadableInput")
        /// A link of a committed line cannot be made in the second pass (most often: no object has its target's
        /// ID). The objects are committed, and the batches of links before it; nothing of the failing batch of
        /// links (lines ``ImportError/linksCommittedThroughLine`` + 1 through ``ImportError/line``).
        public static let badLink = Kind("badLink")
        /// `shouldStop` returned true: the import stopped after a committed batch (the links of the committed
        /// lines are made).
        public static let stopped = Kind("stopped")
        /// Everything was committed, but objects have fewer links than their relationships' minimum counts
        /// (``ImportSummary/belowMinimumCountExamples``): import the objects they link to. Only without an
        /// `entity`; with one, these are counted in the summary instead.
        public static let belowMinimumCount = Kind("belowMinimumCount")
    }

    /// A failure of the second pass while making the links of the lines committed before a bad line.
    public struct LinkFailure: Sendable, Hashable {
        /// The line whose link failed.
        public var line: Int
        public var reason: String
    }

    public var kind: Kind
    /// The line where the import stopped: the bad line, the line being read, the line whose link failed; 0 for
    /// ``Kind-swift.struct/stopped`` and ``Kind-swift.struct/belowMinimumCount``, and for a failed read of
    /// the links' temporary file.
    public var line: Int
    /// What is wrong, on one line, without a final period: `attribute name: expected a string, got 42`.
    public var reason: String
    /// What the store keeps: the objects of lines `1...committed.linesCommitted`, with their links to objects
    /// that exist.
    public var committed: ImportSummary
    /// The links of lines `1...linksCommittedThroughLine` are made (``Kind-swift.struct/badLink``).
    public var linksCommittedThroughLine: Int
    /// After a bad line (or a stop), the second pass still makes the links of the committed lines: where it
    /// failed, if it did.
    public var linkFailure: LinkFailure?

    init(_ kind: Kind, line: Int, reason: String, committed: ImportSummary, linksCommittedThroughLine: Int = 0,
         linkFailure: LinkFailure? = nil) {
        self.kind = kind
        self.line = line
        self.reason = reason
        self.committed = committed
        self.linksCommittedThroughLine = linksCommittedThroughLine
        self.linkFailure = linkFailure
    }

    /// What happened and what the store keeps, in sentences.
    public var description: String {
        let objects = Self.objectsText(committed)
        let kept = committed.linesCommitted
        switch kind {
        case .stopped:
            return "The import was asked to stop: committed \(objects) from lines 1–\(kept), with their links to objects that exist."
        case .badLink:
            var text = "line \(line): \(reason). The import's \(objects) \(committed.objectCount == 1 ? "is" : "are") committed"
            text += linksCommittedThroughLine > 0 ? ", with the links of lines 1–\(linksCommittedThroughLine); " : ", without links; "
            text += "no link of the failing batch (lines \(linksCommittedThroughLine + 1)–\(line)) was kept."
            return text
        case .belowMinimumCount:
            return "The import was committed, but \(reason)."
        default:
            var text = "line \(line): \(reason). "
            guard committed.objectCount > 0 else { return text + "Nothing was imported." }
            text += "Committed before it: \(objects) from lines 1–\(kept), with their links to objects that exist"
            if line > kept + 1 {
                text += "; nothing of lines \(kept + 1)–\(line) was kept"
            } else if line == kept + 1 {
                text += "; nothing of line \(line) was kept"
            }
            if let linkFailure { text += "; making the links of the committed lines stopped at line \(linkFailure.line): \(linkFailure.reason)" }
            return text + "."
        }
    }

    /// `3 objects (Tag 3)`
    static func objectsText(_ summary: ImportSummary) -> String {
        let n = summary.objectCount
        let perEntity = summary.objectsByEntity.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        return "\(n) \(n == 1 ? "object" : "objects")" + (perEntity.isEmpty ? "" : " (" + perEntity.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")")
    }
}
