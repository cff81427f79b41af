import Foundation
import Strata
import StrataTestKit

/// What running histories counted.
struct EvolutionOutcome: Sendable {
    var histories = 0
    var steps = 0
    var objectsChecked = 0
    var diagnostics = 0
    /// Generated histories that did not build (none expected; counted to be seen).
    var skipped = 0
    var failures: [String] = []

    mutating func add(_ other: EvolutionOutcome) {
        histories += other.histories; steps += other.steps; objectsChecked += other.objectsChecked
        diagnostics += other.diagnostics; skipped += other.skipped; failures += other.failures
    }

    var summary: String {
        "evolution: \(histories) histories, \(steps) steps, \(objectsChecked) objects checked, \(failures.isEmpty ? 0 : failures.count) wrong, \(diagnostics) diagnostics"
            + (skipped > 0 ? ", \(skipped) skipped" : "")
    }
}

/// Runs one history: writes random data into a store at its versions, migrates it as the history says, and
/// compares every object with the oracle at each version the store reaches.
struct EvolutionRunner {
    let history: EvolutionHistory
    let built: EvolutionHistory.Built
    let url: URL
    var random: SeededGenerator
    var oracle = EvolutionOracle()
    var outcome = EvolutionOutcome(histories: 1)
    var serial = 0
    static let objectsPerEntity = 40

    /// Runs `history` in a store under `directory`; its failures are in the outcome.
    static func run(_ history: EvolutionHistory, in directory: URL) -> EvolutionOutcome {
        guard let built = history.build() else { return EvolutionOutcome(histories: 1, skipped: 1) }
        var runner = EvolutionRunner(history: history, built: built, url: directory.appendingPathComponent("h\(history.seed)-\(UUID().uuidString.prefix(6))"),
                                     random: SeededGenerator(seed: history.seed ^ 0xDA7A))
        defer { try? FileManager.default.removeItem(at: runner.url) }
        do { try runner.travel() } catch { runner.fail("unexpected error \(type(of: error)): \(error)") }
        return runner.outcome
    }

    mutating func fail(_ message: String) { outcome.failures.append(message) }

    var configuration: StoreConfiguration {
        var c = StoreConfiguration()
        c.backgroundMaintenance = false
        c.initialMapSize = 4 << 20
        return c
    }

    func plan(upTo version: Int) throws -> MigrationPlan {
        let last = built.schemas.count - 1
        if version == last { return built.plan }
        return try MigrationPlan(schemas: Array(built.schemas[...version]),
                                 stages: built.plan.stages.filter { Int($0.destination.dropFirst())! <= version })
    }

    mutating func travel() throws {
        let last = built.schemas.count - 1
        let created = min(history.createdAt, last - 1)
        let start = min(max(history.startAt, created), last - 1)
        do {
            let store = try Store.open(at: url, schema: built.schemas[created], configuration: configuration)
            defer { store.close() }
            try fill(store, version: created)
        }
        for k in stride(from: created + 1, through: start, by: 1) {
            guard try migrate(from: k - 1, to: k, fillAfter: true) else { return }
        }
        switch history.mode {
        case .stepByStep:
            for k in (start + 1)...last {
                guard try migrate(from: k - 1, to: k, fillAfter: k < last) else { return }
            }
        case .inOneGo, .swept, .rewritten:
            _ = try migrate(from: start, to: last, fillAfter: false)
        }
    }

    /// Opens the store at `from` with version `to`'s model and the plan as it stood then; checks the result
    /// (or the refusal the oracle predicts). False when the store can go no further.
    mutating func migrate(from: Int, to: Int, fillAfter: Bool) throws -> Bool {
        let predicted = oracle.firstFailure(from: from, to: to, built: built)
        var configuration = configuration
        let last = built.schemas.count - 1
        if history.mode == .rewritten && to == last { configuration.migration.rewritesEveryRecord() }
        let store: Store
        do {
            store = try Store.open(at: url, schema: built.schemas[to], plan: try plan(upTo: to), configuration: configuration)
        } catch let error as MigrationError {
            guard let predicted else {
                fail("v\(from) → v\(to): unexpected \(error)")
                return false
            }
            try refused(error, predicted: predicted, from: from)
            return false
        }
        defer { store.close() }
        if let predicted {
            fail("v\(from) → v\(to): expected \(predicted.code) at v\(predicted.version - 1) → v\(predicted.version), the migration succeeded")
            return false
        }
        for k in (from + 1)...to { oracle.migrate(through: built.applied[k], from: built.models[k - 1]) }
        outcome.steps += to - from
        if store.schema.versionIdentifier != "v\(to)" { fail("v\(from) → v\(to): the store opened at \(store.schema.versionIdentifier)") }
        try check(store, version: to, "v\(from) → v\(to)")
        if history.mode == .swept && to == last {
            _ = try store.performMaintenance()
            try check(store, version: to, "v\(from) → v\(to), swept")
        }
        if fillAfter { try fill(store, version: to) }
        return true
    }

    /// Checks a refusal: its code, its diagnostics, the store's state it reports, and that the store holds
    /// the oracle's objects at that version.
    mutating func refused(_ error: MigrationError, predicted: (version: Int, code: MigrationError.Code), from: Int) throws {
        outcome.diagnostics += 1
        let step = "v\(from) → v\(predicted.version)"
        if error.code != predicted.code { fail("\(step): expected \(predicted.code), got \(error)") }
        if error.code == .cannotInfer && error.diagnostics.isEmpty { fail("\(step): cannotInfer without a diagnostic: \(error)") }
        // A refused inference writes nothing; a failed data check rolls its step back (earlier steps stay).
        let latest = error.code == .cannotInfer ? from : predicted.version - 1
        guard case .at(let version)? = error.storeState, let at = Int(version.dropFirst()), at >= from, at <= latest else {
            fail("\(step): the error says the store is \(String(describing: error.storeState)), expected at v\(from)…v\(latest)")
            return
        }
        for k in stride(from: from + 1, through: at, by: 1) { oracle.migrate(through: built.applied[k], from: built.models[k - 1]) }
        outcome.steps += at - from
        let store = try Store.open(at: url, schema: built.schemas[at], configuration: configuration)
        defer { store.close() }
        try check(store, version: at, "after the refusal of \(step), at v\(at)")
    }

