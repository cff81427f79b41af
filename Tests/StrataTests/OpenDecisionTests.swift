import Foundation
@testable import Strata
import Testing

/// ``OpenDecision`` is a pure function of what the store records and what the app brings: every branch of
/// opening is checked here without a store, and the errors name the store's real version and the app's.
@Suite struct OpenDecisionTests {
    static func v1() throws -> Schema {
        try Schema("v1") { Entity("Note") { Attribute("text", .string) } }
    }
    /// v1 plus an index: the same layout.
    static func v1Indexed() throws -> Schema {
        try Schema("v1i") { Entity("Note") { Attribute("text", .string).indexed() } }
    }
    /// An attribute added with a default: additive, metadata only.
    static func v2() throws -> Schema {
        try Schema("v2") {
            Entity("Note") {
                Attribute("text", .string)
                Attribute("pinned", .bool).defaultValue(false)
            }
        }
    }
    /// `text` removed: not additive.
    static func v3() throws -> Schema {
        try Schema("v3") {
            Entity("Note") {
                Attribute("pinned", .bool).defaultValue(false)
                Attribute("title", .string).optional()
            }
        }
    }

    static func facts(at schema: Schema, history: [String]? = nil, migrating: Bool = false,
                      journal: MigrationJournal? = nil) -> StoreFacts {
        StoreFacts(identity: IdentityRecord(schema: schema), history: history ?? [schema.versionIdentifier],
                   migrating: migrating, journal: journal, catalog: Catalog.initial(for: schema),
                   recordedSchema: { schema })
    }

    static func request(_ schema: Schema, plan: MigrationPlan? = nil, purpose: OpenRequest.Purpose = .open,
                        readOnly: Bool = false, migratesAtOpen: Bool = true, opensNewer: Bool = true,
                        holdsLock: Bool = false) -> OpenRequest {
        OpenRequest(schema: schema, plan: plan, purpose: purpose, readOnly: readOnly, migratesAtOpen: migratesAtOpen,
                    opensNewerAdditiveStores: opensNewer, holdsMigrationLock: holdsLock)
    }

    static func journal(from source: Schema, to destination: Schema, hasStage: Bool = false, switched: Bool = false) -> MigrationJournal {
        var journal = MigrationJournal(sourceVersion: source.versionIdentifier, destinationVersion: destination.versionIdentifier,
                                       sourceFingerprint: source.fingerprint.hex, destinationFingerprint: destination.fingerprint.hex,
                                       destinationModel: Data(), destinationCatalog: Data(), hasStage: hasStage,
                                       stagingDatabases: [], retiredDatabases: [],
                                       tasks: switched ? [.didMigrate] : [.switchOver, .didMigrate], ownerPID: 1, startedAt: 0)
        journal.taskIndex = 0
        return journal
    }

    /// The decision's case name and, for a refusal, its error.
    static func describe(_ decision: OpenDecision) -> String {
        switch decision {
        case .current: "current"
        case .readDuringMigration: "readDuringMigration"
        case .waitForMigration: "waitForMigration"
        case .clearMigratingFlag: "clearMigratingFlag"
        case .resume(_, let destination): "resume to \(destination.versionIdentifier)"
        case .rollBack: "rollBack"
        case .migrate(let targets): "migrate " + targets.map(\.versionIdentifier).joined(separator: ",")
        case .openAsOlder(let downgrade): "openAsOlder \(downgrade.schema.versionIdentifier)"
        case .refuse(let error): "refuse \((error as? StoreError)?.code.description ?? (error as? MigrationError)?.code.description ?? "\(error)"): \(error)"
        }
    }

    @Test("a store at the app's model is current; the same layout takes a metadata step, even without a plan")
    func currentAndSameLayout() throws {
        #expect(Self.describe(.decide(Self.facts(at: try Self.v1()), Self.request(try Self.v1()))) == "current")
        let indexed = OpenDecision.decide(Self.facts(at: try Self.v1()), Self.request(try Self.v1Indexed()))
        #expect(Self.describe(indexed) == "migrate v1i")
    }

