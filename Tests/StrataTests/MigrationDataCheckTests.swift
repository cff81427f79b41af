import Foundation
import Strata
import StrataTestSupport
import Testing

/// Steps that existing data may not allow are checked when they run: to-many → to-one with objects that
/// have several links, a unique constraint over duplicate values, a higher minimum count. The error lists
/// the offending objects or values, and the store is left exactly at its old version, still usable with
/// the old model; once the data is fixed, the step runs.
@Suite struct MigrationDataCheckTests {
    static func pets(_ version: String, ownersToMany: Bool = true, nameUnique: Bool = false, nameIndexed: Bool = false,
                     minimumOwners: Int? = nil) throws -> Schema {
        try Schema(version) {
            Entity("Pet") {
                nameUnique ? Attribute("name", .string).unique()
                    : (nameIndexed ? Attribute("name", .string).indexed() : Attribute("name", .string))
                Attribute("legs", .int16)
                Relationship("owners", to: "Person", inverse: "pets", toMany: ownersToMany, minCount: minimumOwners)
            }
            Entity("Person") {
                Attribute("name", .string)
                Relationship("pets", to: "Pet", inverse: "owners", toMany: true)
            }
        }
    }

    /// 300 pets, 50 people; pets at positions in `shared` get two owners; names repeat where `duplicates` says.
    static func fill(_ store: Store, oracle: Oracle, shared: Set<Int> = [], duplicates: [Int: String] = [:],
                     ownerless: Set<Int> = []) throws {
        let log = try store.write { ctx -> OracleLog in
            var log: OracleLog = []
            let people = try (0..<50).map { i in try ctx.insert("Person", ["name": .string("person \(i)")], log: &log) }
            for i in 0..<300 {
                let pet = try ctx.insert("Pet", ["name": .string(duplicates[i] ?? "pet \(i)"), "legs": .int16(Int16(i % 5))], log: &log)
                if ownerless.contains(i) { continue }
                let first = people[i % 50].id
                try ctx.link(pet.id, of: "Pet", "owners", to: first)
                log.append { $0.link(pet.id, "owners", first) }
                if shared.contains(i) {
                    let second = people[(i + 1) % 50].id
                    try ctx.link(pet.id, of: "Pet", "owners", to: second)
                    log.append { $0.link(pet.id, "owners", second) }
                }
            }
            return log
        }
        for apply in log { apply(oracle) }
    }

    static func options() -> StoreConfiguration {
        var options = MigrationOptions()
        options.batchSize = 25
        return StoreConfiguration(migration: options)
    }

    /// The store is at `schema`'s version, whole: it opens with it, matches the oracle, verifies clean,
    /// records no migration in progress.
    static func expectIntact(_ url: URL, _ schema: Schema, _ oracle: Oracle, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let store = try Store.open(at: url, schema: schema)
        defer { store.close() }
        #expect(try oracle.mismatches(in: store) == [], sourceLocation: sourceLocation)
        #expect(try store.verify().problems == [], sourceLocation: sourceLocation)
        let info = try store.info()
        #expect(info.migration == nil, sourceLocation: sourceLocation)
        #expect(info.modelVersion == schema.versionIdentifier, sourceLocation: sourceLocation)
        #expect(info.history == [schema.versionIdentifier], sourceLocation: sourceLocation)
        // Writable again: no migration flag left behind.
        _ = try store.write { ctx in try ctx.insert("Person", ["name": "probe"]) }
        try store.write { ctx in
            for p in try ctx.objects("Person").where("name", equals: "probe").fetch() { try ctx.delete(p) }
        }
    }

