import Foundation
import StrataModels
import StrataTestSupport
import StrataTutorials
import Testing

/// Declared mappings written with the versions' model types give exactly what the tutorials' typed closure stages
/// give: the posts split (`extract`) and the books' authors (`deduplicate`), identifier for identifier.
@Suite struct DeclaredMappingModelTests {
    typealias V2 = PostsApp.V2
    typealias V3 = PostsApp.V3

    static let declaredSplit = MigrationStage.custom(from: V2.self, to: V3.self, entityMappings: [
        .extract(V3.Section.self, from: V2.Post.self, linkedBy: \V3.Section.post, values: [
            \V3.Section.body: .attribute(\V2.Post.content),
            \V3.Section.title: .prefix(of: \V2.Post.content, length: 4, appending: "..."),
            \V3.Section.index: .constant(0),
        ]),
    ])

    static let declaredAuthors = MigrationStage.custom(from: BooksApp.V1.self, to: BooksApp.V2.self, entityMappings: [
        .deduplicate(\BooksApp.V1.Book.authorName, into: \BooksApp.V2.Author.name, linkedBy: \BooksApp.V2.Book.authors),
    ])

    /// Migrates a copy of the same v1 store with each stage and returns the dumps.
    func dumps(_ stages: [MigrationStage], versions: [any SchemaVersion.Type], fill: (WriteContext) throws -> Void) throws -> [[String]] {
        let dir = try TemporaryDirectory("declared-models")
        var out: [[String]] = []
        for (i, stage) in stages.enumerated() {
            let url = dir.path("store\(i)")
            let first = try Schema(versions[0])
            let old = try Store.open(at: url, schema: first)
            try old.write(fill)
            old.close()
            var options = MigrationOptions()
            options.batchSize = 7
            let last = try Schema(versions[versions.count - 1])
            let store = try Store.open(at: url, schema: last, plan: try MigrationPlan(versions: versions, stages: [stage]),
                                       configuration: StoreConfiguration(migration: options))
            out.append(try StoreDump.lines(store))
            #expect(try store.verify().problems.isEmpty)
            store.close()
        }
        return out
    }

    @Test func theTypedDeclaredSplitEqualsTheTypedClosureSplit() throws {
        let dumps = try dumps([PostsApp.splitContent, Self.declaredSplit], versions: [PostsApp.V1.self, V2.self, V3.self]) {
            try PostsApp.fill($0, version: "v1", count: 60, seed: 3)
        }
        #expect(dumps[0].count == 120)
        #expect(dumps[0] == dumps[1])
    }

    @Test func theTypedDedupeEqualsTheTypedLookupTable() throws {
        let names = ["Ursula K. Le Guin", "Stanisław Lem", "Лев Толстой", "村上春樹", "Ursula K. Le Guin "]
        let dumps = try dumps([BooksApp.authorsStage, Self.declaredAuthors], versions: [BooksApp.V1.self, BooksApp.V2.self]) { ctx in
            var users: [ObjectID] = []
            for u in 0..<4 { users.append(try ctx.insert(BooksApp.V1.User(name: "user \(u)"))) }
            for b in 0..<40 {
                try ctx.insert(BooksApp.V1.Book(title: "book \(b)", authorName: names[(b * 7) % names.count],
                                                fileURL: URL(string: "file:///b\(b)")!, readers: [users[b % users.count]]))
            }
        }
        #expect(dumps[0].filter { $0.hasPrefix("Author#") }.count == names.count)
        #expect(dumps[0] == dumps[1])
    }
}

/// A typed merge: two model types of the source version moved into one of the destination version, a constant
/// telling them apart, attributes of the same name carried (and widened).
@Suite struct DeclaredMoveModelTests {
    enum Fleet1: SchemaVersion {
        static let versionIdentifier = "f1"
        static let models: [any EntityModel.Type] = [Car.self, Truck.self]
        @Entity struct Car { var plate: String; var seats: Int32 }
        @Entity struct Truck { var plate: String; var load: Double? }
    }

    enum Fleet2: SchemaVersion {
        static let versionIdentifier = "f2"
        static let models: [any EntityModel.Type] = [Vehicle.self]
        @Entity struct Vehicle {
            @Field(.indexed) var plate: String
            var kind: String
            var seats: Int = 2
            var load: Double?
        }
    }

    @Test func carsAndTrucksBecomeVehiclesByKeyPath() throws {
        let dir = try TemporaryDirectory("declared-typed-move")
        let old = try Store.open(at: dir.store, schema: try Schema(Fleet1.self))
        let ids = try old.write { ctx in
            (try ctx.insert(Fleet1.Car(plate: "C1", seats: 5)), try ctx.insert(Fleet1.Truck(plate: "T1", load: 7.5)))
        }
        old.close()
        let plan = try MigrationPlan(versions: [Fleet1.self, Fleet2.self], stages: [
            .custom(from: Fleet1.self, to: Fleet2.self, entityMappings: [
                .move(Fleet1.Car.self, into: Fleet2.Vehicle.self, values: [\Fleet2.Vehicle.kind: .constant("car")]),
                .move(Fleet1.Truck.self, into: Fleet2.Vehicle.self, values: [\Fleet2.Vehicle.kind: .constant("truck")]),
            ]),
        ])
        let store = try Store.open(at: dir.store, schema: try Schema(Fleet2.self), plan: plan)
        defer { store.close() }
        try store.read { ctx in
            let car = try #require(try ctx.fetch(Fleet2.Vehicle.self, id: ids.0))
            let truck = try #require(try ctx.fetch(Fleet2.Vehicle.self, id: ids.1))
            #expect(car.plate == "C1" && car.kind == "car" && car.seats == 5 && car.load == nil)
            #expect(truck.plate == "T1" && truck.kind == "truck" && truck.seats == 2 && truck.load == 7.5)
        }
    }
}
