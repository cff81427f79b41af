import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The JSON Lines interchange through the library's API: `Store.exportObjects` and `Store.importObjects`.
@Suite struct InterchangeTests {
    /// Every attribute type (``TestSchemas/everyType(version:optional:indexed:)``'s `Sample`), with a to-one and a
    /// to-many relationship to `Group` and a to-many relationship of samples among themselves.
    static func schema() throws -> Schema {
        var sample = try TestSchemas.everyType().entities[0]
        sample.relationships = [
            Relationship("group", to: "Group", inverse: "samples"),
            Relationship("friends", to: "Sample", inverse: "friendOf", toMany: true),
            Relationship("friendOf", to: "Sample", inverse: "friends", toMany: true),
        ]
        let group = Entity("Group", attributes: [Attribute("name", .string)],
                           relationships: [Relationship("samples", to: "Sample", inverse: "group", toMany: true)])
        return try Schema("v1", entities: [sample, group])
    }

    static func name(_ type: AttributeType) -> String { TestSchemas.attributeName(type) }

    /// Samples with the values that test every form: extremes, NaN and infinities, negative zero, empty and
    /// escaped texts, non-ASCII, nulls; linked forwards and backwards.
    static func fill(_ store: Store) throws {
        let url = try #require(URL(string: "https://example.com/a?b=c&d=%C3%A9"))
        let uuid = try #require(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"))
        let decimal = try #require(Decimal(string: "-12.5"))
        let rows: [[AttributeType: Value]] = [
            [.int64: .int64(.min), .int32: .int32(.min), .int16: .int16(.min), .double: .double(0.1), .float: .float(0.1),
             .bool: .bool(true), .string: .string("Hello \"world\"\n\ttabbed \\ héllo ✓ \u{1}\u{7F}"),
             .date: .date(Date(timeIntervalSinceReferenceDate: 726000000.5)), .data: .data(Data([0, 1, 2, 255])),
             .uuid: .uuid(uuid), .url: .url(url), .decimal: .decimal(decimal),
             .codable("TestDocument"): try Value.encoding(TestDocument(x: 1, tags: ["a", "é"]))],
            [.int64: .int64(.max), .int32: .int32(.max), .int16: .int16(.max), .double: .double(.nan), .float: .float(-.infinity),
             .bool: .bool(false), .string: .string(""), .date: .date(Date(timeIntervalSinceReferenceDate: -1e10)),
             .data: .data(Data()), .decimal: .decimal(.nan)],
            [.int64: .int64(0), .double: .double(-0.0), .float: .float(-0.0), .string: .string("exactly8"),
             .date: .date(Date(timeIntervalSinceReferenceDate: 0.1))],
            [.double: .double(.infinity), .string: .string("😀 sixteen bytes!")],
            [:],
        ]
        try store.write { context in
            let groups = try (0..<2).map { try context.insert("Group", ["name": .string("group \($0)")]) }
            var samples: [DynamicObject] = []
            for (i, row) in rows.enumerated() {
                var values: [String: Value] = ["label": .string("sample \(i)")]
                for (type, value) in row { values[name(type)] = value }
                samples.append(try context.insert("Sample", values))
            }
            try context.link(samples[0], "group", to: groups[1])
            try context.link(samples[3], "group", to: groups[1])
            try context.link(samples[4], "group", to: groups[0])
            try context.link(samples[0], "friends", to: samples[4])
            try context.link(samples[4], "friends", to: samples[0])
            try context.link(samples[2], "friends", to: samples[1])
        }
    }

    /// Every object's values and links, by ID.
    static func contents(_ store: Store) throws -> [UInt64: [String]] {
        try store.read { context in
            var out: [UInt64: [String]] = [:]
            for entity in store.schema.entities {
                for object in try context.objects(entity.name).fetch() {
                    var fields = entity.attributes.map { "\($0.name)=\(String(describing: object[$0.name]))" }
                    fields += try entity.relationships.map { "\($0.name)=\(try context.related(object, $0.name).map(\.rawValue))" }
                    out[object.id.rawValue] = [entity.name] + fields
                }
            }
            return out
        }
    }

