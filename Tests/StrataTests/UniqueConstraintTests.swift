import Foundation
import Strata
import StrataTestSupport
import Testing

/// Unique attributes: a second object with the same non-null value is refused with a typed error that
/// names the entity, the attribute, the value and the object that has it; nulls never clash.
@Suite struct UniqueConstraintTests {
    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("User") {
                Attribute("email", .string).unique()
                Attribute("handle", .string).optional().unique()
                Attribute("badge", .int16).optional().unique()
                Attribute("token", .uuid).optional().unique()
                Attribute("bio", .string).optional().unique()
            }
            Entity("Group") { Attribute("email", .string).unique() }
        }
    }

    @Test func duplicateInsertNamesTheValue() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        let first = try store.write { try $0.insert("User", ["email": "a@example.com", "badge": .int16(7)]).id }
        #expect(throws: StoreError.uniqueConstraintViolation(entity: "User", attribute: "email", value: "\"a@example.com\"", existing: first)) {
            try store.write { try $0.insert("User", ["email": "a@example.com"]) }
        }
        do {
            _ = try store.write { try $0.insert("User", ["email": "b@example.com", "badge": 7]) }
            Issue.record("accepted a duplicate badge")
        } catch let error as StoreError {
            guard error.code == .uniqueConstraintViolation else {
                Issue.record("\(error)"); return
            }
            #expect(error.entity == "User" && error.attribute == "badge" && error.existingObjectID == first)
            #expect(error.description.contains("7") && error.description.contains("badge") && error.description.contains("\(first)"))
        }
        // Uniqueness is per entity.
        _ = try store.write { try $0.insert("Group", ["email": "a@example.com"]) }
        #expect(try store.read { try $0.count("User") } == 1)
    }

    @Test func nullsNeverClash() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        try store.write { ctx in
            for i in 0..<20 { try ctx.insert("User", ["email": .string("u\(i)")]) }
        }
        #expect(try store.read { try $0.count("User") } == 20)
        #expect(try store.verify().isClean)
    }

    @Test func updatesAreCheckedAndMayKeepTheirOwnValue() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        let (a, b) = try store.write { ctx in
            (try ctx.insert("User", ["email": "a", "handle": "alpha"]), try ctx.insert("User", ["email": "b", "handle": "beta"]))
        }
        // Saving an object with its own unique value unchanged is fine.
        var same = a
        same["handle"] = "alpha"
        try store.write { try $0.update(same) }
        var clash = b
        clash["handle"] = "alpha"
        #expect(throws: StoreError.uniqueConstraintViolation(entity: "User", attribute: "handle", value: "\"alpha\"", existing: a.id)) {
            try store.write { try $0.update(clash) }
        }
        // The refused update changed nothing, index included.
        #expect(try store.read { try $0.objects("User").where("handle", equals: "beta").ids() } == [b.id])
        // Swapping values inside one transaction through a free value works.
        try store.write { ctx in
            var x = try #require(try ctx.object(a.id, of: "User")), y = try #require(try ctx.object(b.id, of: "User"))
            x["handle"] = "tmp"; try ctx.update(x)
            y["handle"] = "alpha"; try ctx.update(y)
            x["handle"] = "beta"; try ctx.update(x)
        }
        #expect(try store.read { try $0.objects("User").where("handle", equals: "alpha").ids() } == [b.id])
        #expect(try store.read { try $0.objects("User").where("handle", equals: "beta").ids() } == [a.id])
        // A deleted object's value is free again.
        try store.write { try $0.delete(a.id, of: "User") }
        _ = try store.write { try $0.insert("User", ["email": "c", "handle": "beta"]) }
        #expect(try store.verify().isClean)
    }

    @Test func duplicatesWithinOneTransactionAreRefused() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        let token = UUID()
        #expect(throws: StoreError.self) {
            try store.write { ctx in
                try ctx.insert("User", ["email": "x", "token": .uuid(token)])
                try ctx.insert("User", ["email": "y", "token": .uuid(token)])
            }
        }
        #expect(try store.read { try $0.count("User") } == 0)
    }

    @Test func longValuesSharingAPrefixAreDistinct() throws {
        // Index keys of long values are cut and hashed: values that share the first 440 bytes must not clash.
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        let prefix = String(repeating: "p", count: 600)
        let ids = try store.write { ctx in
            try (0..<5).map { i in try ctx.insert("User", ["email": .string("e\(i)"), "bio": .string(prefix + "\(i)")]).id }
        }
        #expect(throws: StoreError.uniqueConstraintViolation(entity: "User", attribute: "bio", value: "\"\(prefix)3\"", existing: ids[3])) {
            try store.write { try $0.insert("User", ["email": "dup", "bio": .string(prefix + "3")]) }
        }
        for i in 0..<5 {
            let found = try store.read { try $0.objects("User").where("bio", equals: .string(prefix + "\(i)")).ids() }
            #expect(found == [ids[i]])
        }
        #expect(try store.read { try $0.objects("User").where("bio", equals: .string(prefix)).ids() } == [])
        #expect(try store.verify().isClean)
    }
}
