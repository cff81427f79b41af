@_spi(Testing) import Strata
import Foundation
import StrataTortureKit
import Testing

/// Areas 7 and 8 of issue 7: version mismatches in both directions and invalid schemas and plans. Typed
/// errors, all problems in one error, and `data.mdb` byte-identical afterwards: nothing is written to a
/// store the app cannot open. These run in the test process (no faults are injected).
extension ReliabilitySuite {
    @Suite struct Versions {
        /// A store made in the test process, closed.
        static func store(_ workspace: Workspace, _ name: String, plan: String = "v1", count: Int = 200) throws -> URL {
            let url = try workspace.copy(try PristineStores.v1(count: count), to: name)
            if plan != "v1" {
                let p = try TortureModels.plan(plan)
                let s = try Store.open(at: url, schema: p.currentSchema, plan: p)
                s.close()
            }
            return url
        }

        static func bytes(_ url: URL) throws -> Data { try Data(contentsOf: url.appendingPathComponent("data.mdb")) }

        /// Opens and expects a typed error matching `matches`, with the data file unchanged.
        static func expectRefused(_ url: URL, _ label: String, _ open: () throws -> Store,
                                  _ matches: (any Error) -> Bool) throws -> Bool {
            let before = try bytes(url)
            var refused = false
            do {
                let s = try open()
                s.close()
                Issue.record("\(label): the store opened")
            } catch {
                refused = matches(error)
                #expect(refused, "\(label): unexpected error \(error)")
            }
            #expect(try bytes(url) == before, "\(label): data.mdb changed")
            return refused
        }

        @Test("version mismatches both ways: typed errors, the file byte-identical")
        func mismatches() throws {
            try #require(Products.available)
            let workspace = try Workspace("versions")
            var refused = 0
            // (a) A store newer than the app: written at v3, opened by apps whose newest model is v2 or v1.
            let newer = try Self.store(workspace, "newer", plan: "chain")
            for (label, open) in [
                ("v3 store, app at v2 with a plan", { try Store.open(at: newer, schema: try TortureModels.v2(), plan: try TortureModels.plan("light")) }),
                ("v3 store, app at v2 without a plan", { try Store.open(at: newer, schema: try TortureModels.v2()) }),
                ("v3 store, app at v1", { try Store.open(at: newer, schema: try TortureModels.v1(), plan: try TortureModels.plan("v1")) }),
            ] as [(String, () throws -> Store)] {
                if try Self.expectRefused(newer, label, open, { ($0 as? StoreError)?.code == .storeNewerThanModel }) { refused += 1 }
            }
            // (b) No route: the plan does not lead to the app's model.
            let old = try Self.store(workspace, "old")
            if try Self.expectRefused(old, "no route to the app's model",
                                      { try Store.open(at: old, schema: try TortureModels.v2(), plan: try TortureModels.plan("chain")) },
                                      { ($0 as? MigrationError)?.code == .noRoute }) { refused += 1 }
            // A step that needs a custom stage, without one: diagnostics, nothing written.
            if try Self.expectRefused(old, "a type change without a stage",
                                      { try Store.open(at: old, schema: try TortureModels.s2(), plan: try MigrationPlan(schemas: [TortureModels.v1(), TortureModels.s2()])) },
                                      { ($0 as? MigrationError)?.code == .cannotInfer }) { refused += 1 }
            // (c) The same version identifier with other hashes (a shipped schema edited afterwards).
            let edited = try Schema("v1", entities: try TortureModels.v1().entities.map { entity in
                var e = entity
                if e.name == "Item" { e.attributes.append(Attribute("extra", .string, isOptional: true)) }
                return e
            })
            for (label, open) in [
                ("edited v1 with a plan", { try Store.open(at: old, schema: edited, plan: try MigrationPlan(schemas: [edited])) }),
                ("edited v1 without a plan", { try Store.open(at: old, schema: edited) }),
            ] as [(String, () throws -> Store)] {
                if try Self.expectRefused(old, label, open, { ($0 as? StoreError)?.code == .schemaMismatch }) { refused += 1 }
            }
            // Without a plan, an older store is never migrated behind the app's back.
            if try Self.expectRefused(old, "v1 store, app at v3 without a plan", { try Store.open(at: old, schema: try TortureModels.v3()) },
                                      { ($0 as? StoreError)?.code == .migrationRequired }) { refused += 1 }
            // (d) A store written by a newer Strata (its format record's version).
            let future = try Self.store(workspace, "future")
            // (Format 2 and 3 are today's stores with a change history and encrypted ones: a version well past
            // every format this Strata writes stands for a newer Strata's.)
            try ReliabilityProbe.overwriteFormatVersion(at: future, with: 99)
            if try Self.expectRefused(future, "store format 99", { try Store.open(at: future, schema: try TortureModels.v1()) },
                                      { ($0 as? StoreError)?.code == .unsupportedFormat }) { refused += 1 }
            // (e) A record in an unknown record format (format byte 2, checksum valid): a typed error for that
            // record only, listed by verify; never a trap.
            let records = try Self.store(workspace, "records")
            let tag = try ReliabilityProbe.entityTag(at: records, entity: "Item")
            let locations = try ReliabilityProbe.recordLocations(at: records, entity: "Item")
            let victims = Array(locations.prefix(3))
            var file = [UInt8](try Self.bytes(records))
            for l in victims {
                var record = Array(file[l.offset..<(l.offset + l.length)])
                record[0] = 2
                record = DecoderEntryPoints.resealed(record, entityTag: tag, id: l.id)
                file.replaceSubrange(l.offset..<(l.offset + l.length), with: record)
            }
            try Data(file).write(to: records.appendingPathComponent("data.mdb"))
            let store = try Store.open(at: records, schema: try TortureModels.v1())
            for l in victims {
                #expect(throws: StoreError.self) { _ = try store.read { try $0.object(ObjectID(rawValue: l.id), of: "Item") } }
                do {
                    _ = try store.read { try $0.object(ObjectID(rawValue: l.id), of: "Item") }
                } catch let error as StoreError where error.code == .corruptedRecord {
                    #expect(error.reason?.contains("unsupported record format 2") == true, "\(error)")
                    refused += 1
                }
            }
            let report = try store.verify()
            #expect(Set(report.problems.filter { $0.kind == .corruptedRecord }.compactMap(\.objectID)) == Set(victims.map(\.id)))
            store.close()
            Figures.add("version mismatches: \(refused) refused with typed errors, files unchanged") { c in c.corruptions += 0 }
        }

