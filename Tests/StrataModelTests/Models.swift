import Foundation
import StrataModels

/// Model types of the tests: every attribute type, optionals, defaults, codable and raw values, and a
/// relationship pair.
enum Library: SchemaVersion {
    static let versionIdentifier = "v1"
    static let models: [any EntityModel.Type] = [Item.self, Owner.self, Tag.self]

    enum Kind: String, Codable, ModelQueryable { case book, disc, tool }

    struct Dimensions: Codable, Hashable {
        var width: Double
        var height: Double
    }

    @Entity struct Item {
        @Field(.unique) var code: String
        var count: Int = 0
        var wide: Int64
        var medium: Int32
        var small: Int16
        var ratio: Double = 1.5
        var weight: Float
        var isActive: Bool = true
        @Field(.indexed) var added: Date
        var blob: Data
        var uid: UUID
        var link: URL
        var price: Decimal
        var note: String?
        var rank: Int?
        @Field(.codable("Dimensions")) var size: Dimensions
        @Field(.rawValue) var kind: Kind = .book
        @Field(.transient) var scratch: String = "scratch"
        @Related(inverse: \Owner.items) var owner: ObjectID?
        @Related(inverse: \Tag.items) var tags: [ObjectID] = []
    }

    @Entity struct Owner {
        var name: String
        @Related(to: Item.self, inverse: "owner", deleteRule: .cascade) var items: [ObjectID] = []
    }

    @Entity struct Tag {
        @Field(.indexed) var label: String
        @Related(to: Item.self, inverse: "tags") var items: [ObjectID] = []
    }
}