    @Test func exportThenImportGivesTheSameObjectsAndTheSameExport() throws {
        let schema = try Self.schema()
        let source = try Store.temporary(schema: schema)
        defer { source.close() }
        try Self.fill(source)
        var reports: [InterchangeProgress] = []
        let first = try source.exportObjects()
        let lines = String(decoding: first, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(lines.count == 7)
        #expect(lines[0].hasPrefix(#"{"entity":"Sample","id":3,"attributes":{"label":"sample 0","a_int64":-9223372036854775808,"a_int32":-2147483648,"a_int16":-32768,"a_double":0.1,"#), "\(lines[0])")
        #expect(lines[0].contains(#""a_string":"Hello \"world\"\n\ttabbed \\ héllo ✓ \u0001"#), "\(lines[0])")
        #expect(lines[0].hasSuffix(#""relationships":{"group":2,"friends":[7],"friendOf":[7]}}"#), "\(lines[0])")
        #expect(lines[1].contains(#""a_double":"nan""#) && lines[1].contains(#""a_decimal":"NaN""#) && lines[1].contains(#""a_data":"""#), "\(lines[1])")
        #expect(lines[2].contains(#""a_double":"-0","a_float":"-0""#), "\(lines[2])")
        #expect(lines[5] == #"{"entity":"Group","id":1,"attributes":{"name":"group 0"},"relationships":{"samples":[7]}}"#)

        // Into a new store of the same model, in batches smaller than the input: the same objects, the same export.
        let copy = try Store.temporary(schema: schema)
        defer { copy.close() }
        let summary = try copy.importObjects(from: first, batchSize: 3) { reports.append($0) }
        #expect(summary.objectsByEntity == ["Sample": 5, "Group": 2])
        #expect(summary.linesCommitted == 7)
        // Links are listed on both sides: each side's entry is made (the second finds it made).
        #expect(summary.linksMade == 12)
        #expect(summary.skippedLines == 0 && summary.linksLeftOut == 0 && summary.objectsBelowMinimumCount == 0)
        #expect(try copy.exportObjects() == first)
        #expect(try Self.contents(copy) == Self.contents(source))
        #expect(try copy.verify().problems.isEmpty)
        #expect(reports.filter { $0.phase == .importingObjects }.map(\.completed) == [3, 6, 7])
        #expect(reports.last == InterchangeProgress(phase: .makingLinks, completed: 11, total: 11), "\(reports)")

        // Through files and file handles too.
        let dir = try TemporaryDirectory("interchange")
        let file = dir.path("all.jsonl")
        let exported = try source.exportObjects(to: file)
        #expect(exported.objectsByEntity == ["Sample": 5, "Group": 2] && exported.byteCount == first.count)
        #expect(try Data(contentsOf: file) == first)
        let third = try Store.temporary(schema: schema)
        defer { third.close() }
        try third.importObjects(from: file)
        let handleFile = dir.path("again.jsonl")
        _ = FileManager.default.createFile(atPath: handleFile.path, contents: nil)
        let handle = try FileHandle(forWritingTo: handleFile)
        try third.exportObjects(to: handle)
        try handle.close()
        #expect(try Data(contentsOf: handleFile) == first)
    }

    @Test func exportOfChosenEntitiesInTheirOrder() throws {
        let store = try Store.temporary(schema: try Self.schema())
        defer { store.close() }
        try Self.fill(store)
        let all = String(decoding: try store.exportObjects(), as: UTF8.self).split(separator: "\n")
        let groupsFirst = String(decoding: try store.exportObjects(entities: ["Group", "Sample"]), as: UTF8.self).split(separator: "\n")
        #expect(groupsFirst == all.suffix(2) + all.prefix(5))
        var chunks = 0
        var progress: [InterchangeProgress] = []
        let summary = try store.exportObjects(entities: ["Group"], progress: { progress.append($0) }) { _ in chunks += 1 }
        #expect(summary.objectsByEntity == ["Group": 2] && chunks == 1)
        #expect(progress == [InterchangeProgress(phase: .exporting, entity: "Group", completed: 2, total: 2)])
        #expect(throws: StoreError.unknownEntity("Nope")) { try store.exportObjects(entities: ["Nope"]) }
    }

    // MARK: Import

    static func tags(_ names: [String], firstID: Int = 100) -> [String] {
        names.enumerated().map { #"{"entity":"Tag","id":\#(firstID + $0.offset),"attributes":{"name":"\#($0.element)"}}"# }
    }

    static func data(_ lines: [String]) -> Data { Data((lines.joined(separator: "\n") + "\n").utf8) }

    /// `Fixtures.v1`: posts, tags, authors, comments (a comment needs a post).
    static func blog() throws -> Store {
        try Store.temporary(schema: try Schema(jsonData: Data(Fixtures.v1.utf8)))
    }

    @Test func aBadLineIsATypedErrorWithItsLineAndTheCommittedBatches() throws {
        let store = try Self.blog()
        defer { store.close() }
        // Line 5 has a value of the wrong type: found while reading, before its batch (lines 4–6) is written.
        var lines = Self.tags(["a", "b", "c", "d", "e", "f", "g"])
        lines[4] = #"{"entity":"Tag","id":104,"attributes":{"name":42}}"#
        let error = try #require(throws: ImportError.self) { try store.importObjects(from: Self.data(lines), batchSize: 3) }
        #expect(error.kind == .badLine)
        #expect(error.line == 5)
        #expect(error.reason == "attribute name: expected a string, got 42")
        #expect(error.committed.linesCommitted == 3 && error.committed.objectsByEntity == ["Tag": 3])
        #expect(error.description == "line 5: attribute name: expected a string, got 42. Committed before it: 3 objects (Tag 3) from lines 1–3, with their links to objects that exist; nothing of lines 4–5 was kept.")
        #expect(try store.read { try $0.count("Tag") } == 3)

        // Line 5 breaks a unique constraint: found inside its batch's transaction, which is rolled back.
        let unique = Self.tags(["h", "i", "j", "k", "h", "l"], firstID: 200)
        let constraint = try #require(throws: ImportError.self) { try store.importObjects(from: Self.data(unique), batchSize: 3) }
        #expect(constraint.kind == .badLine && constraint.line == 5, "\(constraint)")
        #expect(constraint.reason.hasPrefix("Attribute Tag.name is unique"), "\(constraint)")
        #expect(constraint.committed.linesCommitted == 3 && constraint.committed.objectCount == 3)
        let names = try store.read { context in try context.objects("Tag").fetch().map { $0["name"] } }
        #expect(names.count == 6 && !names.contains("k"), "the failing batch left line 4 behind: \(names)")

        // Problems of single lines, each with its reason; nothing is imported.
        let cases: [(String, String)] = [
            (#"{"entity":"Tag","#, "not valid JSON"),
            (#"{"entity":"Tag","attributes":{"nmae":"x"}}"#, #"Tag has no attribute named "nmae""#),
            (#"{"entity":"Tagz"}"#, "the store's model has no entity named Tagz"),
            (#"{"entity":"Tag","id":100,"attributes":{"name":"zz"}}"#, "ID 100 is already used by a Tag object"),
            (#"{"entity":"Author","id":100,"attributes":{"name":"zz"}}"#, "ID 100 is already used by a Tag object"),
            (#"{"entity":"Tag","extra":1}"#, #"unknown key "extra""#),
            (#"{"attributes":{"name":"x"}}"#, #"no "entity""#),
            (#"{"entity":"Comment","attributes":{"text":"x"},"relationships":{"post":[1,2]}}"#, "relationship post is to-one but lists 2 objects"),
        ]
        for (line, expected) in cases {
            let problem = try #require(throws: ImportError.self) { try store.importObjects(from: Data(line.utf8)) }
            #expect(problem.kind == .badLine && problem.line == 1 && problem.reason.hasPrefix(expected), "\(line): \(problem)")
            #expect(problem.committed == ImportSummary() && problem.description.hasSuffix("Nothing was imported."), "\(problem)")
        }
        #expect(try store.read { try $0.count("Tag") } == 6)
        #expect(try store.read { try $0.count("Author") } == 0)
    }

    @Test func linksMayPointToLaterLines() throws {
        let store = try Self.blog()
        defer { store.close() }
        let lines = [
            #"{"entity":"Author","id":5,"attributes":{"name":"Ann"},"relationships":{"posts":[7],"mentees":[6]}}"#,
            "",
            #"{"entity":"Author","id":6,"attributes":{"name":"Bob"}}"#,
            #"{"entity":"Post","id":7,"attributes":{"postID":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","title":"t"},"relationships":{"author":5}}"#,
            #"{"entity":"Comment","attributes":{"text":"later"},"relationships":{"post":7}}"#,
        ]
        let summary = try store.importObjects(from: Self.data(lines))
        #expect(summary.objectsByEntity == ["Author": 2, "Post": 1, "Comment": 1] && summary.linesCommitted == 5)
        #expect(summary.linksMade == 4)
        try store.read { context in
            #expect(try context.related(ObjectID(rawValue: 7), of: "Post", "author") == [ObjectID(rawValue: 5)])
            #expect(try context.related(ObjectID(rawValue: 6), of: "Author", "mentor") == [ObjectID(rawValue: 5)])
            // The comment got a new ID, above every imported one.
            let comment = try #require(try context.objects("Comment").first())
            #expect(comment.id.rawValue == 8)
            #expect(try context.related(comment, "post") == [ObjectID(rawValue: 7)])
        }

        // A link to an object that exists nowhere: the objects are committed, not the failing batch of links.
        let bad = [
            #"{"entity":"Tag","id":20,"attributes":{"name":"a"},"relationships":{"posts":[7]}}"#,
            #"{"entity":"Tag","id":21,"attributes":{"name":"b"},"relationships":{"posts":[999]}}"#,
        ]
        let error = try #require(throws: ImportError.self) { try store.importObjects(from: Self.data(bad), batchSize: 1) }
        #expect(error.kind == .badLink && error.line == 2, "\(error)")
        #expect(error.reason == "relationship posts: no Post object has the ID 999")
        #expect(error.committed.objectsByEntity == ["Tag": 2] && error.linksCommittedThroughLine == 1)
        #expect(error.description.hasSuffix("with the links of lines 1–1; no link of the failing batch (lines 2–2) was kept."), "\(error)")
        #expect(try store.read { try $0.related(ObjectID(rawValue: 20), of: "Tag", "posts") } == [ObjectID(rawValue: 7)])
    }

    /// `Fixtures.objects` exported whole, then imported one entity at a time in any order: links to entities not
    /// imported yet are left out and made from their other side later.
    @Test func oneEntityAtATime() throws {
        let source = try Self.blog()
        defer { source.close() }
        try source.importObjects(from: Data(Fixtures.objects.utf8))
        let export = try source.exportObjects()

        let target = try Self.blog()
        defer { target.close() }
        var leftOut = 0
        for entity in ["Comment", "Tag", "Post", "Author"] {
            let summary = try target.importObjects(from: export, entity: entity)
            let count = try source.read { try $0.count(entity) }
            #expect(summary.objectsByEntity == [entity: count], "\(entity): \(summary)")
            #expect(summary.skippedLines == 10 - count, "\(entity): \(summary)")
            leftOut += summary.linksLeftOut
            if entity == "Comment" {
                // Comments need a post: with an entity, a warning in the summary rather than an error.
                #expect(summary.objectsBelowMinimumCount == 2 && summary.linksLeftOut == 2, "\(summary)")
                #expect(summary.belowMinimumCountExamples.map(\.description) == ["Comment #40 post: 0 of at least 1", "Comment #41 post: 0 of at least 1"])
                #expect(summary.linksLeftOutExamples.first?.description == "line 9: Comment #40 post → Post #10", "\(summary)")
            }
        }
        #expect(leftOut > 0)
        #expect(try target.exportObjects() == export)
        #expect(try target.verify().problems.isEmpty)

        // Lines without "entity" are objects of the import's entity; an entity the model lacks is refused.
        let tags = try target.importObjects(from: Data(#"{"attributes":{"name":"new tag"}}"#.utf8), entity: "Tag")
        #expect(tags.objectsByEntity == ["Tag": 1])
        #expect(throws: StoreError.unknownEntity("Nope")) { try target.importObjects(from: export, entity: "Nope") }
    }

    @Test func objectsBelowAMinimumCountWithoutAnEntity() throws {
        let store = try Self.blog()
        defer { store.close() }
        let error = try #require(throws: ImportError.self) {
            try store.importObjects(from: Data(#"{"entity":"Comment","id":3,"attributes":{"text":"orphan"}}"#.utf8))
        }
        #expect(error.kind == .belowMinimumCount)
        #expect(error.reason == "1 object has fewer links than the model requires (Comment #3 post: 0 of at least 1)")
        #expect(error.committed.objectsByEntity == ["Comment": 1] && error.committed.objectsBelowMinimumCount == 1)
        #expect(try store.read { try $0.count("Comment") } == 1, "committed")
    }

    @Test func shouldStopStopsAfterACommittedBatch() throws {
        let store = try Self.blog()
        defer { store.close() }
        let lines = Self.tags((0..<10).map { "tag \($0)" }) + [#"{"entity":"Post","id":50,"attributes":{"postID":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","title":"t"},"relationships":{"tags":[100,109]}}"#]
        var asked = 0
        let error = try #require(throws: ImportError.self) {
            try store.importObjects(from: Self.data(lines.reversed()), batchSize: 4, shouldStop: {
                asked += 1
                return asked == 2
            })
        }
        #expect(error.kind == .stopped)
        #expect(error.committed.linesCommitted == 8 && error.committed.objectsByEntity == ["Post": 1, "Tag": 7])
        // The committed post's link to a committed tag is made; the one to a tag of the rest is left out.
        #expect(error.committed.linksMade == 1 && error.committed.linksLeftOut == 1)
        #expect(error.description == "The import was asked to stop: committed 8 objects (Post 1, Tag 7) from lines 1–8, with their links to objects that exist.")
        // The rest imports after.
        let rest = try store.importObjects(from: Self.data(Array(lines.reversed().dropFirst(8))))
        #expect(rest.objectsByEntity == ["Tag": 3])
    }

    @Test func readOnlyAndClosedStoresAreRefusedBeforeReading() throws {
        let dir = try TemporaryDirectory("interchange-refusals")
        let schema = try Self.schema()
        try Store.open(at: dir.store, schema: schema).close()
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        let readOnly = try Store.open(at: dir.store, schema: schema, configuration: configuration)
        #expect(throws: StoreError.readOnly) { try readOnly.importObjects(from: Data()) }
        readOnly.close()
        #expect(throws: StoreError.closed) { try readOnly.importObjects(from: Data()) }
    }

    @Test func aFileHandleIsReadFromItsOffset() throws {
        let dir = try TemporaryDirectory("interchange-handle")
        let first = #"{"entity":"Tag","id":1,"attributes":{"name":"skipped"}}"# + "\n"
        try Data((first + #"{"entity":"Tag","id":2,"attributes":{"name":"read"}}"#).utf8).write(to: dir.path("tags.jsonl"))
        let handle = try FileHandle(forReadingFrom: dir.path("tags.jsonl"))
        try handle.seek(toOffset: UInt64(first.utf8.count))
        let store = try Self.blog()
        defer { store.close() }
        let summary = try store.importObjects(from: handle)
        try handle.close()
        #expect(summary.objectsByEntity == ["Tag": 1] && summary.linesCommitted == 1)
        #expect(try store.read { try $0.object(ObjectID(rawValue: 2), of: "Tag")?["name"] } == "read")
        #expect(throws: (any Error).self) { try store.importObjects(from: dir.path("missing.jsonl")) }
    }

    @Test func sizesAreWrittenInBinaryUnits() {
        #expect(ByteCount(0).description == "0 bytes")
        #expect(ByteCount(1023).description == "1023 bytes")
        #expect(ByteCount(1024).description == "1.0 KiB")
        #expect(ByteCount(1536).description == "1.5 KiB")
        #expect(ByteCount(154_000_000).description == "146.9 MiB")
        #expect(ByteCount(1 << 30).description == "1.0 GiB")
    }

    // MARK: Reading lines

    @Test func linesEndWithLineBreaksOrTheInputAndMayBeLong() throws {
        let long = String(repeating: "x", count: 3 << 20)
        let text = "a\r\n\nbc\r\r\n\(long)\n12345678\nlast"
        var read: [String] = []
        let reader = try LineReader(.memory(Data(text.utf8)))
        while let line = try reader.nextBytes() { read.append(String(decoding: line, as: UTF8.self)) }
        #expect(read == ["a", "", "bc", long, "12345678", "last"])
        #expect(reader.lineNumber == 6)
        let empty = try LineReader(.memory(Data()))
        #expect(try empty.nextBytes() == nil)
        for n in 0..<20 {
            var bytes = [UInt8](repeating: UInt8(ascii: "y"), count: 20)
            bytes[n] = 0x0A
            bytes[min(19, n + 3)] = 0x0A
            #expect(bytes.withUnsafeBytes { LineReader.firstLineBreak(in: $0, from: 0) } == n)
        }
    }
}
