import Foundation
import Strata

/// Five versions of a journal app, each step a lightweight migration, together covering renames (attribute,
/// relationship, entity), added and removed attributes and entities, defaults (and a default changed
/// later, which must not rewrite history), optional → required, widenings, to-one → to-many → to-one,
/// and indexes and unique constraints added and removed.
///
/// | step | changes |
/// |---|---|
/// | v1 → v2 | `Entry.title` → `headline` (indexed); `words` added (default 0); `body` removed; `draft` made required (default false); `Folder.color` added; `Label` → `Tag`, `Entry.labels` → `tags`; `created` index dropped |
/// | v2 → v3 | `mood` Int16 → Int32; `rating` Float → Double; `words` default 0 → 99; entity `Note` added |
/// | v3 → v4 | `headline` → `caption`; `mood` Int32 → Int64; `pinned` added (default true); `Folder.color` made required (default "grey"); `Note` removed; `Tag.text` made unique; `Entry.folder` made to-many |
/// | v4 → v5 | `mood` Int64 → Double; `pinned` default true → false; `summary` added; `Entry.folder` back to to-one |
public enum JournalChain {
    public static let versions = ["v1", "v2", "v3", "v4", "v5"]

    public static func v1() throws -> Schema {
        try Schema("v1") {
            Entity("Entry") {
                Attribute("title", .string)
                Attribute("body", .string).optional()
                Attribute("mood", .int16)
                Attribute("rating", .float)
                Attribute("created", .date).indexed()
                Attribute("code", .string).unique()
                Attribute("draft", .bool).optional()
                Relationship("folder", to: "Folder", inverse: "entries")
                Relationship("labels", to: "Label", inverse: "entries", toMany: true)
            }
            Entity("Folder") {
                Attribute("name", .string).unique()
                Relationship("entries", to: "Entry", inverse: "folder", toMany: true)
            }
            Entity("Label") {
                Attribute("text", .string)
                Relationship("entries", to: "Entry", inverse: "labels", toMany: true)
            }
        }
    }

