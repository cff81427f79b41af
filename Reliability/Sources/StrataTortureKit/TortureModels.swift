import Foundation
import Strata
#if canImport(Glibc)
import Glibc
#endif

/// The models the reliability suite migrates, and the plans between them.
///
/// - `v1`: `Item(serial, title, score: Int16, when, note?, blob?, spot?)` ↔ `Tag(name)` (many-to-many),
///   `Marker(kind)`; `spot` is a Codable value with a declared shape.
/// - `v2` (lightweight, metadata only plus an index build): `title` renamed `name`, `flag` added with a
///   default, `score` indexed, `spot` reshaped (a key renamed, one removed, one added).
/// - `v3`: `v2` with `score` widened to Int64 (every record rewritten).
/// - `c2` (custom stage with entity mappings): every `Item` gets a required `digest` and one `Note`
///   (`Item.notes` ↔ `Note.item`), and `score` an index; `willMigrate` and `didMigrate` each insert a `Marker`.
/// - `s2` (custom stage with object scripts on an intermediate model): `score` becomes a string, and a
///   required `rank` is computed.
public enum TortureModels {
    public static let tagCount = 16

    static func tag() -> Entity {
        Entity("Tag") {
            Attribute("name", .string).unique()
            Relationship("items", to: "Item", inverse: "tags", toMany: true)
        }
    }

    /// `spot`, an optional Codable value at v1 (`{"x", "y", "label"?}`); at v2 and v3 its type is `SpotV2`
    /// (`y` renamed `north`, `label` removed, `z` added with 0): a change of shape that both versions declare,
    /// so that the lightweight plans read it through a projection and the sweep and rewrites reshape it.
    static func spotV1() -> Attribute {
        Attribute("spot", .codable("SpotV1")).optional()
            .shape([.field("x", .number), .field("y", .number), .field("label", .string).optional()])
    }

    static func spotV2() -> Attribute {
        Attribute("spot", .codable("SpotV2")).optional().shape([
            .field("x", .number), .field("north", .number).renamed(from: "y"), .field("z", .number).defaultValue(.integer(0)),
        ])
    }

    static func marker() -> Entity {
        Entity("Marker") { Attribute("kind", .string) }
    }

    public static func v1() throws -> Schema {
        try Schema("v1") {
            Entity("Item") {
                Attribute("serial", .int64).unique()
                Attribute("title", .string)
                Attribute("score", .int16)
                Attribute("when", .date)
                Attribute("note", .string).optional()
                Attribute("blob", .data).optional()
                spotV1()
                Relationship("tags", to: "Tag", inverse: "items", toMany: true)
            }
            tag()
            marker()
        }
    }

