import Foundation
import StrataModels
import StrataTestSupport
import Testing

enum Atlas {
    enum V1: SchemaVersion {
        static let versionIdentifier = "v1"
        static let models: [any EntityModel.Type] = [Place.self]
        struct Point2D: Codable, CodableShapeDescribing {
            var x: Double
            var y: Double
            var label: String?
            static let codableShape: CodableShape = [.field("x", .number), .field("y", .number), .field("label", .string).optional()]
        }
        @Entity struct Place {
            var name: String
            @Field(.codable) var position: Point2D
        }
    }

    /// `Point2D` became `Point3D`: `y` renamed `north`, `label` removed, `z` added with 0 for old values.
    enum V2: SchemaVersion {
        static let versionIdentifier = "v2"
        static let models: [any EntityModel.Type] = [Place.self]
        struct Point3D: Codable, Equatable, CodableShapeDescribing {
            var x: Double
            var north: Double
            var z: Double
            static let codableShape: CodableShape = [
                .field("x", .number), .field("north", .number).renamed(from: "y"), .field("z", .number).defaultValue(.integer(0)),
            ]
        }
        @Entity struct Place {
            var name: String
            @Field(.codable) var position: Point3D
        }
    }
}

/// A `@Field(.codable)` property whose type describes its shape (``CodableShapeDescribing``) migrates to a new
/// shape without a rewrite, and old values decode into the new type.
@Suite struct CodableShapeModelTests {
    @Test func theTypesShapeIsTheAttributesShape() throws {
        let schema = try Schema(Atlas.V2.self)
        #expect(schema.entity(named: "Place")?.attribute(named: "position")?.codableShape == Atlas.V2.Point3D.codableShape)
        #expect(schema.entity(named: "Place")?.attribute(named: "position")?.type == .codable("Point3D"))
        #expect(schema.entity(named: "Place")?.attribute(named: "name")?.codableShape == nil)
    }

    @Test func oldValuesDecodeIntoTheNewShape() throws {
        let dir = try TemporaryDirectory()
        let v1 = try Store.open(at: dir.store, schema: try Schema(Atlas.V1.self))
        let ids = try v1.write { ctx in
            try (0..<50).map { i in
                try ctx.insert(Atlas.V1.Place(name: "place \(i)",
                                              position: .init(x: Double(i), y: Double(-i), label: i % 2 == 0 ? "even" : nil)))
            }
        }
        v1.close()
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        let store = try Store.open(at: dir.store, schema: try Schema(Atlas.V2.self),
                                   plan: try MigrationPlan(versions: [Atlas.V1.self, Atlas.V2.self]), configuration: configuration)
        defer { store.close() }
        #expect(try store.maintenanceStatus().oldLayoutRecords == 50, "nothing was rewritten at open")
        func check() throws {
            try store.read { ctx in
                for (i, id) in ids.enumerated() {
                    let place = try #require(try ctx.fetch(Atlas.V2.Place.self, id: id))
                    #expect(place.name == "place \(i)")
                    #expect(place.position == Atlas.V2.Point3D(x: Double(i), north: Double(-i), z: 0), "place \(i)")
                }
            }
        }
        try check()
        #expect(try store.performMaintenance().rewritten == 50)
        try check()
    }
}