    public static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Entry") {
                Attribute("headline", .string).renamed(from: "title").indexed()
                Attribute("mood", .int16)
                Attribute("rating", .float)
                Attribute("created", .date)
                Attribute("code", .string).unique()
                Attribute("draft", .bool).defaultValue(false)
                Attribute("words", .int32).defaultValue(.int32(0))
                Relationship("folder", to: "Folder", inverse: "entries")
                Relationship("tags", to: "Tag", inverse: "entries", toMany: true).renamed(from: "labels")
            }
            Entity("Folder") {
                Attribute("name", .string).unique()
                Attribute("color", .string).optional()
                Relationship("entries", to: "Entry", inverse: "folder", toMany: true)
            }
            Entity("Tag", renamingIdentifier: "Label") {
                Attribute("text", .string)
                Relationship("entries", to: "Entry", inverse: "tags", toMany: true)
            }
        }
    }

    public static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Entry") {
                Attribute("headline", .string).renamed(from: "title").indexed()
                Attribute("mood", .int32)
                Attribute("rating", .double)
                Attribute("created", .date)
                Attribute("code", .string).unique()
                Attribute("draft", .bool).defaultValue(false)
                Attribute("words", .int32).defaultValue(.int32(99))
                Relationship("folder", to: "Folder", inverse: "entries")
                Relationship("tags", to: "Tag", inverse: "entries", toMany: true).renamed(from: "labels")
            }
            Entity("Folder") {
                Attribute("name", .string).unique()
                Attribute("color", .string).optional()
                Relationship("entries", to: "Entry", inverse: "folder", toMany: true)
            }
            Entity("Tag", renamingIdentifier: "Label") {
                Attribute("text", .string)
                Relationship("entries", to: "Entry", inverse: "tags", toMany: true)
            }
            Entity("Note") {
                Attribute("text", .string)
            }
        }
    }

    public static func v4() throws -> Schema {
        try Schema("v4") {
            Entity("Entry") {
                Attribute("caption", .string).renamed(from: "headline").indexed()
                Attribute("mood", .int64)
                Attribute("rating", .double)
                Attribute("created", .date)
                Attribute("code", .string).unique()
                Attribute("draft", .bool).defaultValue(false)
                Attribute("words", .int32).defaultValue(.int32(99))
                Attribute("pinned", .bool).defaultValue(true)
                Relationship("folder", to: "Folder", inverse: "entries", toMany: true)
                Relationship("tags", to: "Tag", inverse: "entries", toMany: true)
            }
            Entity("Folder") {
                Attribute("name", .string).unique()
                Attribute("color", .string).defaultValue("grey")
                Relationship("entries", to: "Entry", inverse: "folder", toMany: true)
            }
            Entity("Tag") {
                Attribute("text", .string).unique()
                Relationship("entries", to: "Entry", inverse: "tags", toMany: true)
            }
        }
    }

    public static func v5() throws -> Schema {
        try Schema("v5") {
            Entity("Entry") {
                Attribute("caption", .string).indexed()
                Attribute("mood", .double)
                Attribute("rating", .double)
                Attribute("created", .date)
                Attribute("code", .string).unique()
                Attribute("draft", .bool).defaultValue(false)
                Attribute("words", .int32).defaultValue(.int32(99))
                Attribute("pinned", .bool).defaultValue(false)
                Attribute("summary", .string).optional()
                Relationship("folder", to: "Folder", inverse: "entries")
                Relationship("tags", to: "Tag", inverse: "entries", toMany: true)
            }
            Entity("Folder") {
                Attribute("name", .string).unique()
                Attribute("color", .string).defaultValue("grey")
                Relationship("entries", to: "Entry", inverse: "folder", toMany: true)
            }
            Entity("Tag") {
                Attribute("text", .string).unique()
                Relationship("entries", to: "Entry", inverse: "tags", toMany: true)
            }
        }
    }

    public static func schemas() throws -> [Schema] { [try v1(), try v2(), try v3(), try v4(), try v5()] }

    public static func schema(_ version: String) throws -> Schema {
        guard let s = try schemas().first(where: { $0.versionIdentifier == version }) else {
            preconditionFailure("no version \(version)")
        }
        return s
    }

    /// The plan from v1 to `last`.
    public static func plan(through last: String = "v5") throws -> MigrationPlan {
        let all = try schemas()
        let end = all.firstIndex { $0.versionIdentifier == last }!
        return try MigrationPlan(schemas: Array(all[...end]))
    }

    /// Fills a store at `version` with `entries` entries (and folders and tags), recording them in `oracle`.
    /// Values are random (seeded) but respect the version's unique constraints and to-one relationships;
    /// some optional and defaulted attributes are left unset so that defaults and nulls are exercised.
    public static func fill(_ store: Store, version: String, entries: Int, seed: UInt64, oracle: Oracle) throws {
        var rng = SeededGenerator(seed: seed)
        let schema = store.schema
        let entry = schema.entity(named: "Entry")!
        let tagEntity = schema.entity(named: "Tag") != nil ? "Tag" : "Label"
        let log = try store.write { ctx -> OracleLog in
            var log: OracleLog = []
            var folders: [ObjectID] = []
            for f in 0..<max(3, entries / 40) {
                var values: [String: Value] = ["name": .string("\(version) folder \(f)")]
                if schema.entity(named: "Folder")?.attribute(named: "color") != nil, rng.chance(0.5) {
                    values["color"] = .string(["red", "blue"][rng.int(2)])
                }
                let folder = try ctx.insert("Folder", values, log: &log)
                folders.append(folder.id)
            }
            var tags: [ObjectID] = []
            for t in 0..<max(4, entries / 25) {
                let tag = try ctx.insert(tagEntity, ["text": .string("\(version) tag \(t)")], log: &log)
                tags.append(tag.id)
            }
            if schema.entity(named: "Note") != nil {
                for n in 0..<5 {
                    try ctx.insert("Note", ["text": .string("note \(n)")], log: &log)
                }
            }
            for i in 0..<entries {
                var values: [String: Value] = [:]
                for a in entry.attributes {
                    switch a.name {
                    case "code": values["code"] = .string("\(version)-code-\(i)")
                    case "created": values["created"] = .date(Date(timeIntervalSinceReferenceDate: Double(rng.int(1_000_000_000))))
                    default:
                        // Leave defaulted and optional attributes unset a third of the time.
                        if (a.isOptional || a.defaultValue != nil) && rng.chance(0.35) { continue }
                        values[a.name] = a.name == "mood" ? moodValue(a.type, &rng) : rng.value(of: a.type)
                    }
                }
                let object = try ctx.insert("Entry", values, log: &log)
                if rng.chance(0.8) {
                    let folder = rng.pick(folders)
                    try ctx.link(object.id, of: "Entry", "folder", to: folder)
                    log.append { $0.link(object.id, "folder", folder) }
                }
                let relationship = entry.relationship(named: "tags") != nil ? "tags" : "labels"
                for _ in 0..<rng.int(3) {
                    let tag = rng.pick(tags)
                    try ctx.link(object.id, of: "Entry", relationship, to: tag)
                    log.append { $0.link(object.id, relationship, tag) }
                }
            }
            return log
        }
        for apply in log { apply(oracle) }
    }

    /// Moods are small so that every widening keeps them exact.
    static func moodValue(_ type: AttributeType, _ rng: inout SeededGenerator) -> Value {
        let m = rng.int(200) - 100
        switch type {
        case .int16: return .int16(Int16(m))
        case .int32: return .int32(Int32(m))
        case .int64: return .int64(Int64(m))
        default: return .double(Double(m))
        }
    }

    /// Rewrites the oracle as the lightweight step from `source` to the next version changes the data.
    public static func applyStep(from source: String, to oracle: Oracle) throws {
        func widen(_ name: String, _ convert: @escaping (Value) -> Value) {
            oracle.mapAttribute("Entry", name) { $0.isNull ? .null : convert($0) }
        }
        switch source {
        case "v1":
            oracle.renameAttribute("Entry", from: "title", to: "headline")
            oracle.removeAttribute("Entry", "body")
            oracle.mapAttribute("Entry", "draft") { $0.isNull ? .bool(false) : $0 }
            oracle.addAttribute("Entry", "words", value: .int32(0))
            oracle.addAttribute("Folder", "color", value: .null)
            oracle.renameEntity("Label", to: "Tag")
            oracle.renameRelationship("Entry", from: "labels", to: "tags")
            oracle.adopt(try v2())
        case "v2":
            widen("mood") { .int32(Int32($0.int64Value!)) }
            widen("rating") { .double($0.doubleValue!) }
            oracle.adopt(try v3())
        case "v3":
            oracle.renameAttribute("Entry", from: "headline", to: "caption")
            widen("mood") { .int64($0.int64Value!) }
            oracle.addAttribute("Entry", "pinned", value: .bool(true))
            oracle.mapAttribute("Folder", "color") { $0.isNull ? .string("grey") : $0 }
            oracle.removeEntity("Note")
            oracle.adopt(try v4())
        case "v4":
            widen("mood") { .double($0.doubleValue!) }
            oracle.addAttribute("Entry", "summary", value: .null)
            oracle.adopt(try v5())
        default:
            preconditionFailure("no step from \(source)")
        }
    }
}
