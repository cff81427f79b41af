import Foundation
import Strata
import StrataTestSupport
import Testing

/// `strata fixture record`: a compacted fixture store from schema JSON and JSON Lines, which the test kit's
/// fixture check then opens with a later model.
@Suite struct FixtureCommandTests {
    @Test func recordsAFixtureThatALaterModelOpens() throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try dir.write("objects.jsonl", Fixtures.objects)
        let r = try dir.strata("fixture", "record", "v1.json", "objects.jsonl", "--into", "fixtures")
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.hasPrefix("Recorded ") && r.stdout.contains("v1"), "\(r)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: dir.path("fixtures/v1/data.mdb"))[.size] as? Int)
        #expect(size < 256 << 10, "a fixture of 11 objects is small: \(size) bytes")

        let plan = try MigrationPlan(schemas: [try Schema(jsonData: Data(Fixtures.v1.utf8)), try Schema(jsonData: Data(Fixtures.v2.utf8))])
        let report = try MigrationTestKit.checkFixtures(in: dir.url.appendingPathComponent("fixtures"), plan: plan,
                                                        allowingMissing: ["v2"]) { fixture in
            try fixture.store.read { context throws in
                #expect(try context.count("Post") == 4)
                #expect(try context.count("Comment") == 2)
                let post = try #require(try context.object(ObjectID(rawValue: 10), of: "Post"))
                #expect(post["headline"] == .string("Hello \"world\"\n\ttabbed"), "\(fixture.way)")
                #expect(post["views"] == .int64(-32768), "\(fixture.way)")
                #expect(post["flag"] == false, "\(fixture.way)")
                #expect(try context.related(post, "tags").map(\.rawValue).sorted() == [20, 21], "\(fixture.way)")
            }
        }
        #expect(report.versions == ["v1"])
        #expect(report.checks == FixtureCheck.Way.allCases.count)
    }

    @Test func aBadObjectsFileFailsWithItsLineAndRecordsNothing() throws {
        let dir = try TempDir()
        try dir.write("v1.json", Fixtures.v1)
        try dir.write("objects.jsonl", "{\"entity\":\"Tag\",\"attributes\":{\"name\":\"a\"}}\n{\"entity\":\"Nope\"}\n")
        let r = try dir.strata("fixture", "record", "v1.json", "objects.jsonl", "--into", "fixtures")
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.contains("line 2"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: dir.path("fixtures/v1")))
    }
}
