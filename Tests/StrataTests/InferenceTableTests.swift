import Foundation
import Strata
import StrataTestSupport
import Testing

/// `InferredMapping.infer` as a pure function, table-driven: every supported change gives the expected
/// mapping, every refused change gives its diagnostic naming entity and property and the custom stage
/// that would do it.
@Suite struct InferenceTableTests {
    /// The source model every case changes.
    static func base() -> [Entity] {
        [
            Entity("Post") {
                Attribute("title", .string)
                Attribute("body", .string).optional()
                Attribute("views", .int16)
                Attribute("stars", .int32)
                Attribute("rank", .int64)
                Attribute("score", .float)
                Attribute("tag", .string).indexed()
                Attribute("slug", .string).optional()
                Relationship("author", to: "Person", inverse: "posts")
                Relationship("likes", to: "Person", inverse: "liked", toMany: true)
            },
            Entity("Person") {
                Attribute("name", .string)
                Relationship("posts", to: "Post", inverse: "author", toMany: true)
                Relationship("liked", to: "Post", inverse: "likes", toMany: true)
            },
        ]
    }

    static func v1() throws -> Schema { try Schema("v1", entities: base()) }

    static func changed(_ version: String = "v2", _ change: (inout [Entity]) -> Void) throws -> Schema {
        var entities = base()
        change(&entities)
        return try Schema(version, entities: entities)
    }

    /// Index of an entity by name in a list (the lists above are tiny).
    static func at(_ entities: [Entity], _ name: String) -> Int { entities.firstIndex { $0.name == name }! }

    static func attr(_ entities: inout [Entity], _ entity: String, _ name: String, _ change: (inout Attribute) -> Void) {
        let e = at(entities, entity)
        let a = entities[e].attributes.firstIndex { $0.name == name }!
        change(&entities[e].attributes[a])
    }

    static func rel(_ entities: inout [Entity], _ entity: String, _ name: String, _ change: (inout Relationship) -> Void) {
        let e = at(entities, entity)
        let r = entities[e].relationships.firstIndex { $0.name == name }!
        change(&entities[e].relationships[r])
    }

    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let destination: @Sendable () throws -> Schema
        /// Checks on a successful mapping; nil when diagnostics are expected.
        let check: (@Sendable (InferredMapping) -> Void)?
        let diagnostics: [MigrationDiagnostic]
        var testDescription: String { name }