    @Test func toManyToToOneListsOffendersAndChangesNothing() throws {
        let dir = try TemporaryDirectory("check-to-one")
        let v1 = try Self.pets("v1"), v2 = try Self.pets("v2", ownersToMany: false)
        let oracle = Oracle(schema: v1)
        let shared: Set<Int> = [3, 77, 150, 151, 299]
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try Self.fill(store, oracle: oracle, shared: shared)
        }
        let offenders = shared.sorted().map { oracle.ids(of: "Pet")[$0] }
        let plan = try MigrationPlan(schemas: [v1, v2])
        do {
            _ = try Store.open(at: dir.store, schema: v2, plan: plan, configuration: Self.options())
            Issue.record("migrated although pets have two owners")
        } catch let error as MigrationError where error.code == .dataCheckFailed {
            let diagnostics = error.diagnostics
            #expect(error.sourceVersion == "v1" && error.destinationVersion == "v2")
            #expect(error.storeState == .at(version: "v1"))
            #expect(diagnostics == [.tooManyLinks(entity: "Pet", relationship: "owners", maximum: 1, objects: offenders, total: offenders.count)])
            let text = diagnostics.first?.description ?? ""
            for id in offenders { #expect(text.contains(id.description)) }
        }
        try Self.expectIntact(dir.store, v1, oracle)
        // Fix the data with the old model, then the step runs.
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try store.write { ctx in
                for pet in offenders {
                    let owners = try ctx.related(pet, of: "Pet", "owners")
                    try ctx.unlink(pet, of: "Pet", "owners", from: owners[1])
                    oracle.unlink(pet, "owners", owners[1])
                }
            }
        }
        let migrated = try Store.open(at: dir.store, schema: v2, plan: plan, configuration: Self.options())
        defer { migrated.close() }
        oracle.adopt(v2)
        #expect(try oracle.mismatches(in: migrated) == [])
        #expect(try migrated.verify().problems == [])
    }

    /// Without a plan the constraint is applied at open (same layout); with a plan, v2 carries a version hash
    /// modifier so that the two versions can be told apart.
    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func uniqueOverDuplicatesListsValuesAndChangesNothing(alreadyIndexed: Bool, viaPlan: Bool) throws {
        let dir = try TemporaryDirectory("check-unique")
        let v1 = try Self.pets("v1", nameIndexed: alreadyIndexed)
        var unique = try Self.pets("v2", nameUnique: true).entities
        if viaPlan { unique[0].versionHashModifier = "unique names" }
        let v2 = try Schema("v2", entities: unique)
        func open() throws -> Store {
            viaPlan ? try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2]), configuration: Self.options())
                : try Store.open(at: dir.store, schema: v2, configuration: Self.options())
        }
        let oracle = Oracle(schema: v1)
        // "rex" three times, "tom" twice.
        let duplicates = [10: "rex", 20: "rex", 250: "rex", 40: "tom", 41: "tom"]
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try Self.fill(store, oracle: oracle, duplicates: duplicates)
        }
        do {
            _ = try open()
            Issue.record("migrated although names are shared")
        } catch let error as MigrationError where error.code == .dataCheckFailed {
            let diagnostics = error.diagnostics
            #expect(error.sourceVersion == "v1" && error.destinationVersion == "v2")
            #expect(error.storeState == .at(version: "v1"))
            guard case .duplicateValues(let entity, let attribute, let values, let total)? = diagnostics.first, diagnostics.count == 1 else {
                Issue.record("\(diagnostics)"); return
            }
            #expect(entity == "Pet" && attribute == "name")
            #expect(values.sorted() == ["\"rex\"", "\"tom\""])
            #expect(total == 2)
            #expect(diagnostics[0].description.contains("rex") && diagnostics[0].description.contains("tom"))
        }
        try Self.expectIntact(dir.store, v1, oracle)
        // Rename the duplicates, then the constraint is added.
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try store.write { ctx in
                for (n, pet) in try ctx.objects("Pet").fetch().filter({ ["rex", "tom"].contains($0["name"].stringValue!) }).dropFirst().enumerated() {
                    var p = pet
                    p["name"] = .string("renamed \(n)")
                    try ctx.update(p)
                    oracle.set(p.id, "name", p["name"])
                }
            }
        }
        let migrated = try open()
        defer { migrated.close() }
        oracle.adopt(v2)
        #expect(try oracle.mismatches(in: migrated) == [])
        #expect(throws: StoreError.self) { try migrated.write { try $0.insert("Pet", ["name": "rex", "legs": 4]) } }
    }

    @Test func higherMinimumListsObjectsWithTooFewLinks() throws {
        let dir = try TemporaryDirectory("check-minimum")
        let v1 = try Self.pets("v1"), v2 = try Self.pets("v2", minimumOwners: 1)
        let oracle = Oracle(schema: v1)
        let ownerless: Set<Int> = [5, 6, 200]
        do {
            let store = try Store.open(at: dir.store, schema: v1)
            defer { store.close() }
            try Self.fill(store, oracle: oracle, ownerless: ownerless)
        }
        let expected = ownerless.sorted().map { oracle.ids(of: "Pet")[$0] }
        do {
            _ = try Store.open(at: dir.store, schema: v2, plan: try MigrationPlan(schemas: [v1, v2]), configuration: Self.options())
            Issue.record("migrated although pets have no owner")
        } catch let error as MigrationError where error.code == .dataCheckFailed {
            #expect(error.diagnostics == [.tooFewLinks(entity: "Pet", relationship: "owners", minimum: 1, objects: expected, total: 3)])
        }
        try Self.expectIntact(dir.store, v1, oracle)
    }
}
