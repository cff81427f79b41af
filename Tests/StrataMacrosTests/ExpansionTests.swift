import Testing

/// What `@Entity` generates for each supported shape of property.
@Suite struct ExpansionTests {
    @Test("codable and raw values, transient, relationships both ways; computed and static properties are left out")
    func everyKindOfProperty() {
        expectExpansion("""
        @Entity struct Item {
            @Field(.codable("Point3D")) var origin: Point
            @Field(.codable) var tags: [String] = []
            @Field(.rawValue) var kind: Kind = .book
            @Field(.rawValue) var color: Color?
            @Field(.transient) var cache: Int = 0
            var price: Decimal = 12
            var ratio: Float = 0.5
            @Related(inverse: \\Owner.items, deleteRule: .cascade, minCount: 1, maxCount: 3) var owners: [ObjectID] = []
            @Related(to: Shelf.self, inverse: "items") var shelf: ObjectID?
            var title: String { "computed" }
            static var shared = 0
        }
        """, expandedSource: """
        struct Item {
            var origin: Point
            var tags: [String] = []
            var kind: Kind = .book
            var color: Color?
            var cache: Int = 0
            var price: Decimal = 12
            var ratio: Float = 0.5
            var owners: [ObjectID] = []
            var shelf: ObjectID?
            var title: String { "computed" }
            static var shared = 0

            /// The object's identifier, once the value was read from a store or inserted into one.
            var objectID: Strata.ObjectID? = nil

            static var entityName: String {
                "Item"
            }

            static let entity: Strata.Entity = Strata.Entity(
                "Item",
                attributes: [
                    Strata.ModelSupport.shaped(Strata.Attribute("origin", .codable("Point3D")), of: Point.self),
                    Strata.ModelSupport.shaped(Strata.Attribute("tags", .codable("[String]"), defaultValue: Strata.ModelSupport.codableDefault([] as [String])), of: [String].self),
                    Strata.Attribute("kind", Strata.ModelSupport.rawAttributeType(of: Kind.self), defaultValue: Strata.ModelSupport.rawDefault(.book as Kind)),
                    Strata.Attribute("color", Strata.ModelSupport.rawAttributeType(of: Color.self), isOptional: true),
                    Strata.Attribute("cache", Strata.ModelSupport.attributeType(of: Int.self), defaultValue: Strata.ModelSupport.defaultValue(.integer(0), of: Int.self), isTransient: true),
                    Strata.Attribute("price", Strata.ModelSupport.attributeType(of: Decimal.self), defaultValue: Strata.ModelSupport.defaultValue(.integer(12), of: Decimal.self)),
                    Strata.Attribute("ratio", Strata.ModelSupport.attributeType(of: Float.self), defaultValue: Strata.ModelSupport.defaultValue(.floating("0.5"), of: Float.self)),
                ],
                relationships: [
                    Strata.Relationship("owners", to: Owner.entityName, inverse: "items", toMany: true, deleteRule: .cascade, minCount: 1, maxCount: 3),
                    Strata.Relationship("shelf", to: Shelf.entityName, inverse: Strata.ModelSupport.inverse("items", \\Shelf.items)),
                ],
                renamingIdentifier: nil,
                versionHashModifier: nil
            )

            static func propertyName(for keyPath: AnyKeyPath) -> String? {
                if keyPath == \\Self.origin as AnyKeyPath {
                    return "origin"
                }
                if keyPath == \\Self.tags as AnyKeyPath {
                    return "tags"
                }
                if keyPath == \\Self.kind as AnyKeyPath {
                    return "kind"
                }
                if keyPath == \\Self.color as AnyKeyPath {
                    return "color"
                }
                if keyPath == \\Self.cache as AnyKeyPath {
                    return "cache"
                }
                if keyPath == \\Self.price as AnyKeyPath {
                    return "price"
                }
                if keyPath == \\Self.ratio as AnyKeyPath {
                    return "ratio"
                }
                if keyPath == \\Self.owners as AnyKeyPath {
                    return "owners"
                }
                if keyPath == \\Self.shelf as AnyKeyPath {
                    return "shelf"
                }
                return nil
            }

            func write(to record: inout Strata.ModelWriter) throws {
                try record.writeCodable(0, self.origin)
                try record.writeCodable(1, self.tags)
                try record.writeRaw(2, self.kind)
                try record.writeRaw(3, self.color)
                try record.write(5, self.price)
                try record.write(6, self.ratio)
                record.relate(0, self.owners)
                record.relate(1, self.shelf)
            }

            /// A stored `Item` read in place: each property is decoded when it is read (strings are borrowed,
            /// not copied). Valid only inside the closure that receives it (see `Strata.ModelQuery.forEachRecord(_:)`).
            struct Record: Strata.ModelRecordView {
                typealias Model = Item
                private let _access: Strata.ModelRecordAccess
                init(access: Strata.ModelRecordAccess) {
                    self._access = access
                }
                /// The object's identifier.
                var objectID: Strata.ObjectID {
                    _access.objectID
                }
                var origin: Point {
                    get throws {
                        try _access.codable(0)
                    }
                }
                var tags: [String] {
                    get throws {
                        try _access.codable(1)
                    }
                }
                var kind: Kind {
                    get throws {
                        try _access.raw(2)
                    }
                }
                var color: Color? {
                    get throws {
                        try _access.optionalRaw(3)
                    }
                }
                var price: Decimal {
                    get throws {
                        try _access.read(5)
                    }
                }
                var ratio: Float {
                    get throws {
                        try _access.read(6)
                    }
                }
                var owners: [Strata.ObjectID] {
                    get throws {
                        try _access.related(0)
                    }
                }
                var shelf: Strata.ObjectID? {
                    get throws {
                        try _access.relatedOne(1)
                    }
                }
                /// The object as an owned value.
                func model() throws -> Item {
                    try _access.model(Item.self)
                }
            }
        }

        extension Item: Strata.EntityModel {
            init(from record: inout Strata.ModelReader) throws {
                let _origin = try Strata.ModelReader.value(of: { (object: Self) in
                        object.origin
                    }) {
                    try record.codable(0)
                }
                let _tags = try Strata.ModelReader.value(of: { (object: Self) in
                        object.tags
                    }) {
                    try record.codable(1)
                }
                let _kind = try Strata.ModelReader.value(of: { (object: Self) in
                        object.kind
                    }) {
                    try record.raw(2)
                }
                let _color = try Strata.ModelReader.value(of: { (object: Self) in
                        object.color
                    }) {
                    try record.optionalRaw(3)
                }
                let _price = try Strata.ModelReader.value(of: { (object: Self) in
                        object.price
                    }) {
                    try record.read(5)
                }
                let _ratio = try Strata.ModelReader.value(of: { (object: Self) in
                        object.ratio
                    }) {
                    try record.read(6)
                }
                let _owners = try Strata.ModelReader.value(of: { (object: Self) in
                        object.owners
                    }) {
                    try record.related(0)
                }
                let _shelf = try Strata.ModelReader.value(of: { (object: Self) in
                        object.shelf
                    }) {
                    try record.relatedOne(1)
                }
                self.origin = _origin
                self.tags = _tags
                self.kind = _kind
                self.color = _color
                self.price = _price
                self.ratio = _ratio
                self.owners = _owners
                self.shelf = _shelf
                self.objectID = record.objectID
            }
        }
        """)
    }
    @Test("a public struct: public members, a public memberwise initializer, the entity's name and options; a value kept on deletion")
    func publicStructWithEntityOptions() {
        expectExpansion("""
        @Entity("Article", originalName: "Post", hashModifier: "2")
        public struct Story {
            public var objectID: ObjectID?
            @Field(.preserveValueOnDeletion) public let headline: String
            public var body: String = ""
        }
        """, expandedSource: """
        public struct Story {
            public var objectID: ObjectID?
            public let headline: String
            public var body: String = ""

            public init(objectID: ObjectID? = nil, headline: String, body: String = "") {
                self.objectID = objectID
                self.headline = headline
                self.body = body
            }

            public static var entityName: String {
                "Article"
            }

            public static let entity: Strata.Entity = Strata.Entity(
                "Article",
                attributes: [
                    Strata.Attribute("headline", Strata.ModelSupport.attributeType(of: String.self), preservesValueOnDeletion: true),
                    Strata.Attribute("body", Strata.ModelSupport.attributeType(of: String.self), defaultValue: Strata.ModelSupport.defaultValue(.string(""), of: String.self)),
                ],
                relationships: [],
                renamingIdentifier: "Post",
                versionHashModifier: "2"
            )

            public static func propertyName(for keyPath: AnyKeyPath) -> String? {
                if keyPath == \\Self.headline as AnyKeyPath {
                    return "headline"
                }
                if keyPath == \\Self.body as AnyKeyPath {
                    return "body"
                }
                return nil
            }

            public func write(to record: inout Strata.ModelWriter) throws {
                try record.write(0, self.headline)
                try record.write(1, self.body)
            }

            /// A stored `Story` read in place: each property is decoded when it is read (strings are borrowed,
            /// not copied). Valid only inside the closure that receives it (see `Strata.ModelQuery.forEachRecord(_:)`).
            public struct Record: Strata.ModelRecordView {
                public typealias Model = Story
                private let _access: Strata.ModelRecordAccess
                public init(access: Strata.ModelRecordAccess) {
                    self._access = access
                }
                /// The object's identifier.
                public var objectID: Strata.ObjectID {
                    _access.objectID
                }
                public var headline: Strata.BorrowedString {
                    get throws {
                        try _access.string(0)
                    }
                }
                public var body: Strata.BorrowedString {
                    get throws {
                        try _access.string(1)
                    }
                }
                /// The object as an owned value.
                public func model() throws -> Story {
                    try _access.model(Story.self)
                }
            }
        }

        extension Story: Strata.EntityModel {
            public init(from record: inout Strata.ModelReader) throws {
                let _headline = try Strata.ModelReader.value(of: { (object: Self) in
                        object.headline
                    }) {
                    try record.read(0)
                }
                let _body = try Strata.ModelReader.value(of: { (object: Self) in
                        object.body
                    }) {
                    try record.read(1)
                }
                self.headline = _headline
                self.body = _body
                self.objectID = record.objectID
            }
        }
        """)
    }
}