    /// Inserts, links, updates and deletes random objects of every entity of `version`, recording them in the oracle.
    mutating func fill(_ store: Store, version: Int) throws {
        let model = built.models[version]
        var oracle = self.oracle, random = self.random, serial = self.serial
        let repeats = history.repeatsStrings
        func value(_ a: EvolvingModel.AttributeSpec) -> Value {
            if a.optional && random.chance(0.25) { return .null }
            // "_" is not in the random strings' alphabet: a value written before the attribute became unique can
            // never be one of these (a random "u2" once made the app's own insert break the new constraint).
            if a.unique && a.type == .string { serial += 1; return .string("u_\(serial)") }
            if a.type == .string && repeats { return .string(random.pick(["a", "b", "c"])) }
            return random.value(of: a.type)
        }
        try store.write { context in
            for entity in model.entities {
                for _ in 0..<random.int(Self.objectsPerEntity + 1) {
                    var values: [String: Value] = [:], byUID: [Int: Value] = [:]
                    for a in entity.attributes { let v = value(a); values[a.name] = v; byUID[a.uid] = v }
                    let object = try context.insert(entity.name, values)
                    oracle.objects[object.id.rawValue] = EvolutionOracle.Object(entity: entity.uid, values: byUID)
                }
            }
            for entity in model.entities {
                for r in entity.relationships where r.uid < r.inverseUID {
                    guard let (_, inverse) = model.relationship(r.inverseUID), let destination = model.entity(r.destination) else { continue }
                    let sources = oracle.ids(of: entity.uid), targets = oracle.ids(of: destination.uid)
                    guard !sources.isEmpty, !targets.isEmpty else { continue }
                    for _ in 0..<random.int(8) {
                        let a = random.pick(sources), b = random.pick(targets)
                        guard r.toMany || oracle.related(a, r).isEmpty, inverse.toMany || oracle.related(b, inverse).isEmpty,
                              !oracle.related(a, r).contains(b) else { continue }
                        try context.link(ObjectID(rawValue: a), of: entity.name, r.name, to: ObjectID(rawValue: b))
                        oracle.link(a, r, to: b)
                    }
                }
                let ids = oracle.ids(of: entity.uid)
                guard !ids.isEmpty else { continue }
                for _ in 0..<random.int(3) {
                    let id = random.pick(ids)
                    guard var object = try context.object(ObjectID(rawValue: id), of: entity.name) else { continue }
                    let changeable = entity.attributes.filter { !$0.unique }
                    guard !changeable.isEmpty else { continue }
                    let a = random.pick(changeable), v = value(a)
                    object[a.name] = v
                    try context.update(object)
                    oracle.objects[id]?.values[a.uid] = v
                }
                if random.chance(0.3) {
                    let id = random.pick(ids)
                    if oracle.objects[id] != nil {
                        try context.delete(ObjectID(rawValue: id), of: entity.name)
                        oracle.delete(id)
                    }
                }
            }
        }
        self.oracle = oracle; self.random = random; self.serial = serial
    }

    /// Compares every object of `version`'s model in `store` with the oracle, attribute by attribute and link by
    /// link, and looks each indexed attribute's value up through a query.
    mutating func check(_ store: Store, version: Int, _ step: String) throws {
        let model = built.models[version]
        var wrong: [String] = [], checked = 0
        let oracle = self.oracle
        var random = self.random
        try store.read { context in
            for entity in model.entities {
                let expected = oracle.ids(of: entity.uid)
                let count = try context.count(entity.name)
                if count != expected.count { wrong.append("\(entity.name): \(count) objects, expected \(expected.count)") }
                for id in expected {
                    guard let object = try context.object(ObjectID(rawValue: id), of: entity.name) else {
                        wrong.append("\(entity.name) #\(id) is missing"); continue
                    }
                    for a in entity.attributes {
                        let want = oracle.objects[id]?.values[a.uid] ?? .null
                        if object[a.name] != want { wrong.append("\(entity.name) #\(id).\(a.name): \(object[a.name]), expected \(want)") }
                    }
                    for r in entity.relationships {
                        let got = Set(try context.related(object, r.name).map(\.rawValue)), want = oracle.related(id, r)
                        if got != want { wrong.append("\(entity.name) #\(id).\(r.name): \(got.sorted()), expected \(want.sorted())") }
                    }
                    checked += 1
                }
                guard !expected.isEmpty else { continue }
                for a in entity.attributes where a.indexed || a.unique {
                    let value = oracle.objects[random.pick(expected)]?.values[a.uid] ?? .null
                    guard value != .null else { continue }
                    let got = Set(try context.objects(entity.name).where(a.name, equals: value).ids().map(\.rawValue))
                    let want = Set(expected.filter { oracle.objects[$0]?.values[a.uid] == value })
                    if got != want { wrong.append("\(entity.name) where \(a.name) == \(value): \(got.sorted()), expected \(want.sorted())") }
                }
            }
        }
        self.random = random
        outcome.objectsChecked += checked
        if !wrong.isEmpty { fail("\(step): " + wrong.prefix(5).joined(separator: "; ") + (wrong.count > 5 ? " (\(wrong.count) in all)" : "")) }
    }
}
