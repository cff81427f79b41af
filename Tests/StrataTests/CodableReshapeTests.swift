import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// A codable attribute whose type changes shape — keys renamed, removed, added with a default, made
/// required — migrates without rewriting a record when both shapes are declared: old values read in the
/// new shape on every path (objects, views, queries, typed values), the sweep writes exactly what was read,
/// and a later step (metadata-only or a rewrite) composes with the earlier reshape.
@Suite struct CodableReshapeTests {
    struct Point2D: Codable { var x: Double; var y: Double; var label: String? }
    struct Point3D: Codable, Equatable { var x: Double; var north: Double; var z: Double }
    struct Point4D: Codable, Equatable { var x: Double; var north: Double; var up: Double; var w: Double? }
    struct Note: Codable, Equatable { var text: String; var pinned: Bool? }

    static func v1() throws -> Schema {
        try Schema("v1") {
            Entity("Place") {
                Attribute("n", .int64)
                Attribute("position", .codable("Point2D")).indexed()
                    .shape([.field("x", .number), .field("y", .number), .field("label", .string).optional()])
                Attribute("note", .codable("NoteV1")).optional().shape(["text": .string])
            }
        }
    }
    static let noteDefault = (try? Value.encoding(Note(text: "none", pinned: false))) ?? .null

    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Place") {
                Attribute("n", .int64)
                Attribute("position", .codable("Point3D")).indexed().shape([
                    .field("x", .number), .field("north", .number).renamed(from: "y"),
                    .field("z", .number).defaultValue(.integer(0)),
                ])
                // Made required: null notes read the attribute's default; every note gains `pinned`.
                Attribute("note", .codable("NoteV2")).defaultValue(noteDefault)
                    .shape([.field("text", .string), .field("pinned", .bool).defaultValue(.bool(false))])
            }
        }
    }
    static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Place") {
                Attribute("n", .int64)
                Attribute("position", .codable("Point4D")).indexed().shape([
                    .field("x", .number), .field("north", .number), .field("up", .number).renamed(from: "z"),
                    .field("w", .number).optional(),
                ])
                Attribute("note", .codable("NoteV2")).defaultValue(noteDefault)
                    .shape([.field("text", .string), .field("pinned", .bool).defaultValue(.bool(false))])
            }
        }
    }

    static func configuration(maximumLayouts: Int? = nil) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        if let maximumLayouts { configuration.migration.maximumLayoutsPerEntity = maximumLayouts }
        return configuration
    }

    static let count = 60

    /// A v1 store of `count` places: place n at (n, 2n), labelled unless n % 3 == 0, with a note when n is odd.
    static func makeV1Store(_ dir: TemporaryDirectory) throws {
        let store = try Store.open(at: dir.store, schema: try v1(), configuration: configuration())
        defer { store.close() }
        try store.write { ctx in
            for n in 0..<count {
                _ = try ctx.insert("Place", [
                    "n": .int64(Int64(n)),
                    "position": try Value.encoding(Point2D(x: Double(n), y: Double(2 * n), label: n % 3 == 0 ? nil : "p\(n)")),
                    "note": n % 2 == 1 ? try Value.encoding(Note(text: "note \(n)", pinned: nil)) : .null,
                ])
            }
        }
    }

    static func expectedNote(_ n: Int) -> Note { n % 2 == 1 ? Note(text: "note \(n)", pinned: false) : Note(text: "none", pinned: false) }

    @Test func aChangeOfShapeIsMetadataOnlyAndReadsInTheNewShapeEverywhere() throws {
        let dir = try TemporaryDirectory("reshape")
        try Self.makeV1Store(dir)
        let plan12 = try MigrationPlan(schemas: [try Self.v1(), try Self.v2()])
        let explanation = try Store.explainMigration(at: dir.store, schema: try Self.v2(), plan: plan12)
        let step = try #require(explanation.steps.first)
        #expect(!step.rewritesRecords, "a declared change of shape rewrites nothing: \(explanation)")
        let position = try #require(step.mapping?.entity("Place")?.attributes.first { $0.name == "position" })
        #expect(position.reshape?.description == "y → north, -label, +z", "\(position)")

        let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: plan12, configuration: Self.configuration())
        defer { store.close() }
        #expect(try store.maintenanceStatus().oldLayoutRecords == Self.count, "no record was rewritten at open")

        // Every path reads the new shape.
        var before: [Int64: [Value]] = [:]
        try store.read { ctx in
            let places = try ctx.objects("Place").fetch()
            #expect(places.count == Self.count)
            for place in places {
                let n = try #require(place["n"].int64Value)
                #expect(try place["position"].decode(Point3D.self) == Point3D(x: Double(n), north: Double(2 * n), z: 0), "place \(n)")
                let json = try JSONValue.parse(try #require({ if case .codable(let d) = place["position"] { d } else { nil } }()))
                #expect(json["label"] == nil && json["y"] == nil, "removed and renamed keys are gone: \(json)")
                #expect(try place["note"].decode(Note.self) == Self.expectedNote(Int(n)), "place \(n)")
                before[n] = [place["position"], place["note"]]
            }
            var viewed = 0
            try ctx.forEachView(of: "Place") { view in
                let n = try #require(try view.int64("n"))
                #expect(try view.value("position") == before[n]?[0], "view of place \(n)")
                #expect(try view.value("note") == before[n]?[1], "view of place \(n)")
                let bytes = try view.withBytes(of: "position") { Data($0) }
                #expect(bytes.map(Value.codable) == before[n]?[0], "bytes of place \(n)")
                viewed += 1
            }
            #expect(viewed == Self.count)
            // The index on position was dropped with the old keys; until rebuilt, the query scans.
            let seven = try #require(before[7]?[0])
            #expect(try ctx.objects("Place").where("position", equals: seven).fetch().map { $0["n"] } == [.int64(7)])
        }

        // The app writes in the new shape; one old place is replaced, one new place added.
        try store.write { ctx in
            let five = try #require(try ctx.objects("Place").where("n", equals: .int64(5)).fetch().first)
            var updated = five
            updated["position"] = try Value.encoding(Point3D(x: 100, north: 200, z: 300))
            try ctx.update(updated)
            _ = try ctx.insert("Place", ["n": .int64(1000), "position": try Value.encoding(Point3D(x: 1, north: 2, z: 3)),
                                         "note": try Value.encoding(Note(text: "new", pinned: true))])
        }
        before[5]?[0] = try Value.encoding(Point3D(x: 100, north: 200, z: 300))

        let swept = try store.performMaintenance(batchSize: 7)
        #expect(swept.rewritten == Self.count - 1, "every old record but the one the app rewrote: \(swept)")
        #expect(try store.maintenanceStatus().isComplete)
        try store.read { ctx in
            let places = try ctx.objects("Place").fetch()
            #expect(places.count == Self.count + 1)
            for place in places {
                let n = try #require(place["n"].int64Value)
                if n == 1000 { continue }
                #expect(place["position"] == before[n]?[0], "the sweep wrote what was read for place \(n)")
                #expect(place["note"] == before[n]?[1], "the sweep wrote what was read for place \(n)")
            }
            let seven = try #require(before[7]?[0])
            #expect(try ctx.objects("Place").where("position", equals: seven).fetch().map { $0["n"] } == [.int64(7)],
                    "the rebuilt index finds the reshaped value")
        }
        #expect(try store.verify().isClean)
    }

    /// Two reshapes in a row, read before any sweep; then the same chain with the second step rewriting
    /// (a layout limit of 1), which transcodes the reshaped fields.
    @Test(arguments: [nil, 1] as [Int?])
    func reshapesCompose(maximumLayouts: Int?) throws {
        let dir = try TemporaryDirectory("reshape-chain")
        try Self.makeV1Store(dir)
        let plan = try MigrationPlan(schemas: [try Self.v1(), try Self.v2(), try Self.v3()])
        do {
            let store = try Store.open(at: dir.store, schema: try Self.v2(), plan: try MigrationPlan(schemas: [try Self.v1(), try Self.v2()]),
                                       configuration: Self.configuration())
            store.close()
        }
        let store = try Store.open(at: dir.store, schema: try Self.v3(), plan: plan, configuration: Self.configuration(maximumLayouts: maximumLayouts))
        defer { store.close() }
        #expect(try store.maintenanceStatus().oldLayoutRecords == (maximumLayouts == nil ? Self.count : 0))
        func check(_ label: String) throws {
            try store.read { ctx in
                let places = try ctx.objects("Place").fetch()
                #expect(places.count == Self.count)
                for place in places {
                    let n = Double(try #require(place["n"].int64Value))
                    #expect(try place["position"].decode(Point4D.self) == Point4D(x: n, north: 2 * n, up: 0, w: nil), "\(label): place \(n)")
                    #expect(try place["note"].decode(Note.self) == Self.expectedNote(Int(n)), "\(label): place \(n)")
                }
            }
        }
        try check("read through two reshapes")
        _ = try store.performMaintenance()
        try check("after the sweep")
        #expect(try store.verify().isClean)
    }

    @Test func shapesThatDoNotTellHowAreDiagnosed() throws {
        func schema(_ version: String, _ type: String, _ shape: CodableShape?) throws -> Schema {
            var attribute = Attribute("position", .codable(type))
            attribute.codableShape = shape
            return try Schema(version) { Entity("Place") { attribute } }
        }
        let v1 = try schema("v1", "Point2D", ["x": .number, "y": .number])
        func diagnostics(_ destination: Schema, from source: Schema? = nil) throws -> [MigrationDiagnostic] {
            do {
                _ = try InferredMapping.infer(from: source ?? v1, to: destination)
                return []
            } catch {
                return error.diagnostics
            }
        }
        let undeclared = try diagnostics(try schema("v2", "Point3D", nil))
        #expect(undeclared.count == 1 && "\(undeclared)".contains("the new shape is not declared"), "\(undeclared)")
        let oldUndeclared = try diagnostics(try schema("v2", "Point3D", ["x": .number]), from: try schema("v1", "Point2D", nil))
        #expect("\(oldUndeclared)".contains("the old shape is not declared"), "\(oldUndeclared)")
        let kind = try diagnostics(try schema("v2", "Point3D", ["x": .number, "y": .string]))
        #expect("\(kind)".contains("the key \"y\" changed from number to string"), "\(kind)")
        let required = try diagnostics(try schema("v2", "Point3D", ["x": .number, "y": .number, "z": .number]))
        #expect("\(required)".contains("the key \"z\" is new, required and has no default"), "\(required)")
        // A type renamed with the same shape reads the old values as they are.
        let renamedType = try InferredMapping.infer(from: v1, to: try schema("v2", "Point", ["x": .number, "y": .number]))
        #expect(renamedType.entity("Place")?.attributes.first?.reshape?.isEmpty == true)
        #expect(!renamedType.requiresRewrite)
    }

    @Test func aShapeIsValidatedKeptInTheSchemaJSONAndLeftOutOfTheHash() throws {
        let v2 = try Self.v2()
        let decoded = try Schema(jsonData: v2.jsonData())
        #expect(decoded.entity(named: "Place")?.attribute(named: "position")?.codableShape
                    == v2.entity(named: "Place")?.attribute(named: "position")?.codableShape)
        #expect(decoded.entity(named: "Place")?.attribute(named: "position")?.codableShape?.field(named: "z")?.defaultValue == .integer(0))
        var bare = try #require(v2.entity(named: "Place"))
        for i in bare.attributes.indices { bare.attributes[i].codableShape = nil }
        #expect(VersionHash.of(bare) == VersionHash.of(try #require(v2.entity(named: "Place"))),
                "a shape can be declared on a version stores already use")

        #expect(throws: SchemaValidationError.self) {
            try Schema("bad") { Entity("A") { Attribute("n", .int64).shape(["x": .number]) } }
        }
        #expect(throws: SchemaValidationError.self) {
            try Schema("bad") {
                Entity("A") { Attribute("p", .codable("P")).shape([.field("x", .number), .field("x", .string)]) }
            }
        }
        #expect(throws: SchemaValidationError.self) {
            try Schema("bad") {
                Entity("A") { Attribute("p", .codable("P")).shape([.field("x", .number).defaultValue(.string("zero"))]) }
            }
        }
    }

    @Test func theCatalogKeepsReshapesExactly() throws {
        let reshape = CodableReshape(changes: [
            .init(renamed: [.init(from: "y", to: "north")], removed: ["label"], filled: [.init(key: "z", value: .integer(0))]),
            .init(renamed: [.init(from: "z", to: "up")], removed: [], filled: [.init(key: "tags", value: .array([.string("a"), .null]))]),
        ])
        var catalog = Catalog.initial(for: try Self.v1())
        catalog.entities[0].layouts[0].sources[1] = .reshaped(1, reshape, default: .codable(Data(#"{"x":1}"#.utf8)))
        let bytes = catalog.encoded()
        #expect(bytes.first == 3, "a catalog with a reshape says it needs format 3")
        let decoded = try bytes.withUnsafeBytes { try Catalog(decoding: $0) }
        #expect(decoded == catalog)
        // Applied in order: renamed, removed, filled only where absent or null; other keys kept.
        let out = try reshape.apply(toJSON: Data(#"{"x":1,"y":2,"label":"l","z":null,"other":true}"#.utf8))
        #expect(try JSONValue.parse(out) == .object(["x": .integer(1), "north": .integer(2), "up": .integer(0),
                                                     "tags": .array([.string("a"), .null]), "other": .bool(true)]))
        #expect(try reshape.apply(toJSON: Data("[1,2]".utf8)) == Data("[1,2]".utf8), "not an object: left as it is")
        #expect(throws: DecodeFailure.self) { try reshape.apply(toJSON: Data("{".utf8)) }
    }

    /// The byte path (values moved as they were written) gives exactly what decoding and re-encoding gives, on
    /// random canonical objects: Unicode and escaped keys, nested values, numbers of every kind, nulls.
    @Test func theBytePathMatchesDecoding() throws {
        var random = SeededGenerator(seed: 13)
        let keys = ["x", "y", "z", "north", "label", "é", "e\u{301}x", "a\"q", "tab\t", "ä", "10", "9", "Z", "_", "ﬀ"]
        func value(_ depth: Int) -> JSONValue {
            switch random.next() % (depth > 2 ? 6 : 8) {
            case 0: return .null
            case 1: return .bool(random.next() % 2 == 0)
            case 2: return .integer(Int64(bitPattern: random.next()) >> Int64(random.next() % 60))
            case 3: return .number(Double(Int64(bitPattern: random.next()) % 100_000) / 7)
            case 4: return .string(["", "a", "\"", "\\", "line\nbreak", "😀", "/"][Int(random.next() % 7)])
            case 5: return .number([0.5, -0.25, 1e20, 1e-7, 3.0][Int(random.next() % 5)])
            case 6: return .array((0..<Int(random.next() % 4)).map { _ in value(depth + 1) })
            default:
                var o: [String: JSONValue] = [:]
                for _ in 0..<Int(random.next() % 4) { o[keys[Int(random.next() % UInt64(keys.count))]] = value(depth + 1) }
                return .object(o)
            }
        }
        var checked = 0
        for _ in 0..<400 {
            var object: [String: JSONValue] = [:]
            for _ in 0..<Int(random.next() % 6) { object[keys[Int(random.next() % UInt64(keys.count))]] = value(0) }
            let input = try JSONValue.object(object).serialized()
            func pick() -> String { keys[Int(random.next() % UInt64(keys.count))] }
            let changes = (0..<Int(1 + random.next() % 3)).map { _ in
                CodableReshape.Change(renamed: random.next() % 2 == 0 ? [.init(from: pick(), to: pick())] : [],
                                      removed: random.next() % 2 == 0 ? [pick()] : [],
                                      filled: random.next() % 2 == 0 ? [.init(key: pick(), value: value(1))] : [])
            }
            let reshape = CodableReshape(changes: changes)
            let fast = try reshape.apply(toJSON: input)
            let decoded = try reshape.applyDecoding(toJSON: input)
            #expect(fast == decoded, "\(String(decoding: input, as: UTF8.self)) with \(reshape): \(String(decoding: fast, as: UTF8.self)) ≠ \(String(decoding: decoded, as: UTF8.self))")
            checked += 1
        }
        #expect(checked == 400)
        // What the byte path leaves to decoding: duplicate keys, and what is not an object.
        let reshape = CodableReshape(changes: [.init(renamed: [.init(from: "a", to: "b")], removed: [], filled: [])])
        let duplicated = Data(#"{"a":1,"a":2}"#.utf8)
        #expect(duplicated.withUnsafeBytes { JSONObjectMembers.parse($0) } == nil)
        let viaBytes = Result { try reshape.apply(toJSON: duplicated) }
        let viaDecoding = Result { try reshape.applyDecoding(toJSON: duplicated) }
        #expect("\(viaBytes)" == "\(viaDecoding)", "duplicate keys take the decoding path: \(viaBytes)")
        #expect(try reshape.apply(toJSON: Data("[1]".utf8)) == Data("[1]".utf8))
    }
}
