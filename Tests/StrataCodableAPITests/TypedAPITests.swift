import Foundation
import Strata
import StrataTestSupport
import Testing

/// The typed API: `Persistable` values inserted, fetched, queried and updated, with relationship properties
/// (to-one `ObjectID?`, to-many `[ObjectID]`) read and written, optionals cleared, and nested `Codable`
/// values stored.
@Suite struct TypedAPITests {
    struct Address: Codable, Hashable, Sendable {
        var street: String
        var city: String
        var geo: [Double]
        var tags: Set<String>
    }

    struct Profile: Persistable, Hashable {
        static let entityName = "Profile"
        var id: ObjectID?
        var name: String
        var nickname: String?
        var motto: String?
        var age: Int
        var small: Int16
        var medium: Int32
        var ratio: Float
        var weight: Double
        var active: Bool
        var joined: Date
        var avatar: Data
        var key: UUID
        var homepage: URL
        var balance: Decimal
        var address: Address
        var history: [Address]
        var team: ObjectID?
        var badges: [ObjectID]
    }

    struct Team: Persistable, Hashable {
        static let entityName = "Team"
        var id: ObjectID?
        var title: String
        var members: [ObjectID]
    }

    struct Badge: Persistable, Hashable {
        static let entityName = "Badge"
        var id: ObjectID?
        var label: String
        var holders: [ObjectID]
    }

    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("Profile") {
                Attribute("name", .string).unique()
                Attribute("nickname", .string).optional()
                Attribute("motto", .string).optional().defaultValue("carpe diem")
                Attribute("age", .int64).indexed()
                Attribute("small", .int16)
                Attribute("medium", .int32)
                Attribute("ratio", .float)
                Attribute("weight", .double)
                Attribute("active", .bool)
                Attribute("joined", .date)
                Attribute("avatar", .data)
                Attribute("key", .uuid)
                Attribute("homepage", .url)
                Attribute("balance", .decimal)
                Attribute("address", .codable("Address"))
                Attribute("history", .codable("[Address]"))
                Relationship("team", to: "Team", inverse: "members")
                Relationship("badges", to: "Badge", inverse: "holders", toMany: true)
            }
            Entity("Team") {
                Attribute("title", .string)
                Relationship("members", to: "Profile", inverse: "team", toMany: true)
            }
            Entity("Badge") {
                Attribute("label", .string)
                Relationship("holders", to: "Profile", inverse: "badges", toMany: true)
            }
        }
    }

    static func profile(_ i: Int, team: ObjectID? = nil, badges: [ObjectID] = []) -> Profile {
        Profile(id: nil, name: "person \(i)", nickname: i % 2 == 0 ? "nick \(i)" : nil, motto: i % 3 == 0 ? nil : "motto \(i)",
                age: 20 + i, small: Int16(-i), medium: Int32(i * 1000), ratio: Float(i) / 8, weight: -Double(i) * 1.5,
                active: i % 2 == 1, joined: Date(timeIntervalSinceReferenceDate: Double(i) * 86_400),
                avatar: Data([UInt8(i & 255), 0, 255]), key: UUID(), homepage: URL(string: "https://example.com/\(i)")!,
                balance: Decimal(i) / 100, address: Address(street: "\(i) Main St", city: "Zürich", geo: [47.37, 8.54], tags: ["a", "b\(i)"]),
                history: [Address(street: "old", city: "Bern", geo: [], tags: [])], team: team, badges: badges)
    }

    @Test func insertFetchAndQuery() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        let (teamID, badgeIDs) = try store.write { ctx in
            (try ctx.insert(Team(id: nil, title: "blue", members: [])),
             try (0..<3).map { try ctx.insert(Badge(id: nil, label: "badge \($0)", holders: [])) })
        }
        var originals: [ObjectID: Profile] = [:]
        try store.write { ctx in
            for i in 0..<30 {
                var p = Self.profile(i, team: i % 2 == 0 ? teamID : nil, badges: Array(badgeIDs.prefix(i % 4)))
                let id = try ctx.insert(p)
                p.id = id
                originals[id] = p
            }
        }
        try store.read { ctx throws in
            for (id, original) in originals {
                let fetched = try #require(try ctx.fetch(Profile.self, id: id))
                #expect(fetched == original)
            }
            #expect(try ctx.fetch(Profile.self, id: ObjectID(rawValue: 999_999)) == nil)
            let all = try ctx.objects(Profile.self).fetch()
            #expect(all.count == 30)
            #expect(Set(all) == Set(originals.values))
            // The inverse sides, read through typed values.
            let team = try #require(try ctx.fetch(Team.self, id: teamID))
            #expect(Set(team.members) == Set(originals.values.filter { $0.team == teamID }.compactMap(\.id)))
            let badge = try #require(try ctx.fetch(Badge.self, id: badgeIDs[0]))
            #expect(Set(badge.holders) == Set(originals.values.filter { $0.badges.contains(badgeIDs[0]) }.compactMap(\.id)))
            // Typed queries: filter, sort, limit, count.
            let young = try ctx.objects(Profile.self).filter { $0.age < 25 }.sorted(by: "age", ascending: false).fetch()
            #expect(young.map(\.age) == [24, 23, 22, 21, 20])
            #expect(try ctx.objects(Profile.self).filter { $0.active }.count() == 15)
            #expect(try ctx.objects(Profile.self).limit(4).fetch().count == 4)
            let indexed = try TypedQuery<Profile>(try ctx.objects("Profile").where("age", equals: 42), context: ctx).fetch()
            #expect(indexed.map(\.name) == ["person 22"])
            // Dynamic objects decode too.
            let dynamic = try #require(try ctx.objects("Profile").first())
            #expect(try ctx.decode(Profile.self, from: dynamic).id == dynamic.id)
            #expect(dynamic["address"].decodeAddress() == originals[dynamic.id]?.address)
        }
    }

    @Test func updateWritesAttributesAndRelationships() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        let (red, blue, badges) = try store.write { ctx in
            (try ctx.insert(Team(id: nil, title: "red", members: [])), try ctx.insert(Team(id: nil, title: "blue", members: [])),
             try (0..<3).map { try ctx.insert(Badge(id: nil, label: "b\($0)", holders: [])) })
        }
        let id = try store.write { ctx in try ctx.insert(Self.profile(6, team: red, badges: [badges[0], badges[1]])) }
        var p = try #require(try store.read { try $0.fetch(Profile.self, id: id) })
        #expect(p.nickname == "nick 6" && p.motto == nil && p.team == red)
        // Change everything, including clearing optionals and moving relationships.
        p.nickname = nil
        p.motto = "new motto"
        p.age = 77
        p.address.tags.insert("moved")
        p.team = blue
        p.badges = [badges[2]]
        try store.write { try $0.update(p, id: id) }
        var again = try #require(try store.read { try $0.fetch(Profile.self, id: id) })
        #expect(again == p)
        #expect(try store.read { try $0.fetch(Team.self, id: red)?.members } == [])
        #expect(try store.read { try $0.fetch(Team.self, id: blue)?.members } == [id])
        #expect(try store.read { try $0.fetch(Badge.self, id: badges[0])?.holders } == [])
        // Clearing a to-one relationship and an optional attribute that has a default.
        again.team = nil
        again.motto = nil
        again.badges = []
        try store.write { try $0.update(again, id: id) }
        let cleared = try #require(try store.read { try $0.fetch(Profile.self, id: id) })
        #expect(cleared.team == nil)
        #expect(cleared.motto == nil)
        #expect(cleared.badges == [])
        #expect(try store.read { try $0.fetch(Team.self, id: blue)?.members } == [])
        // The index follows typed updates.
        #expect(try store.read { try $0.objects("Profile").where("age", equals: 77).ids() } == [id])
        #expect(try store.verify().isClean)
        // Updating an object that does not exist.
        #expect(throws: StoreError.objectNotFound(entity: "Profile", id: ObjectID(rawValue: 424_242))) {
            try store.write { try $0.update(cleared, id: ObjectID(rawValue: 424_242)) }
        }
    }

    @Test func mismatchedTypesAreErrors() throws {
        struct Wrong: Persistable {
            static let entityName = "Team"
            var title: Int
        }
        struct Unknown: Persistable {
            static let entityName = "Team"
            var title: String
            var colour: String
        }
        struct Nowhere: Persistable {
            static let entityName = "Nowhere"
            var title: String
        }
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        #expect(throws: StoreError.self) { try store.write { try $0.insert(Wrong(title: 3)) } }
        #expect(throws: StoreError.unknownAttribute(entity: "Team", name: "colour")) {
            try store.write { try $0.insert(Unknown(title: "t", colour: "red")) }
        }
        #expect(throws: StoreError.unknownEntity("Nowhere")) { try store.write { try $0.insert(Nowhere(title: "x")) } }
        let id = try store.write { try $0.insert(Team(id: nil, title: "t", members: [])) }
        #expect(throws: (any Error).self) { try store.read { try $0.fetch(Wrong.self, id: id) } }
        #expect(try store.read { try $0.count("Team") } == 1)
    }
}

extension Value {
    fileprivate func decodeAddress() -> TypedAPITests.Address? { try? decode(TypedAPITests.Address.self) }
}