        init(_ name: String, _ destination: @escaping @Sendable () throws -> Schema, check: @escaping @Sendable (InferredMapping) -> Void) {
            self.name = name; self.destination = destination; self.check = check; self.diagnostics = []
        }
        init(_ name: String, _ destination: @escaping @Sendable () throws -> Schema, refused diagnostics: [MigrationDiagnostic]) {
            self.name = name; self.destination = destination; self.check = nil; self.diagnostics = diagnostics
        }
    }

    static func attributePlan(_ m: InferredMapping, _ entity: String, _ name: String) -> AttributeMappingPlan? {
        m.entity(entity)?.attributes.first { $0.name == name }
    }

    /// A plan's conversion as `"from→to"`.
    static func widening(_ plan: AttributeMappingPlan?) -> String? {
        plan?.conversion.map { "\($0.from.name)→\($0.to.name)" }
    }

    static func relationshipPlan(_ m: InferredMapping, _ entity: String, _ name: String) -> RelationshipMappingPlan? {
        m.entity(entity)?.relationships.first { $0.name == name }
    }

    static let supported: [Case] = [
        Case("optional attribute added", { try changed { $0[0].attributes.append(Attribute("subtitle", .string).optional()) } }) { m in
            #expect(attributePlan(m, "Post", "subtitle")?.origin == .added(.null))
            #expect(!m.requiresRewrite)
        },
        Case("required attribute added with a default", { try changed { $0[0].attributes.append(Attribute("likesCount", .int32).defaultValue(.int32(5))) } }) { m in
            #expect(attributePlan(m, "Post", "likesCount")?.origin == .added(.int32(5)))
            #expect(!m.requiresRewrite)
        },
        Case("attribute removed", { try changed { $0[0].attributes.removeAll { $0.name == "slug" } } }) { m in
            #expect(m.entity("Post")?.droppedAttributes == ["slug"])
            #expect(attributePlan(m, "Post", "slug") == nil)
            #expect(!m.requiresRewrite)
        },
        Case("entity added", { try changed { $0.append(Entity("Comment") { Attribute("text", .string) }) } }) { m in
            let plan = m.entity("Comment")
            #expect(plan?.isAdded == true)
            #expect(plan?.sourceName == nil)
        },
        Case("entity removed", { try changed { entities in
            entities = [Entity("Post", attributes: entities[0].attributes, relationships: [])]
        } }) { m in
            let removed = m.entities.first { $0.sourceName == "Person" }
            #expect(removed?.isRemoved == true)
            #expect(m.entity("Post")?.droppedRelationships.sorted() == ["author", "likes"])
        },
        Case("relationship pair added", { try changed { e in
            e[0].relationships.append(Relationship("editor", to: "Person", inverse: "edited"))
            e[1].relationships.append(Relationship("edited", to: "Post", inverse: "editor", toMany: true))
        } }) { m in
            #expect(relationshipPlan(m, "Post", "editor")?.sourceName == nil)
            #expect(relationshipPlan(m, "Person", "edited")?.sourceName == nil)
        },
        Case("relationship pair removed (both sides)", { try changed { e in
            e[0].relationships.removeAll { $0.name == "likes" }
            e[1].relationships.removeAll { $0.name == "liked" }
        } }) { m in
            #expect(m.entity("Post")?.droppedRelationships == ["likes"])
            #expect(m.entity("Person")?.droppedRelationships == ["liked"])
        },
        Case("attribute renamed", { try changed { attr(&$0, "Post", "title") { $0.name = "headline"; $0.renamingIdentifier = "title" } } }) { m in
            let plan = attributePlan(m, "Post", "headline")
            #expect(plan?.origin == .source("title"))
            #expect(plan?.isRenamed == true)
            #expect(m.entity("Post")?.droppedAttributes == [])
            #expect(!m.requiresRewrite)
        },
        Case("relationship renamed (both sides)", { try changed { e in
            rel(&e, "Post", "likes") { $0.name = "fans"; $0.renamingIdentifier = "likes"; $0.inverse = "favourites" }
            rel(&e, "Person", "liked") { $0.name = "favourites"; $0.renamingIdentifier = "liked"; $0.inverse = "fans" }
        } }) { m in
            #expect(relationshipPlan(m, "Post", "fans")?.sourceName == "likes")
            #expect(relationshipPlan(m, "Person", "favourites")?.sourceName == "liked")
            #expect(m.entity("Post")?.droppedRelationships == [])
        },
        Case("entity renamed", { try changed { e in
            e[0].name = "Article"; e[0].renamingIdentifier = "Post"
            rel(&e, "Person", "posts") { $0.destination = "Article" }
            rel(&e, "Person", "liked") { $0.destination = "Article" }
        } }) { m in
            let plan = m.entity("Article")
            #expect(plan?.sourceName == "Post")
            #expect(plan?.isRenamed == true)
            #expect(m.entities.allSatisfy { !$0.isRemoved })
            #expect(relationshipPlan(m, "Person", "posts")?.sourceName == "posts")
        },
        Case("optional made required with a default", { try changed { attr(&$0, "Post", "body") { $0.isOptional = false; $0.defaultValue = "(empty)" } } }) { m in
            #expect(attributePlan(m, "Post", "body")?.nullReplacement == "(empty)")
            #expect(attributePlan(m, "Post", "body")?.origin == .source("body"))
            #expect(!m.requiresRewrite)
        },
        Case("required made optional", { try changed { attr(&$0, "Post", "title") { $0.isOptional = true } } }) { m in
            #expect(attributePlan(m, "Post", "title")?.nullReplacement == nil)
            #expect(attributePlan(m, "Post", "title")?.origin == .source("title"))
        },
        Case("to-one made to-many", { try changed { rel(&$0, "Post", "author") { $0.isToMany = true } } }) { m in
            #expect(relationshipPlan(m, "Post", "author")?.becameToMany == true)
            #expect(relationshipPlan(m, "Post", "author")?.checksMaximum == nil)
        },
        Case("to-many made to-one", { try changed { rel(&$0, "Post", "likes") { $0.isToMany = false } } }) { m in
            #expect(relationshipPlan(m, "Post", "likes")?.checksMaximum == 1)
        },
        Case("maximum count lowered", { try changed { rel(&$0, "Person", "posts") { $0.maxCount = 3 } } }) { m in
            #expect(relationshipPlan(m, "Person", "posts")?.checksMaximum == 3)
        },
        Case("Int16 → Int32 → Int64 and Float → Double", { try changed { e in
            attr(&e, "Post", "views") { $0.type = .int32 }
            attr(&e, "Post", "stars") { $0.type = .int64 }
            attr(&e, "Post", "score") { $0.type = .double }
        } }) { m in
            #expect(widening(attributePlan(m, "Post", "views")) == "int16→int32")
            #expect(widening(attributePlan(m, "Post", "stars")) == "int32→int64")
            #expect(widening(attributePlan(m, "Post", "score")) == "float→double")
            // Widenings are read through projections: no record is rewritten.
            #expect(!m.requiresRewrite)
            #expect(m.entity("Person")?.requiresRewrite == false)
        },
        Case("Int16 → Int64", { try changed { attr(&$0, "Post", "views") { $0.type = .int64 } } }) { m in
            #expect(widening(attributePlan(m, "Post", "views")) == "int16→int64")
        },
        Case("integers → Double", { try changed { e in
            attr(&e, "Post", "views") { $0.type = .double }
            attr(&e, "Post", "stars") { $0.type = .double }
            attr(&e, "Post", "rank") { $0.type = .double }
        } }) { m in
            #expect(widening(attributePlan(m, "Post", "views")) == "int16→double")
            #expect(widening(attributePlan(m, "Post", "stars")) == "int32→double")
            #expect(widening(attributePlan(m, "Post", "rank")) == "int64→double")
        },
        Case("index added and removed", { try changed { e in
            attr(&e, "Post", "title") { $0.isIndexed = true }
            attr(&e, "Post", "tag") { $0.isIndexed = false }
        } }) { m in
            #expect(m.entity("Post")?.indexesAdded == ["title"])
            #expect(m.entity("Post")?.indexesDropped == ["tag"])
            #expect(!m.requiresRewrite)
        },
        Case("unique constraint added", { try changed { e in
            attr(&e, "Post", "tag") { $0.isUnique = true }
            attr(&e, "Post", "title") { $0 = $0.unique() }
        } }) { m in
            #expect(Set(m.entity("Post")?.uniquenessAdded ?? []) == ["tag", "title"])
            #expect(m.entity("Post")?.indexesAdded == ["title"])
        },
        Case("renamed and widened at once", { try changed { attr(&$0, "Post", "views") { $0.name = "hits"; $0.renamingIdentifier = "views"; $0.type = .int64 } } }) { m in
            let plan = attributePlan(m, "Post", "hits")
            #expect(plan?.origin == .source("views"))
            #expect(widening(plan) == "int16→int64")
        },
        Case("default changed only", { try changed { attr(&$0, "Post", "title") { $0.defaultValue = "untitled" } } }) { m in
            #expect(attributePlan(m, "Post", "title")?.origin == .source("title"))
            #expect(!m.requiresRewrite)
        },
    ]

    static let refused: [Case] = [
        Case("required attribute added without a default", { try changed { $0[0].attributes.append(Attribute("category", .string)) } },
             refused: [.requiredAttributeWithoutDefault(entity: "Post", attribute: "category")]),
        Case("optional made required without a default", { try changed { attr(&$0, "Post", "body") { $0.isOptional = false } } },
             refused: [.attributeMadeRequiredWithoutDefault(entity: "Post", attribute: "body")]),
        Case("type changed", { try changed { attr(&$0, "Post", "title") { $0.type = .int64 } } },
             refused: [.attributeTypeChanged(entity: "Post", attribute: "title", from: "string", to: "int64")]),
        Case("narrowing", { try changed { attr(&$0, "Post", "rank") { $0.type = .int32 } } },
             refused: [.attributeTypeChanged(entity: "Post", attribute: "rank", from: "int64", to: "int32")]),
        Case("relationship destination changed", { try changed { e in
            rel(&e, "Post", "author") { $0.destination = "Post"; $0.inverse = "reverse" }
            e[0].relationships.append(Relationship("reverse", to: "Post", inverse: "author", toMany: true))
            e[1].relationships.removeAll { $0.name == "posts" }
        } }, refused: [.relationshipDestinationChanged(entity: "Post", relationship: "author", from: "Person", to: "Post")]),
        Case("relationship added with a minimum", { try changed { e in
            e[0].relationships.append(Relationship("editor", to: "Person", inverse: "edited", minCount: 1))
            e[1].relationships.append(Relationship("edited", to: "Post", inverse: "editor", toMany: true))
        } }, refused: [.relationshipAddedWithMinimum(entity: "Post", relationship: "editor", minimum: 1)]),
        Case("a new attribute renamed from one that is kept", { try changed { e in
            e[0].attributes.append(Attribute("headline", .string).optional().renamed(from: "title"))
        } }, refused: [.ambiguousRename(entity: "Post", source: "title", claimedBy: ["headline", "title"])]),
    ]

    @Test(arguments: supported)
    func supportedChange(_ c: Case) throws {
        let mapping = try InferredMapping.infer(from: try Self.v1(), to: try c.destination())
        c.check?(mapping)
        #expect(mapping.source.versionIdentifier == "v1")
        // The mapping covers every destination entity.
        for e in try c.destination().entities { #expect(mapping.entity(e.name) != nil, "\(e.name) has no mapping") }
    }

    @Test(arguments: refused)
    func refusedChange(_ c: Case) throws {
        let (source, target) = (try Self.v1(), try c.destination())
        do {
            _ = try InferredMapping.infer(from: source, to: target)
            Issue.record("inferred although \(c.diagnostics) was expected")
        } catch {
            guard error.code == .cannotInfer else {
                Issue.record("unexpected \(error)"); return
            }
            let diagnostics = error.diagnostics
            #expect(error.sourceVersion == "v1" && error.destinationVersion == "v2")
            #expect(error.storeState == nil)
            #expect(diagnostics == c.diagnostics)
            for d in diagnostics {
                let text = d.description
                #expect(!d.isDataDiagnostic)
                #expect(text.contains("Post"), "\(text)")
                #expect(text.contains("custom stage") || text.contains("renaming identifier"), "\(text)")
            }
            #expect(error.description.contains("v1 → v2"))
        }
    }

    @Test func doubleToFloatAndOtherNonWideningsAreRefused() throws {
        let withDouble = try Self.changed("v1") { e in Self.attr(&e, "Post", "score") { $0.type = .double } }
        let withFloat = try Schema("v2", entities: Self.base())
        #expect(throws: MigrationError.self) { try InferredMapping.infer(from: withDouble, to: withFloat) }
        let pairs: [(AttributeType, AttributeType)] = [
            (.int64, .int16), (.int32, .int16), (.double, .int64), (.float, .int32), (.string, .data), (.date, .double),
            (.codable("A"), .codable("B")), (.bool, .int16), (.decimal, .double), (.int64, .decimal), (.uuid, .string),
        ]
        for (from, to) in pairs {
            let source = try Schema("v1") { Entity("E") { Attribute("x", from) } }
            let destination = try Schema("v2") { Entity("E") { Attribute("x", to) } }
            do {
                _ = try InferredMapping.infer(from: source, to: destination)
                Issue.record("\(from) → \(to) was inferred")
            } catch {
                guard error.code == .cannotInfer else { Issue.record("\(error)"); continue }
                let d = error.diagnostics
                if case .codable(let a) = from, case .codable(let b) = to {
                    // Without declared shapes, nothing says how the JSON changed.
                    #expect(d == [.codableShapeChanged(entity: "E", attribute: "x", from: a, to: b, reason: "the old shape is not declared")])
                } else {
                    #expect(d == [.attributeTypeChanged(entity: "E", attribute: "x", from: from.name, to: to.name)])
                }
            }
        }
    }

    @Test func everyRefusedChangeIsReportedAtOnce() throws {
        let destination = try Self.changed { e in
            e[0].attributes.append(Attribute("category", .string))
            Self.attr(&e, "Post", "body") { $0.isOptional = false }
            Self.attr(&e, "Post", "title") { $0.type = .int64 }
            e[1].attributes.append(Attribute("age", .int16))
        }
        let source = try Self.v1()
        do {
            _ = try InferredMapping.infer(from: source, to: destination)
            Issue.record("inferred")
        } catch {
            guard error.code == .cannotInfer else { Issue.record("\(error)"); return }
            let d = error.diagnostics
            #expect(Set(d) == [
                .requiredAttributeWithoutDefault(entity: "Post", attribute: "category"),
                .attributeMadeRequiredWithoutDefault(entity: "Post", attribute: "body"),
                .attributeTypeChanged(entity: "Post", attribute: "title", from: "string", to: "int64"),
                .requiredAttributeWithoutDefault(entity: "Person", attribute: "age"),
            ])
            #expect(d.count == 4)
        }
    }

    @Test func renamesAreFollowedAcrossSeveralVersions() throws {
        let v1 = try Self.v1()
        // v2 renames title → headline and Post → Article; v3 renames headline → caption and drops the old
        // renaming identifiers; v4 changes nothing about names.
        let v2 = try Self.changed("v2") { e in
            Self.attr(&e, "Post", "title") { $0.name = "headline"; $0.renamingIdentifier = "title" }
            e[0].name = "Article"; e[0].renamingIdentifier = "Post"
            Self.rel(&e, "Person", "posts") { $0.destination = "Article" }
            Self.rel(&e, "Person", "liked") { $0.destination = "Article" }
        }
        let v3 = try Self.changed("v3") { e in
            Self.attr(&e, "Post", "title") { $0.name = "caption"; $0.renamingIdentifier = "headline" }
            e[0].name = "Article"
            Self.rel(&e, "Person", "posts") { $0.destination = "Article" }
            Self.rel(&e, "Person", "liked") { $0.destination = "Article" }
        }
        let v4 = try Self.changed("v4") { e in
            Self.attr(&e, "Post", "title") { $0.name = "caption" }
            e[0].name = "Article"
            Self.rel(&e, "Person", "posts") { $0.destination = "Article" }
            Self.rel(&e, "Person", "liked") { $0.destination = "Article" }
        }
        for (destination, intermediates) in [(v3, [v2]), (v4, [v2, v3])] {
            let m = try InferredMapping.infer(from: v1, to: destination, through: intermediates)
            #expect(m.entity("Article")?.sourceName == "Post")
            #expect(Self.attributePlan(m, "Article", "caption")?.origin == .source("title"))
            #expect(m.entity("Article")?.droppedAttributes == [])
            #expect(!m.requiresRewrite)
        }
        // Without the intermediate versions the renames cannot be seen.
        #expect(throws: MigrationError.self) { try InferredMapping.infer(from: v1, to: v4) }
    }

    @Test func inferenceIsPure() throws {
        let destination = try Self.changed { e in
            Self.attr(&e, "Post", "views") { $0.type = .int64 }
            e[0].attributes.append(Attribute("extra", .bool).defaultValue(true))
        }
        let a = try InferredMapping.infer(from: try Self.v1(), to: destination)
        let b = try InferredMapping.infer(from: try Self.v1(), to: destination)
        #expect(a.entities == b.entities)
    }
}
