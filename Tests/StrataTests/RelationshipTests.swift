import Foundation
import Strata
import StrataTestSupport
import Testing

/// Relationship behaviour: both sides stay in step whichever side is changed, to-one links are replaced on
/// both sides, to-many and many-to-many links, self relationships, and minimum and maximum counts.
@Suite struct RelationshipTests {
    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("Person") {
                Attribute("name", .string)
                Relationship("passport", to: "Passport", inverse: "owner")
                Relationship("books", to: "Book", inverse: "author", toMany: true)
                Relationship("friends", to: "Person", inverse: "friends", toMany: true)
                Relationship("clubs", to: "Club", inverse: "members", toMany: true, maxCount: 3)
                Relationship("spouse", to: "Person", inverse: "spouse")
            }
            Entity("Passport") {
                Attribute("number", .string)
                Relationship("owner", to: "Person", inverse: "passport")
            }
            Entity("Book") {
                Attribute("title", .string)
                Relationship("author", to: "Person", inverse: "books")
            }
            Entity("Club") {
                Attribute("name", .string)
                Relationship("members", to: "Person", inverse: "clubs", toMany: true, maxCount: 2)
                Relationship("president", to: "Chair", inverse: "club", minCount: 1)
            }
            Entity("Chair") {
                Attribute("name", .string)
                Relationship("club", to: "Club", inverse: "president")
            }
        }
    }

    /// A store and an oracle; `make` inserts objects and returns them by name.
    final class Fixture {
        let store: Store
        let oracle: Oracle
        init() throws {
            let schema = try RelationshipTests.schema()
            store = try Store.temporary(schema: schema)
            oracle = Oracle(schema: schema)
        }
        deinit { store.close() }

        func insert(_ entity: String, _ name: String) throws -> ObjectID {
            let key = entity == "Passport" ? "number" : (entity == "Book" ? "title" : "name")
            let values: [String: Value] = [key: .string(name)]
            let id = try store.write { try $0.insert(entity, values).id }
            oracle.insert(entity, id: id, values)
            return id
        }

        func link(_ id: ObjectID, _ entity: String, _ relationship: String, _ target: ObjectID) throws {
            try store.write { try $0.link(id, of: entity, relationship, to: target) }
            oracle.link(id, relationship, target)
        }

        func related(_ id: ObjectID, _ entity: String, _ relationship: String) throws -> [ObjectID] {
            try store.read { try $0.related(id, of: entity, relationship) }
        }

        func check(_ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(try oracle.mismatches(in: store) == [], comment, sourceLocation: sourceLocation)
        }
    }

    @Test func toOneIsReplacedOnBothSides() throws {
        let f = try Fixture()
        let alice = try f.insert("Person", "alice"), bob = try f.insert("Person", "bob")
        let p1 = try f.insert("Passport", "P1"), p2 = try f.insert("Passport", "P2")
        try f.link(alice, "Person", "passport", p1)
        #expect(try f.related(p1, "Passport", "owner") == [alice])
        // Bob takes P1: Alice loses it.
        try f.link(bob, "Person", "passport", p1)
        #expect(try f.related(alice, "Person", "passport") == [])
        #expect(try f.related(p1, "Passport", "owner") == [bob])
        // Bob gets P2 instead, set from the passport's side: P1 has no owner any more.
        try f.link(p2, "Passport", "owner", bob)
        #expect(try f.related(bob, "Person", "passport") == [p2])
        #expect(try f.related(p1, "Passport", "owner") == [])
        // Linking the same pair again changes nothing.
        try f.link(bob, "Person", "passport", p2)
        try f.check()
        #expect(try f.store.verify().isClean)
    }

    /// Objects linked in the transaction that inserts them (the store skips the lookup of a previous link for
    /// an object inserted and not linked yet): relinking replaces the link on both sides all the same.
    @Test func toOneLinksOfObjectsInsertedInTheSameTransaction() throws {
        let f = try Fixture()
        let (alice, bob, p1, p2, book) = try f.store.write { ctx -> (ObjectID, ObjectID, ObjectID, ObjectID, ObjectID) in
            let alice = try ctx.insert("Person", ["name": "alice"]).id
            let p1 = try ctx.insert("Passport", ["number": "P1"]).id
            try ctx.link(p1, of: "Passport", "owner", to: alice)
            let bob = try ctx.insert("Person", ["name": "bob"]).id
            // Bob, just inserted, takes P1 (to-one inverse side: Alice must lose it).
            try ctx.link(bob, of: "Person", "passport", to: p1)
            let p2 = try ctx.insert("Passport", ["number": "P2"]).id
            // P2, just inserted, is given to Bob (who gives up P1), then to Alice (Bob is left without one).
            try ctx.link(p2, of: "Passport", "owner", to: bob)
            try ctx.link(p2, of: "Passport", "owner", to: alice)
            let book = try ctx.insert("Book", ["title": "b"]).id
            try ctx.link(book, of: "Book", "author", to: alice)
            try ctx.link(book, of: "Book", "author", to: bob)
            return (alice, bob, p1, p2, book)
        }
        // P1 went to Bob, who then took P2 (P1 lost its owner), which went on to Alice (Bob lost it).
        #expect(try f.related(p1, "Passport", "owner") == [])
        #expect(try f.related(p2, "Passport", "owner") == [alice])
        // An object just inserted and linked as the target of a link, then relinked from its own side.
        let (carol, p3, p4) = try f.store.write { ctx -> (ObjectID, ObjectID, ObjectID) in
            let p3 = try ctx.insert("Passport", ["number": "P3"]).id
            let p4 = try ctx.insert("Passport", ["number": "P4"]).id
            let carol = try ctx.insert("Person", ["name": "carol"]).id
            try ctx.link(p3, of: "Passport", "owner", to: carol)
            try ctx.link(carol, of: "Person", "passport", to: p4)
            return (carol, p3, p4)
        }
        #expect(try f.related(carol, "Person", "passport") == [p4])
        #expect(try f.related(p3, "Passport", "owner") == [])
        #expect(try f.related(alice, "Person", "passport") == [p2])
        #expect(try f.related(bob, "Person", "passport") == [])
        #expect(try f.related(book, "Book", "author") == [bob])
        #expect(try f.related(alice, "Person", "books") == [])
        #expect(try f.related(bob, "Person", "books") == [book])
        #expect(try f.store.verify().isClean)
    }

    @Test func toManyWithToOneInverse() throws {
        let f = try Fixture()
        let alice = try f.insert("Person", "alice"), bob = try f.insert("Person", "bob")
        let books = try (0..<5).map { try f.insert("Book", "book \($0)") }
        for b in books { try f.link(alice, "Person", "books", b) }
        #expect(try f.related(alice, "Person", "books") == books)
        #expect(try f.store.read { ctx in try ctx.relatedCount(try #require(try ctx.object(alice, of: "Person")), "books") } == 5)
        // Moving a book from the book's side takes it from Alice.
        try f.link(books[0], "Book", "author", bob)
        // Moving one from Bob's side too.
        try f.link(bob, "Person", "books", books[1])
        #expect(try f.related(alice, "Person", "books") == Array(books[2...]))
        #expect(try f.related(bob, "Person", "books") == Array(books[0...1]))
        // Linking twice does not duplicate.
        try f.link(bob, "Person", "books", books[1])
        #expect(try f.related(bob, "Person", "books").count == 2)
        // Unlinking from either side.
        try f.store.write { try $0.unlink(books[2], of: "Book", "author", from: alice) }
        f.oracle.unlink(books[2], "author", alice)
        try f.store.write { try $0.unlink(alice, of: "Person", "books", from: books[3]) }
        f.oracle.unlink(alice, "books", books[3])
        // Unlinking objects that are not linked does nothing.
        try f.store.write { try $0.unlink(alice, of: "Person", "books", from: books[0]) }
        try f.check()
    }

    @Test func setRelatedReplacesTheWholeSet() throws {
        let f = try Fixture()
        let alice = try f.insert("Person", "alice"), bob = try f.insert("Person", "bob")
        let books = try (0..<6).map { try f.insert("Book", "book \($0)") }
        for b in books[0..<3] { try f.link(alice, "Person", "books", b) }
        try f.link(bob, "Person", "books", books[5])
        try f.store.write { ctx in
            let a = try #require(try ctx.object(alice, of: "Person"))
            try ctx.setRelated(a, "books", to: [books[1], books[4], books[5]])
        }
        f.oracle.unlink(alice, "books", books[0]); f.oracle.unlink(alice, "books", books[2])
        f.oracle.link(alice, "books", books[4]); f.oracle.link(alice, "books", books[5])
        #expect(try f.related(bob, "Person", "books") == [])
        try f.check()
        try f.store.write { ctx in try ctx.setRelated(try #require(try ctx.object(alice, of: "Person")), "books", to: []) }
        for b in books { f.oracle.unlink(alice, "books", b) }
        try f.check()
    }

    @Test func selfInverseRelationship() throws {
        let f = try Fixture()
        let a = try f.insert("Person", "a"), b = try f.insert("Person", "b"), c = try f.insert("Person", "c")
        try f.link(a, "Person", "friends", b)
        try f.link(c, "Person", "friends", a)
        try f.link(a, "Person", "friends", a)
        #expect(try f.related(a, "Person", "friends") == [a, b, c])
        #expect(try f.related(b, "Person", "friends") == [a])
        #expect(try f.related(c, "Person", "friends") == [a])
        try f.check()
        try f.store.write { try $0.delete(a, of: "Person") }
        f.oracle.delete(a)
        #expect(try f.related(b, "Person", "friends") == [])
        try f.check()
        #expect(try f.store.verify().isClean)
    }

    @Test func toOneSelfInverse() throws {
        let f = try Fixture()
        let a = try f.insert("Person", "a"), b = try f.insert("Person", "b"), c = try f.insert("Person", "c")
        try f.link(a, "Person", "spouse", b)
        #expect(try f.related(b, "Person", "spouse") == [a])
        // c marries b: a is left alone, from both sides.
        try f.link(c, "Person", "spouse", b)
        #expect(try f.related(a, "Person", "spouse") == [])
        #expect(try f.related(b, "Person", "spouse") == [c])
        #expect(try f.related(c, "Person", "spouse") == [b])
        try f.check()
        #expect(try f.store.verify().problems == [])
    }

    @Test func maximumCountsAreCheckedWhenLinking() throws {
        let f = try Fixture()
        let people = try (0..<4).map { try f.insert("Person", "p\($0)") }
        // Clubs need a president (minimum 1): each gets a chair in the transaction that creates it.
        let clubs = try f.store.write { ctx in
            try (0..<4).map { i -> ObjectID in
                let club = try ctx.insert("Club", ["name": .string("c\(i)")])
                let chair = try ctx.insert("Chair", ["name": .string("chair \(i)")])
                try ctx.link(club, "president", to: chair)
                return club.id
            }
        }
        // Club.members allows 2.
        try f.store.write { ctx in
            try ctx.link(clubs[0], of: "Club", "members", to: people[0])
            try ctx.link(clubs[0], of: "Club", "members", to: people[1])
        }
        #expect(throws: StoreError.relationshipCountViolation(entity: "Club", id: clubs[0], relationship: "members", count: 3, minCount: nil, maxCount: 2)) {
            try f.store.write { try $0.link(clubs[0], of: "Club", "members", to: people[2]) }
        }
        // The same limit applies when the link is made from the person's side.
        #expect(throws: StoreError.relationshipCountViolation(entity: "Club", id: clubs[0], relationship: "members", count: 3, minCount: nil, maxCount: 2)) {
            try f.store.write { try $0.link(people[3], of: "Person", "clubs", to: clubs[0]) }
        }
        // Person.clubs allows 3.
        try f.store.write { ctx in for c in clubs[1...3] { try ctx.link(people[3], of: "Person", "clubs", to: c) } }
        #expect(throws: StoreError.relationshipCountViolation(entity: "Person", id: people[3], relationship: "clubs", count: 4, minCount: nil, maxCount: 3)) {
            try f.store.write { try $0.link(people[3], of: "Person", "clubs", to: clubs[0]) }
        }
        // Nothing of the refused writes was kept.
        let members = try f.related(clubs[0], "Club", "members")
        #expect(members == [people[0], people[1]])
        #expect(try f.related(people[3], "Person", "clubs") == Array(clubs[1...3]))
        #expect(try f.store.verify().isClean)
    }

    @Test func minimumCountsAreCheckedAtCommit() throws {
        let f = try Fixture()
        // A club without a president cannot be committed …
        #expect(throws: StoreError.self) { try f.store.write { try $0.insert("Club", ["name": "lonely"]) } }
        do {
            _ = try f.store.write { try $0.insert("Club", ["name": "lonely"]) }
        } catch let error as StoreError where error.code == .relationshipCountViolation {
            #expect(error.entity == "Club" && error.relationship == "president")
            #expect(error.description.contains("has 0 objects in president; the model allows 1 to 1"), "\(error)")
        }
        #expect(try f.store.read { try $0.count("Club") } == 0)
        // … but it can when the link is made in the same transaction.
        let (club, chair) = try f.store.write { ctx in
            let club = try ctx.insert("Club", ["name": "ok"])
            let chair = try ctx.insert("Chair", ["name": "chair"])
            try ctx.link(chair, "club", to: club)
            return (club.id, chair.id)
        }
        // Removing the president, or deleting it, or giving it to another club, is refused at commit.
        #expect(throws: StoreError.self) { try f.store.write { try $0.unlink(club, of: "Club", "president", from: chair) } }
        #expect(throws: StoreError.self) { try f.store.write { try $0.delete(chair, of: "Chair") } }
        #expect(throws: StoreError.self) {
            try f.store.write { ctx in
                let other = try ctx.insert("Club", ["name": "other"])
                try ctx.link(chair, of: "Chair", "club", to: other.id)
            }
        }
        // Replacing the president within one transaction is fine.
        try f.store.write { ctx in
            let next = try ctx.insert("Chair", ["name": "next"])
            try ctx.link(club, of: "Club", "president", to: next.id)
        }
        // Deleting the club itself is fine.
        try f.store.write { try $0.delete(club, of: "Club") }
        #expect(try f.store.read { try $0.count("Club") } == 0)
        #expect(try f.store.verify().isClean)
    }

    @Test func errorsForUnknownNamesAndMissingObjects() throws {
        let f = try Fixture()
        let alice = try f.insert("Person", "alice")
        let book = try f.insert("Book", "b")
        #expect(throws: StoreError.unknownRelationship(entity: "Person", name: "pets")) {
            try f.store.write { try $0.link(alice, of: "Person", "pets", to: book) }
        }
        #expect(throws: StoreError.unknownEntity("Pet")) { try f.store.read { try $0.related(alice, of: "Pet", "x") } }
        let ghost = ObjectID(rawValue: 999_999)
        #expect(throws: StoreError.objectNotFound(entity: "Book", id: ghost)) {
            try f.store.write { try $0.link(alice, of: "Person", "books", to: ghost) }
        }
        #expect(throws: StoreError.objectNotFound(entity: "Person", id: ghost)) {
            try f.store.write { try $0.link(ghost, of: "Person", "books", to: book) }
        }
        // An object of the wrong entity is not a valid target.
        #expect(throws: StoreError.objectNotFound(entity: "Book", id: alice)) {
            try f.store.write { try $0.link(alice, of: "Person", "books", to: alice) }
        }
        try f.check()
    }
}
