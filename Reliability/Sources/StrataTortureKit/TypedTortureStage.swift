import Foundation
import Strata
import StrataModels

/// The `typed` plan: v1 → c2 as the `custom` plan migrates it, written as a typed stage
/// (``EntityMapping/each(_:creating:instances:relationships:)``): v1's `Item` decoded into a Swift type (on the
/// migration's reader thread, ``MigrationOptions/decodesAhead``), c2's `Item` and `Note` inserted as Swift values.
/// The store it makes is the one the `custom` plan makes, so the same oracle checks it.
public enum TypedTortureModels {
    /// v1's and c2's `spot`: `{"x", "y", "label"?}`, with the shape `TortureModels.spotV1()` declares.
    public struct SpotV1: Codable, Sendable, Equatable, CodableShapeDescribing {
        public var x: Int64
        public var y: Int64
        public var label: String?

        public static var codableShape: CodableShape {
            [.field("x", .number), .field("y", .number), .field("label", .string).optional()]
        }
    }

    /// v1's `Item` and `Tag`, declared as `TortureModels.v1()` declares them.
    public enum V1 {
        @Entity("Item") public struct Item {
            @Field(.unique) public var serial: Int64
            public var title: String
            public var score: Int16
            public var when: Date
            public var note: String?
            public var blob: Data?
            @Field(.codable("SpotV1")) public var spot: SpotV1?
            @Related(to: Tag.self, inverse: "items") public var tags: [ObjectID] = []
        }

        @Entity("Tag") public struct Tag {
            @Field(.unique) public var name: String
            @Related(inverse: \Item.tags) public var items: [ObjectID] = []
        }
    }

    /// c2's `Item`, `Note` and `Tag`, declared as `TortureModels.c2()` declares them.
    public enum C2 {
        @Entity("Item") public struct Item {
            @Field(.unique) public var serial: Int64
            public var title: String
            @Field(.indexed) public var score: Int16
            public var when: Date
            public var note: String?
            public var blob: Data?
            @Field(.codable("SpotV1")) public var spot: SpotV1?
            public var digest: String
            @Related(to: Tag.self, inverse: "items") public var tags: [ObjectID] = []
            @Related(inverse: \Note.item, deleteRule: .cascade) public var notes: [ObjectID] = []
        }

        @Entity("Note") public struct Note {
            public var text: String
            @Related(to: Item.self, inverse: "notes") public var item: ObjectID?
        }

        @Entity("Tag") public struct Tag {
            @Field(.unique) public var name: String
            @Related(inverse: \Item.tags) public var items: [ObjectID] = []
        }
    }

    /// The stage: each v1 item kept under its identifier with its digest, and given a note linked to it in the same
    /// call; the tags linked as inferred, by its relationship closure. `throwAt` and `trapAt` as in the `custom` plan.
    static func stage(throwAt: Int64?, trapAt: Int64?) -> MigrationStage {
        .custom(
            from: "v1", to: "c2",
            willMigrate: TortureModels.markerScript("will"),
            entityMappings: [
                .each(V1.Item.self, creating: [C2.Note.self], instances: { item, context in
                    try TortureModels.visit(serial: item.serial, throwAt: throwAt, trapAt: trapAt)
                    let kept = try context.insert(C2.Item(
                        serial: item.serial, title: item.title, score: item.score, when: item.when, note: item.note,
                        blob: item.blob, spot: item.spot, digest: TortureModels.digest(serial: item.serial, title: item.title)),
                        keepingSourceID: true)
                    let note = try context.insert(C2.Note(text: TortureModels.noteText(title: item.title)))
                    try context.link(note, \C2.Note.item, to: kept)
                }, relationships: { item, context in
                    // The inferred links (the item's tags), made by hand so that the relationship pass hands over
                    // typed items, decoded ahead on another thread. A typed item carries its own identifier, so an
                    // item handed over for another is consistent in itself: the asked one's tags are left unlinked,
                    // which the oracle's link check reports (`badLinks`).
                    guard let id = item.objectID, let source = try context.base.sourceObject(id, of: "Item") else {
                        throw TortureError("the relationship pass was handed item \(item.serial) without its source object")
                    }
                    try context.base.linkInferred(for: source)
                }),
            ],
            didMigrate: TortureModels.markerScript("did"))
    }
}
