import Foundation
import Strata
import StrataTestSupport
import Testing

/// Every attribute type stores and reads back exactly, edge values included, in the same transaction,
/// in a later one, and after the store is closed and opened again.
@Suite struct AttributeRoundTripTests {
    struct Nested: Codable, Hashable {
        struct Inner: Codable, Hashable { var values: [Double]; var flag: Bool?; var note: String }
        var name: String
        var inner: Inner
        var map: [String: Int]
        var list: [Inner]
    }

    static let nested = Nested(
        name: "outer \u{1F600}", inner: .init(values: [0.5, -1e300, 1e-300], flag: nil, note: ""),
        map: ["b": 2, "a": 1, "ü": -3], list: [.init(values: [], flag: true, note: "x\"y\\z/\n")])

    /// Edge values per attribute type.
    static func edgeValues() throws -> [AttributeType: [Value]] {
        let distantPast = Date.distantPast, distantFuture = Date.distantFuture
        return [
            .int64: [.int64(.min), .int64(.max), .int64(0), .int64(-1), .int64(1)],
            .int32: [.int32(.min), .int32(.max), .int32(0), .int32(-1)],
            .int16: [.int16(.min), .int16(.max), .int16(0), .int16(-1)],
            .double: [.double(.nan), .double(.infinity), .double(-.infinity), .double(-0.0), .double(0.0),
                      .double(.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude), .double(-.greatestFiniteMagnitude),
                      .double(.ulpOfOne), .double(0.1), .double(Double(bitPattern: 0x7FF8_0000_DEAD_BEEF))],
            .float: [.float(.nan), .float(.infinity), .float(-.infinity), .float(-0.0), .float(.leastNonzeroMagnitude),
                     .float(.greatestFiniteMagnitude), .float(0.1)],
            .bool: [.bool(true), .bool(false)],
            .string: [.string(""), .string(" "), .string("plain"), .string("\u{0}nul inside\u{0}"),
                      .string("é vs e\u{301}"), .string("日本語テキスト"), .string("🏳️‍🌈👩‍👩‍👧‍👦"),
                      .string(String(repeating: "long ", count: 20_000)), .string("\u{FEFF}bom"), .string("\r\n\t")],
            .date: [.date(distantPast), .date(distantFuture), .date(Date(timeIntervalSinceReferenceDate: 0)),
                    .date(Date(timeIntervalSinceReferenceDate: -0.000_001)), .date(Date(timeIntervalSince1970: 0)),
                    .date(Date(timeIntervalSinceReferenceDate: 1e15)), .date(Date(timeIntervalSinceReferenceDate: 123.456_789_012_345))],
            .data: [.data(Data()), .data(Data([0])), .data(Data((0..<256).map { UInt8($0) })),
                    .data(Data(repeating: 0xAB, count: 3 << 20 | 17))],
            .uuid: [.uuid(UUID(uuidString: "00000000-0000-0000-0000-000000000000")!),
                    .uuid(UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!),
                    .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)],
            .url: [.url(URL(string: "https://example.com/a/b?c=d&e=%20f#frag")!), .url(URL(fileURLWithPath: "/tmp/with space/ü.txt")),
                   .url(URL(string: "mailto:someone@example.com")!), .url(URL(string: "urn:isbn:0451450523")!),
                   .url(URL(string: "https://例え.jp/パス")!), .url(URL(string: "relative/path")!)],
            .decimal: [.decimal(Decimal(0)), .decimal(Decimal.nan), .decimal(Decimal(string: "-12.5")!),
                       .decimal(Decimal(string: "3.14159265358979323846264338327950288")!),
                       .decimal(Decimal(string: "12345678901234567890123456789012345678")!),
                       .decimal(Decimal(string: "0.000000000000000000000000000001")!),
                       .decimal(Decimal.greatestFiniteMagnitude), .decimal(Decimal.leastNonzeroMagnitude),
                       .decimal(-Decimal.greatestFiniteMagnitude)],
            .codable("TestDocument"): [try Value.encoding(Self.nested), try Value.encoding([Int]()), try Value.encoding("just a string"),
                                        try Value.encoding(TestDocument(x: .max, tags: ["", "é"]))],
        ]
    }

    @Test(arguments: TestSchemas.allTypes)
    func roundTrip(_ type: AttributeType) throws {
        let dir = try TemporaryDirectory("roundtrip-\(type.name)")
        let schema = try TestSchemas.everyType()
        let name = TestSchemas.attributeName(type)
        let values = try #require(try Self.edgeValues()[type])
        var ids: [ObjectID] = []
        do {
            let store = try Store.open(at: dir.store, schema: schema)
            defer { store.close() }
            ids = try store.write { ctx in
                try values.enumerated().map { i, v in
                    let object = try ctx.insert("Sample", ["label": .string("\(i)"), name: v])
                    // Read back inside the writing transaction.
                    let again = try #require(try ctx.object(object.id, of: "Sample"))
                    #expect(again[name] == v, "within the write: \(v)")
                    #expect(object[name] == v)
                    return object.id
                }
            }
            try store.read { ctx in
                for (id, v) in zip(ids, values) {
                    let got = try ctx.object(id, of: "Sample")?[name]
                    #expect(got == v, "after commit: \(v)")
                }
            }
        }
        let store = try Store.open(at: dir.store, schema: schema)
        defer { store.close() }
        try store.read { ctx in
            for (id, v) in zip(ids, values) {
                let object = try #require(try ctx.object(id, of: "Sample"))
                #expect(object[name] == v, "after reopening: \(v)")
                // Every other attribute stayed null.
                for other in TestSchemas.allTypes where other != type {
                    #expect(object[TestSchemas.attributeName(other)] == .null)
                }
            }
        }
        #expect(try store.verify().isClean)
    }

    @Test func nestedCodableDecodesToTheSameValue() throws {
        let store = try Store.temporary(schema: try TestSchemas.everyType())
        defer { store.close() }
        let id = try store.write { ctx in
            try ctx.insert("Sample", ["label": "n", "a_codable": try Value.encoding(Self.nested)]).id
        }
        let decoded = try store.read { ctx in try #require(try ctx.object(id, of: "Sample"))["a_codable"].decode(Nested.self) }
        #expect(decoded == Self.nested)
    }

    @Test func valuesAreCheckedAgainstTheirType() throws {
        let store = try Store.temporary(schema: try TestSchemas.everyType(optional: false))
        defer { store.close() }
        var full: [String: Value] = ["label": "x"]
        var rng = SeededGenerator(seed: 1)
        for type in TestSchemas.allTypes { full[TestSchemas.attributeName(type)] = rng.value(of: type) }
        // Literal integers convert exactly to narrower widths; out-of-range ones are refused.
        var narrowed = full
        narrowed["a_int16"] = .int64(-7)
        let id = try store.write { try $0.insert("Sample", narrowed).id }
        // Read back from the store (not from the object `insert` returned): every value as given, the
        // literal in the attribute's width.
        let stored = try #require(try store.read { try $0.object(id, of: "Sample") })
        #expect(stored["a_int16"] == .int16(-7))
        for (name, value) in full where name != "a_int16" { #expect(stored[name] == value, "\(name)") }
        var tooBig = full
        tooBig["a_int16"] = .int64(Int64(Int16.max) + 1)
        #expect(throws: StoreError.invalidValue(entity: "Sample", attribute: "a_int16", expected: "int16", actual: "int64")) {
            try store.write { try $0.insert("Sample", tooBig) }
        }
        var wrong = full
        wrong["a_uuid"] = "not a uuid"
        #expect(throws: StoreError.invalidValue(entity: "Sample", attribute: "a_uuid", expected: "uuid", actual: "string")) {
            try store.write { try $0.insert("Sample", wrong) }
        }
        var missing = full
        missing["a_date"] = nil
        #expect(throws: StoreError.missingRequiredValue(entity: "Sample", attribute: "a_date")) {
            try store.write { try $0.insert("Sample", missing) }
        }
        #expect(throws: StoreError.unknownAttribute(entity: "Sample", name: "nope")) {
            try store.write { try $0.insert("Sample", full.merging(["nope": 1]) { a, _ in a }) }
        }
        #expect(try store.read { try $0.count("Sample") } == 1)
    }
}
