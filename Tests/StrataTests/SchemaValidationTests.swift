import Foundation
import Strata
import StrataTestSupport
import Testing

/// Every ``SchemaProblem`` is found, named precisely, and all problems of a schema come back together.
@Suite struct SchemaValidationTests {
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let version: String
        let entities: [Entity]
        let expected: [SchemaProblem]
        var testDescription: String { name }
    }

    static let pair: [Entity] = [
        Entity("A", relationships: [Relationship("b", to: "B", inverse: "a")]),
        Entity("B", relationships: [Relationship("a", to: "A", inverse: "b")]),
    ]

    static let cases: [Case] = [
        Case(name: "empty version", version: "", entities: [Entity("A")], expected: [.emptyVersionIdentifier]),
        Case(name: "empty entity name", version: "v1", entities: [Entity("A"), Entity("")],
             expected: [.emptyName(location: "entity #2")]),
        Case(name: "empty attribute name", version: "v1", entities: [Entity("A", attributes: [Attribute("", .bool)])],
             expected: [.emptyName(location: "A.attribute #1")]),
        Case(name: "empty relationship name", version: "v1",
             entities: [Entity("A", relationships: [Relationship("", to: "A", inverse: "")])],
             expected: [.emptyName(location: "A.relationship #1")]),
        Case(name: "invalid names", version: "v1", entities: [
            Entity("1A", attributes: [Attribute("has space", .bool), Attribute("ok_1", .bool), Attribute("dash-ed", .bool),
                                      Attribute("é", .bool), Attribute(String(repeating: "x", count: 129), .bool)]),
        ], expected: [
            .invalidName("1A", location: "entity #1"),
            .invalidName("has space", location: "1A.attribute #1"),
            .invalidName("dash-ed", location: "1A.attribute #3"),
            .invalidName("é", location: "1A.attribute #4"),
            .invalidName(String(repeating: "x", count: 129), location: "1A.attribute #5"),
        ]),
        Case(name: "reserved names", version: "v1", entities: [Entity("__A"), Entity("B", attributes: [Attribute("__x", .int64)])],
             expected: [.reservedName("__A", location: "entity #1"), .reservedName("__x", location: "B.attribute #1")]),
        Case(name: "duplicate entity", version: "v1", entities: [Entity("A"), Entity("A")], expected: [.duplicateEntity("A")]),
        Case(name: "duplicate attribute", version: "v1",
             entities: [Entity("A", attributes: [Attribute("x", .bool), Attribute("x", .string)])],
             expected: [.duplicateProperty(entity: "A", name: "x")]),
        Case(name: "attribute and relationship share a name", version: "v1", entities: [
            Entity("A", attributes: [Attribute("b", .bool)], relationships: [Relationship("b", to: "B", inverse: "a")]),
            Entity("B", relationships: [Relationship("a", to: "A", inverse: "b")]),
        ], expected: [.duplicateProperty(entity: "A", name: "b")]),
        Case(name: "duplicate property renaming identifier", version: "v1", entities: [
            Entity("A", attributes: [Attribute("x", .bool).renamed(from: "old"), Attribute("y", .bool).renamed(from: "old")]),
        ], expected: [.duplicateRenamingIdentifier(entity: "A", identifier: "old")]),
        Case(name: "attribute and relationship share a renaming identifier", version: "v1", entities: [
            Entity("A", attributes: [Attribute("x", .bool).renamed(from: "old")],
                   relationships: [Relationship("b", to: "B", inverse: "a").renamed(from: "old")]),
            Entity("B", relationships: [Relationship("a", to: "A", inverse: "b")]),
        ], expected: [.duplicateRenamingIdentifier(entity: "A", identifier: "old")]),
        Case(name: "duplicate entity renaming identifier", version: "v1",
             entities: [Entity("A").renamed(from: "Old"), Entity("B").renamed(from: "Old")],
             expected: [.duplicateRenamingIdentifier(entity: nil, identifier: "Old")]),
        Case(name: "missing destination", version: "v1",
             entities: [Entity("A", relationships: [Relationship("b", to: "Nowhere", inverse: "a")])],
             expected: [.missingDestination(entity: "A", relationship: "b", destination: "Nowhere")]),
        Case(name: "missing inverse", version: "v1", entities: [
            Entity("A", relationships: [Relationship("b", to: "B", inverse: "nope")]),
            Entity("B", relationships: [Relationship("a", to: "A", inverse: "b")]),
        ], expected: [.missingInverse(entity: "A", relationship: "b", inverse: "nope", destination: "B"),
                      .inverseMismatch(entity: "B", relationship: "a", inverse: "A.b", pointsTo: "B.nope")]),
        Case(name: "inverse pointing elsewhere", version: "v1", entities: [
            Entity("A", relationships: [Relationship("b", to: "B", inverse: "a"), Relationship("b2", to: "B", inverse: "a")]),
            Entity("B", relationships: [Relationship("a", to: "A", inverse: "b")]),
        ], expected: [.inverseMismatch(entity: "A", relationship: "b2", inverse: "B.a", pointsTo: "A.b")]),
        Case(name: "default of the wrong type", version: "v1", entities: [
            Entity("A", attributes: [
                Attribute("s", .string).defaultValue(1),
                Attribute("small", .int16).defaultValue(.int64(70_000)),
                Attribute("f", .float).defaultValue(0.1),
                Attribute("fine", .int16).defaultValue(.int64(-5)),
                Attribute("u", .uuid).defaultValue("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"),
            ]),
        ], expected: [
            .defaultTypeMismatch(entity: "A", attribute: "s", expected: "string", actual: "int64"),
            .defaultTypeMismatch(entity: "A", attribute: "small", expected: "int16", actual: "int64"),
            .defaultTypeMismatch(entity: "A", attribute: "f", expected: "float", actual: "double"),
            .defaultTypeMismatch(entity: "A", attribute: "u", expected: "uuid", actual: "string"),
        ]),
        Case(name: "null default of a required attribute", version: "v1", entities: [
            Entity("A", attributes: [Attribute("r", .string).defaultValue(.null), Attribute("o", .string).optional().defaultValue(.null)]),
        ], expected: [.nullDefaultForRequiredAttribute(entity: "A", attribute: "r")]),
        Case(name: "invalid counts", version: "v1", entities: [
            Entity("A", relationships: [
                Relationship("neg", to: "B", inverse: "a1", toMany: true, minCount: -1),
                Relationship("zeroMax", to: "B", inverse: "a2", toMany: true, maxCount: 0),
                Relationship("inverted", to: "B", inverse: "a3", toMany: true, minCount: 3, maxCount: 2),
                Relationship("toOneMax", to: "B", inverse: "a4", maxCount: 2),
                Relationship("toOneMin", to: "B", inverse: "a5", minCount: 2),
                Relationship("fine", to: "B", inverse: "a6", toMany: true, minCount: 1, maxCount: 1),
            ]),
            Entity("B", relationships: (1...6).map { Relationship("a\($0)", to: "A", inverse: ["neg", "zeroMax", "inverted", "toOneMax", "toOneMin", "fine"][$0 - 1], toMany: true) }),
        ], expected: [
            .invalidCounts(entity: "A", relationship: "neg", minCount: -1, maxCount: nil),
            .invalidCounts(entity: "A", relationship: "zeroMax", minCount: nil, maxCount: 0),
            .invalidCounts(entity: "A", relationship: "inverted", minCount: 3, maxCount: 2),
            .invalidCounts(entity: "A", relationship: "toOneMax", minCount: nil, maxCount: 2),
            .invalidCounts(entity: "A", relationship: "toOneMin", minCount: 2, maxCount: nil),
        ]),
        Case(name: "transient and indexed", version: "v1", entities: [
            Entity("A", attributes: [Attribute("t", .string).optional().transient().indexed(),
                                     Attribute("u", .string).optional().transient().unique()]),
        ], expected: [.transientIndexed(entity: "A", attribute: "t"), .transientIndexed(entity: "A", attribute: "u")]),
        Case(name: "empty codable type name", version: "v1", entities: [Entity("A", attributes: [Attribute("c", .codable(""))])],
             expected: [.emptyCodableTypeName(entity: "A", attribute: "c")]),
        Case(name: "a valid schema", version: "v1", entities: pair + [Entity("C", attributes: [Attribute("x", .int16).defaultValue(3)])],
             expected: []),
    ]

    @Test(arguments: cases)
    func findsTheProblem(_ c: Case) {
        do {
            let schema = try Schema(c.version, entities: c.entities)
            #expect(c.expected.isEmpty, "expected \(c.expected), but the schema was accepted: \(schema)")
        } catch {
            #expect(error.problems == c.expected)
            #expect(!error.description.isEmpty)
            for problem in error.problems { #expect(!problem.description.isEmpty) }
        }
    }

    @Test func allProblemsComeBackTogether() {
        let entities: [Entity] = [
            Entity(""),
            Entity("__R"),
            Entity("9x"),
            Entity("D"), Entity("D"),
            Entity("E", attributes: [
                Attribute("x", .bool), Attribute("x", .string),
                Attribute("s", .string).defaultValue(1),
                Attribute("r", .string).defaultValue(.null),
                Attribute("t", .string).optional().transient().indexed(),
                Attribute("c", .codable("")),
            ], relationships: [
                Relationship("m", to: "Missing", inverse: "e"),
                Relationship("n", to: "F", inverse: "nope"),
                Relationship("k", to: "F", inverse: "e", toMany: true, minCount: 3, maxCount: 1),
            ]),
            Entity("F", relationships: [Relationship("e", to: "E", inverse: "k", toMany: true)]),
            Entity("G").renamed(from: "Old"), Entity("H").renamed(from: "Old"),
        ]
        let expected: Set<SchemaProblem> = [
            .emptyVersionIdentifier,
            .emptyName(location: "entity #1"),
            .reservedName("__R", location: "entity #2"),
            .invalidName("9x", location: "entity #3"),
            .duplicateEntity("D"),
            .duplicateRenamingIdentifier(entity: nil, identifier: "Old"),
            .duplicateProperty(entity: "E", name: "x"),
            .defaultTypeMismatch(entity: "E", attribute: "s", expected: "string", actual: "int64"),
            .nullDefaultForRequiredAttribute(entity: "E", attribute: "r"),
            .transientIndexed(entity: "E", attribute: "t"),
            .emptyCodableTypeName(entity: "E", attribute: "c"),
            .missingDestination(entity: "E", relationship: "m", destination: "Missing"),
            .missingInverse(entity: "E", relationship: "n", inverse: "nope", destination: "F"),
            .invalidCounts(entity: "E", relationship: "k", minCount: 3, maxCount: 1),
        ]
        do {
            _ = try Schema("", entities: entities)
            Issue.record("an invalid schema was accepted")
        } catch {
            #expect(Set(error.problems) == expected)
            #expect(error.problems.count == expected.count)
            #expect(error.description.contains("\(expected.count) problems"))
        }
    }

    @Test func describesProblemsWithNames() {
        do {
            _ = try Schema("v1") {
                Entity("Post") { Attribute("views", .int16).defaultValue("many") }
            }
            Issue.record("accepted")
        } catch {
            #expect(error.description.contains("Post.views"))
            #expect(error.description.contains("1 problem"))
        }
    }

    @Test func malformedJSON() {
        let documents: [(String, String)] = [
            ("not json", "{"),
            ("wrong format", #"{"format":"other","formatVersion":1,"versionIdentifier":"v1","entities":[]}"#),
            ("future version", #"{"format":"strata.schema","formatVersion":2,"versionIdentifier":"v1","entities":[]}"#),
            ("unknown type", #"{"format":"strata.schema","formatVersion":1,"versionIdentifier":"v1","entities":[{"name":"A","attributes":[{"name":"x","type":"int8"}]}]}"#),
            ("codable without type", #"{"format":"strata.schema","formatVersion":1,"versionIdentifier":"v1","entities":[{"name":"A","attributes":[{"name":"x","type":"codable"}]}]}"#),
            ("bad default", #"{"format":"strata.schema","formatVersion":1,"versionIdentifier":"v1","entities":[{"name":"A","attributes":[{"name":"x","type":"int16","defaultValue":70000}]}]}"#),
            ("bad delete rule", #"{"format":"strata.schema","formatVersion":1,"versionIdentifier":"v1","entities":[{"name":"A","relationships":[{"name":"r","destination":"A","inverse":"r","deleteRule":"explode"}]}]}"#),
            ("missing key", #"{"format":"strata.schema","formatVersion":1,"entities":[]}"#),
        ]
        for (what, text) in documents {
            do {
                _ = try Schema(jsonData: Data(text.utf8))
                Issue.record("\(what): accepted")
            } catch {
                guard case .malformedJSON(let reason)? = error.problems.first, error.problems.count == 1 else {
                    Issue.record("\(what): \(error.problems)")
                    continue
                }
                #expect(!reason.isEmpty, "\(what)")
            }
        }
        // A well-formed document of an invalid schema reports the schema's problems.
        let invalid = #"{"format":"strata.schema","formatVersion":1,"versionIdentifier":"v1","entities":[{"name":"A"},{"name":"A"}]}"#
        #expect(throws: SchemaValidationError(problems: [.duplicateEntity("A")])) { try Schema(jsonData: Data(invalid.utf8)) }
    }
}
