import Foundation
import StrataModels

/// The notes app: an attribute added; an attribute replaced by an entity linked by a to-one relationship;
/// that to-one turned into a to-many keeping the existing links.
///
/// - v1: `Note(title, body, category)` (category is a string)
/// - v2: `pinned` added, default false (lightweight)
/// - v3: the `category` string becomes a `Category` entity (one per distinct name), linked by the to-one
///   `Note.category` ↔ `Category.notes` (a custom stage with a lookup table)
/// - v4: `Note.category` becomes the to-many `Note.categories` (renaming identifier; lightweight, links kept)
public enum NotesApp {
    public enum V1: SchemaVersion {
        public static let versionIdentifier = "v1"
        public static let models: [any EntityModel.Type] = [Note.self]

        @Entity public struct Note {
            public var title: String
            public var body: String
            public var category: String
        }
    }

    public enum V2: SchemaVersion {
        public static let versionIdentifier = "v2"
        public static let models: [any EntityModel.Type] = [Note.self]

        @Entity public struct Note {
            public var title: String
            public var body: String
            public var category: String
            public var pinned: Bool = false
        }
    }

    public enum V3: SchemaVersion {
        public static let versionIdentifier = "v3"
        public static let models: [any EntityModel.Type] = [Note.self, Category.self]

        @Entity public struct Note {
            public var title: String
            public var body: String
            public var pinned: Bool = false
            @Related(inverse: \Category.notes) public var category: ObjectID?
        }

        @Entity public struct Category {
            @Field(.unique) public var name: String
            @Related(to: Note.self, inverse: "category") public var notes: [ObjectID] = []
        }
    }

    public enum V4: SchemaVersion {
        public static let versionIdentifier = "v4"
        public static let models: [any EntityModel.Type] = [Note.self, Category.self]

        @Entity public struct Note {
            public var title: String
            public var body: String
            public var pinned: Bool = false
            @Related(inverse: \Category.notes, originalName: "category") public var categories: [ObjectID] = []
        }

        @Entity public struct Category {
            @Field(.unique) public var name: String
            @Related(to: Note.self, inverse: "categories") public var notes: [ObjectID] = []
        }
    }

    public static let v1: Schema = frozen { try Schema(V1.self) }
    public static let v2: Schema = frozen { try Schema(V2.self) }
    public static let v3: Schema = frozen { try Schema(V3.self) }
    public static let v4: Schema = frozen { try Schema(V4.self) }

    public static let versions = [v1, v2, v3, v4]

    /// v2 → v3 as a typed mapping: one `Category` per distinct name, through a lookup table.
    public static let categoriesStage = MigrationStage.custom(from: V2.self, to: V3.self, entityMappings: [
        .each(V2.Note.self, creating: [V3.Category.self], instances: { note, context in
            try context.insert(V3.Note(title: note.title, body: note.body, pinned: note.pinned), keepingSourceID: true)
            _ = try context.lookupOrInsert("categories", key: .string(note.category)) { V3.Category(name: note.category) }
        }, relationships: { note, context in
            if let id = note.objectID, let category = try context.lookup("categories", .string(note.category)) {
                try context.link(id, \V3.Note.category, to: category)
            }
        }),
    ])

    /// The same stage as a dynamic mapping.
    public static let dynamicCategoriesStage = MigrationStage.custom(
        from: "v2", to: "v3",
        entityMappings: [
            .transform("Note", destinations: ["Category"], instances: { note, context in
                try context.insertInferred(for: note)
                let name = note["category"]
                _ = try context.lookupOrInsert("categories", key: name, entity: "Category", values: ["name": name])
            }, relationships: { note, context in
                if let category = try context.lookup("categories", note["category"]) {
                    try context.link(note.id, of: "Note", "category", to: category)
                }
            }),
        ])

    public static let plan: MigrationPlan = frozen { try MigrationPlan(schemas: versions, stages: [categoriesStage]) }

    public static let categoryNames = ["work", "home", "ideas", "travel", "reading", "errands", "health"]

    /// What ``fill(_:version:count:)`` writes for note `i`: tests derive what a migrated store must hold from
    /// these, not from the store before the migration. `pinned` is written from v2 on (v1 has no such
    /// attribute).
    public struct NoteContent: Sendable, Equatable {
        public var title: String
        public var body: String
        public var category: String
        public var pinned: Bool
    }

    public static func note(_ i: Int) -> NoteContent {
        NoteContent(title: "Note \(i)", body: "Body of note \(i).", category: categoryNames[i % categoryNames.count], pinned: i % 5 == 0)
    }

    /// Fills a store at `version` with `count` notes; note i has category `categoryNames[i % 7]` and is pinned
    /// when i is a multiple of 5 (from v2 on).
    public static func fill(_ context: WriteContext, version: String, count: Int) throws {
        var categories: [String: DynamicObject] = [:]
        for i in 0..<count {
            let n = note(i)
            var values: [String: Value] = ["title": .string(n.title), "body": .string(n.body)]
            if version == "v1" || version == "v2" { values["category"] = .string(n.category) }
            if version != "v1" { values["pinned"] = .bool(n.pinned) }
            let object = try context.insert("Note", values)
            if version == "v3" || version == "v4" {
                if categories[n.category] == nil { categories[n.category] = try context.insert("Category", ["name": .string(n.category)]) }
                try context.link(object, version == "v3" ? "category" : "categories", to: categories[n.category]!)
            }
        }
    }
}
