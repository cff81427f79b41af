import Foundation
import Strata
import StrataTestKit
import Testing

/// Metadata-only migrations keep old records in their layouts; rewriting them purges dropped attributes.
@Suite struct LayoutRewriteTests {
    static let v1: Schema = try! Schema("v1") {
        Entity("Contact") {
            Attribute("name", .string)
            Attribute("phone", .string)
            Attribute("secret", .string).optional()
        }
    }
    static let v2: Schema = try! Schema("v2") {
        Entity("Contact") {
            Attribute("name", .string)
            Attribute("mobile", .string).renamed(from: "phone")
            Attribute("favourite", .bool).defaultValue(false)
        }
    }

    @Test func rewritingOldLayoutsKeepsValuesAndDropsRemovedBytes() throws {
        let kit = try MigrationTestKit()
        defer { kit.removeAll() }
        let url = try kit.makeStore(version: Self.v1) { context in
            for i in 0..<1_500 {
                try context.insert("Contact", ["name": .string("contact \(i)"), "phone": .string("+41 \(i)"),
                                               "secret": .string("S3CR3T-\(i)-MARKER")])
            }
        }
        let run = try kit.migrate(url, plan: try MigrationPlan(schemas: [Self.v1, Self.v2]))
        let store = run.after
        _ = try store.write { context in
            try context.insert("Contact", ["name": "new", "mobile": "+1", "favourite": true])
        }
        let before = try store.read { try $0.objects("Contact").fetch() }
        #expect(try store.info().entities.first?.layoutCount == 2)

        let rewritten = try store.performMaintenance(batchSize: 400).rewritten
        #expect(rewritten == 1_500, "only the records of the old layout")
        let after = try store.read { try $0.objects("Contact").fetch() }
        #expect(after == before)
        // And both are what was written: contact i as v1 gave it (phone now `mobile`, `favourite` its default),
        // the one inserted at v2 as given. Nothing of `secret` is readable.
        var expected: [String: (mobile: String, favourite: Bool)] = ["new": ("+1", true)]
        for i in 0..<1_500 { expected["contact \(i)"] = ("+41 \(i)", false) }
        #expect(after.count == expected.count)
        for contact in after {
            let want = try #require(expected[contact["name"].stringValue ?? ""], "\(contact)")
            #expect(contact["mobile"] == .string(want.mobile) && contact["favourite"] == .bool(want.favourite), "\(contact)")
        }
        #expect(try store.info().entities.first?.layoutCount == 1)
        #expect(try store.verify().isClean)
        #expect(try store.performMaintenance().rewritten == 0)

        // A compacted copy holds no byte of the removed attribute any more.
        let copy = kit.directory.appendingPathComponent("compacted")
        try store.backup(to: copy, compact: true)
        let data = try Data(contentsOf: copy.appendingPathComponent("data.mdb"))
        #expect(data.range(of: Data("-MARKER".utf8)) == nil)
        let reopened = try Store.open(at: copy, schema: Self.v2)
        defer { reopened.close() }
        #expect(try reopened.read { try $0.objects("Contact").fetch() } == after)
    }
}
