import Foundation
import Strata
import StrataTestSupport
import Testing

/// The schema's JSON form round-trips exactly: Schema → JSON → Schema is equal (defaults of every type
/// included, edge values too), and JSON → Schema → JSON gives the same bytes.
@Suite struct SchemaJSONTests {
    /// Default values of every type, edge values included, one attribute each.
    static let defaults: [(AttributeType, Value)] = [
        (.int64, .int64(.min)), (.int64, .int64(.max)), (.int64, .int64(0)),
        (.int32, .int32(.min)), (.int32, .int32(.max)),
        (.int16, .int16(.min)), (.int16, .int16(.max)),
        (.double, .double(.nan)), (.double, .double(.infinity)), (.double, .double(-.infinity)), (.double, .double(-0.0)),
        (.double, .double(0.1)), (.double, .double(1e300)), (.double, .double(.leastNonzeroMagnitude)), (.double, .double(3)),
        (.double, .double(9_007_199_254_740_992)), (.double, .double(-1.5)),
        (.float, .float(.nan)), (.float, .float(.infinity)), (.float, .float(-.infinity)), (.float, .float(-0.0)),
        (.float, .float(0.1)), (.float, .float(.greatestFiniteMagnitude)), (.float, .float(.leastNonzeroMagnitude)),
        (.bool, .bool(true)), (.bool, .bool(false)),
        (.string, .string("")), (.string, .string("quote \" backslash \\ slash / é 🙂 \u{0001}")),
        (.date, .date(.distantPast)), (.date, .date(.distantFuture)), (.date, .date(Date(timeIntervalSinceReferenceDate: -0.25))),
        (.date, .date(Date(timeIntervalSinceReferenceDate: 0))), (.date, .date(Date(timeIntervalSinceReferenceDate: 700_000_000.123_456))),
        (.data, .data(Data())), (.data, .data(Data((0..<300).map { UInt8($0 % 256) }))),
        (.uuid, .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
        (.url, .url(URL(string: "https://example.com/a?b=c#d")!)), (.url, .url(URL(fileURLWithPath: "/tmp/x y"))),
        (.decimal, .decimal(Decimal(string: "-12.5")!)), (.decimal, .decimal(.nan)), (.decimal, .decimal(0)),
        (.decimal, .decimal(Decimal(string: "12345678901234567890.123456789")!)),
        (.codable("Doc"), try! Value.encoding(TestDocument(x: 3, tags: ["a", "b/c"]))),
        (.codable("Num"), try! Value.encoding(1.5)),
        (.codable("List"), try! Value.encoding([String]())),
        (.codable("Signed"), try! Value.encoding([-0.0, 2.5, 1e300, -7])),
        (.codable("Nested"), try! Value.encoding(["a": ["b": [Int64.min, Int64.max]]])),
    ]

    static func everything() throws -> Schema {
        var attributes = defaults.enumerated().map { i, d in Attribute("d\(i)", d.0).defaultValue(d.1) }
        attributes += [
            Attribute("opt", .string).optional(),
            Attribute("optDefault", .int32).optional().defaultValue(.int32(7)),
            Attribute("optNull", .int32).optional().defaultValue(.null),
            Attribute("renamed", .string).renamed(from: "old").versionHashModifier("m"),
            Attribute("idx", .date).indexed(),
            Attribute("uniq", .uuid).unique(),
            Attribute("temp", .data).optional().transient(),
        ]
        return try Schema("v7-β") {
            Entity("Everything", attributes: attributes, relationships: [
                Relationship("one", to: "Other", inverse: "back", deleteRule: .deny, minCount: 1, maxCount: 1),
                Relationship("many", to: "Other", inverse: "owners", toMany: true, deleteRule: .cascade, minCount: 0, maxCount: 9)
                    .renamed(from: "lots").versionHashModifier("r"),
            ], renamingIdentifier: "All", versionHashModifier: "e")
            Entity("Other") {
                Relationship("back", to: "Everything", inverse: "one", toMany: true)
                Relationship("owners", to: "Everything", inverse: "many", toMany: true, deleteRule: .nullify)
            }
            Entity("Bare")
        }
    }

    @Test func schemaToJSONToSchemaIsEqual() throws {
        let schema = try Self.everything()
        for pretty in [true, false] {
            let decoded = try Schema(jsonData: schema.jsonData(prettyPrinted: pretty))
            #expect(decoded == schema)
            #expect(decoded.fingerprint == schema.fingerprint)
            #expect(decoded.entityVersionHashes == schema.entityVersionHashes)
            // Compare attribute by attribute for a readable failure.
            let a = try #require(schema.entity(named: "Everything")), b = try #require(decoded.entity(named: "Everything"))
            for (x, y) in zip(a.attributes, b.attributes) where x != y {
                Issue.record("\(x.name): \(x.type.name) default \(String(describing: x.defaultValue)) came back as \(String(describing: y.defaultValue))")
            }
        }
    }

    @Test func jsonToSchemaToJSONIsByteIdentical() throws {
        let schema = try Self.everything()
        for pretty in [true, false] {
            let json = schema.jsonData(prettyPrinted: pretty)
            let again = try Schema(jsonData: json).jsonData(prettyPrinted: pretty)
            #expect(again == json, "\(String(decoding: json, as: UTF8.self))\n≠\n\(String(decoding: again, as: UTF8.self))")
        }
    }

    @Test func jsonIsIndependentOfEncodingOrderAndStable() throws {
        // The same schema always gives the same bytes; keys are sorted.
        let a = try Self.everything().jsonData(prettyPrinted: false)
        let b = try Self.everything().jsonData(prettyPrinted: false)
        #expect(a == b)
        let object = try #require(try JSONSerialization.jsonObject(with: a) as? [String: Any])
        #expect(object["format"] as? String == "strata.schema")
        #expect(object["formatVersion"] as? Int == 1)
        #expect(object["versionIdentifier"] as? String == "v7-β")
        let text = String(decoding: a, as: UTF8.self)
        #expect(text.hasPrefix(#"{"entities":"#))
    }

    @Test func handWrittenDocumentWithOptionalKeysOmitted() throws {
        let text = #"""
        {"format":"strata.schema","formatVersion":1,"versionIdentifier":"v1","entities":[
          {"name":"Post","attributes":[
             {"name":"title","type":"string"},
             {"name":"when","type":"date","defaultValue":"2001-01-01T00:00:10Z"},
             {"name":"score","type":"double","defaultValue":"-inf"},
             {"name":"meta","type":"codable","codableType":"Meta","defaultValue":{"b":[1,2],"a":null}}
          ],"relationships":[{"name":"self_","destination":"Post","inverse":"self_"}]}
        ]}
        """#
        let schema = try Schema(jsonData: Data(text.utf8))
        let post = try #require(schema.entity(named: "Post"))
        #expect(post.attribute(named: "title")?.isOptional == false)
        #expect(post.attribute(named: "when")?.defaultValue == .date(Date(timeIntervalSinceReferenceDate: 10)))
        #expect(post.attribute(named: "score")?.defaultValue == .double(-.infinity))
        #expect(post.attribute(named: "meta")?.defaultValue == .codable(Data(#"{"a":null,"b":[1,2]}"#.utf8)))
        #expect(post.relationship(named: "self_")?.deleteRule == .nullify)
        #expect(post.relationship(named: "self_")?.isToMany == false)
        // And it round-trips from there.
        #expect(try Schema(jsonData: schema.jsonData()) == schema)
    }

    @Test func storesKeepTheJSONOfTheirModel() throws {
        let dir = try TemporaryDirectory("json-store")
        let schema = try Self.everything()
        let store = try Store.open(at: dir.store, schema: schema)
        store.close()
        let recorded = try Store.openRecorded(at: dir.store)
        defer { recorded.close() }
        #expect(recorded.schema == schema)
        #expect(recorded.schema.jsonData() == schema.jsonData())
    }
}