    @Test("a plan routes along its versions; without migratesAtOpen or a plan, migrationRequired names both versions")
    func routesAndRefusals() throws {
        let plan = try MigrationPlan(schemas: [Self.v1(), Self.v2(), Self.v3()])
        #expect(Self.describe(.decide(Self.facts(at: try Self.v1()), Self.request(try Self.v3(), plan: plan))) == "migrate v2,v3")
        let off = OpenDecision.decide(Self.facts(at: try Self.v1()), Self.request(try Self.v3(), plan: plan, migratesAtOpen: false))
        #expect(Self.describe(off).hasPrefix("refuse migrationRequired"))
        #expect(Self.describe(off).contains("v1") && Self.describe(off).contains("v3"))
        // An explicit migration runs whatever migratesAtOpen says.
        #expect(Self.describe(.decide(Self.facts(at: try Self.v1()), Self.request(try Self.v3(), plan: plan, purpose: .migrate, migratesAtOpen: false)))
                == "migrate v2,v3")
        let noPlan = OpenDecision.decide(Self.facts(at: try Self.v1()), Self.request(try Self.v2()))
        #expect(Self.describe(noPlan).hasPrefix("refuse migrationRequired"))
        let readOnly = OpenDecision.decide(Self.facts(at: try Self.v1()), Self.request(try Self.v3(), plan: plan, readOnly: true))
        #expect(Self.describe(readOnly).hasPrefix("refuse migrationRequired"))
    }

    @Test("a newer store opens as the older model when every change since is additive, else refuses saying why")
    func newerStores() throws {
        let plan = try MigrationPlan(schemas: [Self.v1(), Self.v2()])
        let newer = Self.facts(at: try Self.v2(), history: ["v1", "v2"])
        #expect(Self.describe(.decide(newer, Self.request(try Self.v1()))) == "openAsOlder v1")
        #expect(Self.describe(.decide(newer, Self.request(try Self.v1(), opensNewer: false))).hasPrefix("refuse storeNewerThanModel"))
        // A migration (not an open) never opens as an older model.
        #expect(Self.describe(.decide(newer, Self.request(try Self.v1(), purpose: .migrate))).hasPrefix("refuse storeNewerThanModel"))
        _ = plan
        let removed = Self.facts(at: try Self.v3(), history: ["v1", "v3"])
        let refusal = Self.describe(.decide(removed, Self.request(try Self.v1())))
        #expect(refusal.hasPrefix("refuse storeNewerThanModel"))
        #expect(refusal.contains("Note.text") || refusal.contains("text"), "\(refusal)")
    }

    @Test("a step in progress: read by the source model, waited for without the lock, resumed or rolled back with it")
    func interruptedSteps() throws {
        let v1 = try Self.v1(), v2 = try Self.v2()
        let plan = try MigrationPlan(schemas: [v1, v2])
        let inProgress = Self.facts(at: v1, migrating: true, journal: Self.journal(from: v1, to: v2))
        #expect(Self.describe(.decide(inProgress, Self.request(v1))) == "readDuringMigration")
        #expect(Self.describe(.decide(inProgress, Self.request(v2, plan: plan))) == "waitForMigration")
        #expect(Self.describe(.decide(inProgress, Self.request(v2, plan: plan, readOnly: true))).hasPrefix("refuse migrationInProgress"))
        #expect(Self.describe(.decide(inProgress, Self.request(v2, plan: plan, holdsLock: true))) == "resume to v2")
        // An app that no longer leads there rolls the step back; one that will migrate later keeps the work.
        let v3 = try Self.v3()
        #expect(Self.describe(.decide(inProgress, Self.request(v3, plan: try MigrationPlan(schemas: [v1, v3]), holdsLock: true))) == "rollBack")
        let later = OpenDecision.decide(inProgress, Self.request(v2, plan: plan, migratesAtOpen: false, holdsLock: true))
        #expect(Self.describe(later).hasPrefix("refuse migrationRequired"))
        #expect(Self.describe(later).contains("v1") && Self.describe(later).contains("v2"))
        // A custom step resumes only with its stage.
        let custom = Self.facts(at: v1, migrating: true, journal: Self.journal(from: v1, to: v2, hasStage: true))
        #expect(Self.describe(.decide(custom, Self.request(v2, plan: plan, holdsLock: true))) == "rollBack")
        // Only didMigrate left and no stage to run it: the step cannot be undone, nor finished here.
        let switched = Self.facts(at: v2, migrating: true, journal: Self.journal(from: v1, to: v2, hasStage: true, switched: true))
        #expect(Self.describe(.decide(switched, Self.request(v2, plan: plan, holdsLock: true))).hasPrefix("refuse migrationRequired"))
        // The flag without a journal is cleared.
        #expect(Self.describe(.decide(Self.facts(at: v1, migrating: true), Self.request(v1, holdsLock: true))) == "clearMigratingFlag")
    }

    @Test("no route, a store the plan does not know under a known identifier, the same identifier with other hashes")
    func plansThatDoNotLead() throws {
        let v1 = try Self.v1(), v2 = try Self.v2()
        let other = try MigrationPlan(schemas: [v1])
        #expect(Self.describe(.decide(Self.facts(at: v1), Self.request(v2, plan: other))).hasPrefix("refuse noRoute"))
        let impostor = try Schema("v1") { Entity("Note") { Attribute("text", .int64) } }
        #expect(Self.describe(.decide(Self.facts(at: impostor), Self.request(v2, plan: try MigrationPlan(schemas: [v1, v2]))))
                .hasPrefix("refuse schemaMismatch"))
    }
}