    public static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Item") {
                Attribute("serial", .int64).unique()
                Attribute("name", .string).renamed(from: "title")
                Attribute("score", .int16).indexed()
                Attribute("when", .date)
                Attribute("note", .string).optional()
                Attribute("blob", .data).optional()
                spotV2()
                Attribute("flag", .bool).defaultValue(false)
                Relationship("tags", to: "Tag", inverse: "items", toMany: true)
            }
            tag()
            marker()
        }
    }

    public static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Item") {
                Attribute("serial", .int64).unique()
                Attribute("name", .string).renamed(from: "title")
                Attribute("score", .int64).indexed()
                Attribute("when", .date)
                Attribute("note", .string).optional()
                Attribute("blob", .data).optional()
                spotV2()
                Attribute("flag", .bool).defaultValue(false)
                Relationship("tags", to: "Tag", inverse: "items", toMany: true)
            }
            tag()
            marker()
        }
    }

    public static func c2() throws -> Schema {
        try Schema("c2") {
            Entity("Item") {
                Attribute("serial", .int64).unique()
                Attribute("title", .string)
                Attribute("score", .int16).indexed()
                Attribute("when", .date)
                Attribute("note", .string).optional()
                Attribute("blob", .data).optional()
                spotV1()
                Attribute("digest", .string)
                Relationship("tags", to: "Tag", inverse: "items", toMany: true)
                Relationship("notes", to: "Note", inverse: "item", toMany: true, deleteRule: .cascade)
            }
            Entity("Note") {
                Attribute("text", .string)
                Relationship("item", to: "Item", inverse: "notes")
            }
            tag()
            marker()
        }
    }

    /// `d2`: v1 with each item's optional `note` moved into a `Note` (`Item.notes` ↔ `Note.item`) by a declared
    /// mapping, a streaming copy (items without a note get none).
    public static func d2() throws -> Schema {
        try Schema("d2") {
            Entity("Item") {
                Attribute("serial", .int64).unique()
                Attribute("title", .string)
                Attribute("score", .int16)
                Attribute("when", .date)
                Attribute("blob", .data).optional()
                spotV1()
                Relationship("tags", to: "Tag", inverse: "items", toMany: true)
                Relationship("notes", to: "Note", inverse: "item", toMany: true, deleteRule: .cascade)
            }
            Entity("Note") {
                Attribute("text", .string).indexed()
                Relationship("item", to: "Item", inverse: "notes")
            }
            tag()
            marker()
        }
    }

    public static func s2() throws -> Schema {
        try Schema("s2") {
            Entity("Item") {
                Attribute("serial", .int64).unique()
                Attribute("title", .string)
                Attribute("score", .string)
                Attribute("when", .date)
                Attribute("note", .string).optional()
                Attribute("blob", .data).optional()
                spotV1()
                Attribute("rank", .int64)
                Relationship("tags", to: "Tag", inverse: "items", toMany: true)
            }
            tag()
            marker()
        }
    }

    /// The digest the custom stage computes for an item.
    public static func digest(serial: Int64, title: String) -> String {
        "d\(serial % 97)-\(title.unicodeScalars.count)"
    }

    /// The note the custom stage creates for an item.
    public static func noteText(title: String) -> String { "about " + title }

    /// A plan by name: `light` (v1 → v2), `rewrite` (v1 → v3 directly), `chain` (v1 → v2 → v3),
    /// `custom` (v1 → c2), `typed` (v1 → c2 as a typed stage, ``TypedTortureModels``), `script` (v1 → s2),
    /// `declared` (v1 → d2, a declared extract), `v1` (no migration).
    /// `throwAt`: a custom stage throws at the item with that serial (a failing policy or script).
    /// `trapAt`: it traps there instead (a crash of the app's own code in the middle of a stage).
    public static func plan(_ name: String, throwAt: Int64? = nil, trapAt: Int64? = nil) throws -> MigrationPlan {
        switch name {
        case "v1": return try MigrationPlan(schemas: [v1()])
        case "light": return try MigrationPlan(schemas: [v1(), v2()])
        case "rewrite", "instant": return try MigrationPlan(schemas: [v1(), v3()])
        case "chain": return try MigrationPlan(schemas: [v1(), v2(), v3()])
        case "custom": return try MigrationPlan(schemas: [v1(), c2()], stages: [customStage(throwAt: throwAt, trapAt: trapAt)])
        case "typed": return try MigrationPlan(schemas: [v1(), c2()], stages: [TypedTortureModels.stage(throwAt: throwAt, trapAt: trapAt)])
        case "script": return try MigrationPlan(schemas: [v1(), s2()], stages: [scriptStage(throwAt: throwAt, trapAt: trapAt)])
        case "declared": return try MigrationPlan(schemas: [v1(), d2()], stages: [declaredStage])
        default: throw TortureError("unknown plan \(name)")
        }
    }

    /// The configuration the suite opens stores with for a plan: no background maintenance (a test that
    /// wants the sweep runs it, or asks for it with `--maintenance`), and for `rewrite` and `chain` every record
    /// rewritten by the step (`rewritesEveryRecord()`), since those plans exist to exercise the rewrite path;
    /// `instant` is the same v1 → v3 as `rewrite`, metadata only.
    public static func configuration(plan name: String) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        if name == "rewrite" || name == "chain" { configuration.migration.rewritesEveryRecord() }
        return configuration
    }

    /// The version a plan ends at.
    public static func finalVersion(ofPlan name: String) -> String {
        switch name {
        case "light": "v2"
        case "rewrite", "chain", "instant": "v3"
        case "custom", "typed": "c2"
        case "script": "s2"
        case "declared": "d2"
        default: "v1"
        }
    }

    /// v1 → d2: each item's note becomes a `Note` linked to it; the items' tags are carried by the inferred links.
    static let declaredStage = MigrationStage.custom(from: "v1", to: "d2", entityMappings: [
        .extract("Note", from: "Item", linkedBy: "item", values: ["text": .attribute("note")], skippingNil: "note"),
    ])

    /// An error a stage throws on purpose.
    public struct InjectedStageError: Error, CustomStringConvertible {
        public let serial: Int64
        public var description: String { "injected failure at serial \(serial)" }
    }

    /// The object a relationship pass was handed is not the one it asked about: its values are another object's.
    /// (The pass's objects may be decoded ahead on another thread, and a batch runs again after the map grew.)
    public struct HandedOverWrongObject: Error, CustomStringConvertible {
        public let id: ObjectID
        public let serial: Value
        public var description: String { "the relationship pass was handed serial \(serial) for object \(id)" }
    }

    /// A `willMigrate` or `didMigrate` script of the c2 stages: recorded in the ledger, and a `Marker` of that kind.
    static func markerScript(_ kind: String) -> @Sendable (WriteContext) throws -> Void {
        { context in
            Ledger.record(kind)
            try context.insert("Marker", ["kind": .string(kind)])
        }
    }

    /// What a c2 stage does first for the item `serial`: throws or traps there when asked to, else records it.
    static func visit(serial: Int64, throwAt: Int64?, trapAt: Int64?) throws {
        if serial == throwAt { throw InjectedStageError(serial: serial) }
        if serial == trapAt { fatalError("injected trap at serial \(serial)") }
        Ledger.record("i\(serial)")
    }

    static func customStage(throwAt: Int64?, trapAt: Int64?) -> MigrationStage {
        .custom(
            from: "v1", to: "c2",
            willMigrate: markerScript("will"),
            entityMappings: [
                .transform("Item", destinations: ["Item", "Note"], instances: { item, context in
                    let serial = item["serial"].int64Value ?? -1
                    try visit(serial: serial, throwAt: throwAt, trapAt: trapAt)
                    // The item through the object form, the note by attribute names: both make their rows in the
                    // arrays the previous object's insert handed back.
                    var object = try context.inferredObject(for: item)
                    let title = item["title"].stringValue ?? ""
                    object["digest"] = .string(digest(serial: serial, title: title))
                    try context.insert(object, keepingSourceID: true)
                    try context.insert("Note", ["text": .string(noteText(title: title))])
                }, relationships: { item, context in
                    // What it links depends on nothing but the identifier; the values handed over are checked
                    // against the source object read by that identifier, so that a wrong hand-over fails the step.
                    let serial = item["serial"]
                    guard try context.sourceObject(item.id, of: "Item")?["serial"] == serial else {
                        throw HandedOverWrongObject(id: item.id, serial: serial)
                    }
                    for note in try context.destinations(for: item.id, entity: "Note") {
                        try context.link(item.id, of: "Item", "notes", to: note)
                    }
                    try context.linkInferred(for: item)
                }),
            ],
            didMigrate: markerScript("did"))
    }

    static func scriptStage(throwAt: Int64?, trapAt: Int64?) -> MigrationStage {
        .custom(
            from: "v1", to: "s2",
            willMigrate: { context in
                Ledger.record("will")
                try context.insert("Marker", ["kind": "will"])
            },
            scripts: [
                ObjectScript("Item") { item in
                    let serial = item["serial"].int64Value ?? -1
                    if serial == throwAt { throw InjectedStageError(serial: serial) }
                    if serial == trapAt { fatalError("injected trap at serial \(serial)") }
                    Ledger.record("s\(serial)")
                    let old = try item.previousValue("score").int64Value ?? 0
                    item["score"] = .string("s\(old)")
                    item["rank"] = .int64(serial * 2)
                },
            ],
            didMigrate: { context in
                Ledger.record("did")
                try context.insert("Marker", ["kind": "did"])
            })
    }
}

/// A file outside the store where custom stages note every object they transform (one line each), so a
/// test can count how often each was transformed across crashes. Set with `STRATA_TORTURE_LEDGER`.
public enum Ledger {
    static let path: String? = ProcessInfo.processInfo.environment["STRATA_TORTURE_LEDGER"]

    public static func record(_ line: String) {
        guard let path else { return }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Counts of each line of a ledger file.
    public static func counts(at path: String) -> [String: Int] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        var out: [String: Int] = [:]
        for line in text.split(separator: "\n") { out[String(line), default: 0] += 1 }
        return out
    }
}

/// An error of the torture harness itself.
public struct TortureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
