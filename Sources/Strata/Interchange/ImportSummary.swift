/// What an import committed: returned by `Store.importObjects(from:…)`, and carried by an ``ImportError`` for
/// the batches committed before it.
public struct ImportSummary: Sendable, Hashable {
    /// Objects inserted, by entity name (entities without any are absent).
    public var objectsByEntity: [String: Int] = [:]
    /// Lines `1...linesCommitted` of the input are committed (blank lines and skipped lines included).
    public var linesCommitted = 0
    /// Relationship entries the lines gave and the second pass made (a link that existed already counts too).
    public var linksMade = 0
    /// Lines skipped because they hold objects of another entity than the import's `entity`.
    public var skippedLines = 0
    /// Links left out because their target, an object of another entity than the import's `entity`, does not
    /// exist yet: each is made from its other side when that entity is imported.
    public var linksLeftOut = 0
    /// The first links left out (at most three).
    public var linksLeftOutExamples: [LeftOutLink] = []
    /// With an `entity`, objects of the imported entities that have fewer links than a relationship's minimum
    /// count after the import (the other side may come in a later import); without one, such objects make
    /// the import throw ``ImportError/Kind-swift.struct/belowMinimumCount``.
    public var objectsBelowMinimumCount = 0
    /// The first objects below a minimum count (at most five).
    public var belowMinimumCountExamples: [MinimumCountShortfall] = []

    public init() {}

    /// All the objects inserted.
    public var objectCount: Int { objectsByEntity.values.reduce(0, +) }

    /// A link the import left out.
    public struct LeftOutLink: Sendable, Hashable, CustomStringConvertible {
        /// The input line that gives the link.
        public var line: Int
        public var entity: String
        public var id: ObjectID
        public var relationship: String
        /// The target's entity and ID.
        public var destination: String
        public var target: ObjectID

        /// `line 3: Post #7 tags → Tag #9`
        public var description: String {
            "line \(line): \(entity) #\(id.rawValue) \(relationship) → \(destination) #\(target.rawValue)"
        }
    }

    /// An object with fewer links through a relationship than the relationship's minimum count.
    public struct MinimumCountShortfall: Sendable, Hashable, CustomStringConvertible {
        public var entity: String
        public var id: ObjectID
        public var relationship: String
        /// Its links through the relationship.
        public var count: Int
        public var minimum: Int

        /// `Comment #3 post: 0 of at least 1`
        public var description: String { "\(entity) #\(id.rawValue) \(relationship): \(count) of at least \(minimum)" }
    }
}