        @Test("invalid schemas and plans: every problem in one error, nothing written")
        func invalidSchemasAndPlans() throws {
            try #require(Products.available)
            // One schema with many problems: all reported at once.
            let broken = [
                Entity("Item", attributes: [Attribute("a", .string), Attribute("a", .int64), Attribute("", .bool),
                                            Attribute("__reserved", .int16), Attribute("bad name", .int16),
                                            Attribute("n", .int64, defaultValue: .string("x")),
                                            Attribute("t", .int64, isTransient: true, isIndexed: true),
                                            Attribute("c", .codable(""))],
                       relationships: [Relationship("owner", to: "Nobody", inverse: "items"),
                                       Relationship("tags", to: "Tag", inverse: "missing", toMany: true),
                                       Relationship("tag", to: "Tag", inverse: "other", minCount: 3, maxCount: 1)]),
                Entity("Item"),
                Entity("Tag", relationships: [Relationship("other", to: "Tag", inverse: "other")]),
            ]
            do {
                _ = try Schema("", entities: broken)
                Issue.record("an invalid schema was accepted")
            } catch {
                let kinds = Set(error.problems.map { problem -> String in
                    Mirror(reflecting: problem).children.first?.label ?? String(describing: problem)
                })
                #expect(error.problems.contains(.emptyVersionIdentifier))
                for expected in ["duplicateEntity", "duplicateProperty", "emptyName", "reservedName",
                                 "invalidName", "defaultTypeMismatch", "transientIndexed", "emptyCodableTypeName",
                                 "missingDestination", "missingInverse", "invalidCounts"] {
                    #expect(kinds.contains(expected), "\(expected) not reported: \(error.problems)")
                }
                #expect(error.problems.count >= 12, "\(error.problems.count) problems: \(error)")
            }
            // Malformed model JSON.
            #expect(throws: SchemaValidationError.self) { _ = try Schema(jsonData: Data("{\"version\": 3".utf8)) }

            // One plan with many problems.
            let v1 = try TortureModels.v1(), v2 = try TortureModels.v2(), v3 = try TortureModels.v3()
            let sameAsV1 = try v1.withVersionIdentifier("v1b")
            do {
                _ = try MigrationPlan(schemas: [v1, v2, v2, sameAsV1, v3],
                                      stages: [.lightweight(from: "v0", to: "v2"), .lightweight(from: "v1", to: "v3")],
                                      routes: [.init(from: "v9", to: "v3")], skipping: ["v3"])
                Issue.record("an invalid plan was accepted")
            } catch {
                let text = error.description
                for expected in ["listed twice", "identical version hashes", "names version v0", "names version v9", "cannot be skipped", "a stage covers v1 → v3"] {
                    #expect(text.contains(expected), "\(expected) not reported: \(text)")
                }
            }
            do {
                _ = try MigrationPlan(schemas: [v1, v2, v3], routes: [.init(from: "v1", to: "v2"), .init(from: "v2", to: "v1")])
                Issue.record("a cyclic plan was accepted")
            } catch {
                #expect(error.description.contains("cycle"), "\(error)")
            }

            // Steps that cannot be inferred: every diagnostic at once, and the store not touched.
            let workspace = try Workspace("schemas")
            let store = try Versions.store(workspace, "store")
            let needsStage = try Schema("v9") {
                Entity("Item") {
                    Attribute("serial", .int64).unique()
                    Attribute("title", .int64)          // type change, no stage
                    Attribute("score", .int16)
                    Attribute("when", .date)
                    Attribute("note", .string).optional()
                    Attribute("blob", .data).optional()
                    Attribute("mandatory", .string)     // required, no default, no stage
                    Relationship("tags", to: "Tag", inverse: "items", toMany: true)
                }
                Entity("Tag") {
                    Attribute("name", .string).unique()
                    Relationship("items", to: "Item", inverse: "tags", toMany: true)
                }
                Entity("Marker") { Attribute("kind", .string) }
            }
            let refused = try Versions.expectRefused(store, "steps that cannot be inferred", {
                try Store.open(at: store, schema: needsStage, plan: try MigrationPlan(schemas: [v1, needsStage]))
            }, { error in
                guard let error = error as? MigrationError, error.code == .cannotInfer else { return false }
                let diagnostics = error.diagnostics
                let text = diagnostics.map(\.description).joined(separator: " | ")
                return diagnostics.count >= 2 && text.contains("title") && text.contains("mandatory")
            })
            #expect(refused)
        }
    }
}
