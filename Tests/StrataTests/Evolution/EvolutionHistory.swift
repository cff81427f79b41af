import Foundation
import Strata
import StrataTestKit

/// A random model history — its versions as lists of changes — and how one store travels along it: the
/// version that created it, the version it is at when the app updates, and how it reaches the last version.
struct EvolutionHistory: Sendable, CustomStringConvertible {
    enum Mode: String, Sendable, CaseIterable {
        case inOneGo = "in one go"
        case stepByStep = "step by step"
        case swept = "in one go, then swept"
        case rewritten = "in one go, every record rewritten"
    }

    var seed: UInt64
    var versions: [[ModelChange]]
    /// Whether a version keeps the renaming identifiers of the version before (else it forgets them).
    var keepsRenamingIdentifiers: Bool
    var createdAt: Int
    var startAt: Int
    var mode: Mode
    /// Whether string values repeat (so that a new unique constraint can meet duplicates).
    var repeatsStrings: Bool

    /// The history's versions as models, schemas, stages and plan; nil when a version changes nothing its
    /// predecessor's hashes show (a shrunk history can come to that), or a refused change is not last.
    struct Built {
        var models: [EvolvingModel]
        /// The changes each version applied (those that still apply, in a shrunk history).
        var applied: [[ModelChange]]
        var schemas: [Schema]
        var plan: MigrationPlan
        var refusedVersion: Int?
    }

    func build() -> Built? {
        var model = EvolvingModel()
        var models: [EvolvingModel] = [], applied: [[ModelChange]] = [], schemas: [Schema] = [], stages: [MigrationStage] = []
        var refused: Int?
        for (k, changes) in versions.enumerated() {
            if !keepsRenamingIdentifiers { model.forgetRenames() }
            let before = model
            let done = changes.filter { $0.apply(to: &model) }
            guard !done.isEmpty, refused == nil else { return nil }
            if done.contains(where: \.isRefused) { refused = k }
            guard let schema = try? model.schema("v\(k)") else { return nil }
            if let previous = schemas.last, previous.entityVersionHashes == schema.entityVersionHashes { return nil }
            if let custom = done.first(where: \.isCustom), case .retypeByScript(let e, let a) = custom,
               let entity = model.entity(e), let attribute = model.attribute(e, a), before.attribute(e, a) != nil {
                let name = attribute.name
                stages.append(.custom(from: "v\(k - 1)", to: "v\(k)", scripts: [
                    ObjectScript(entity.name) { object in
                        object[name] = ModelChange.utf8Length(try object.previousValue(name))
                    },
                ]))
            }
            models.append(model); applied.append(done); schemas.append(schema)
        }
        guard schemas.count >= 2, let plan = try? MigrationPlan(schemas: schemas, stages: stages) else { return nil }
        return Built(models: models, applied: applied, schemas: schemas, plan: plan, refusedVersion: refused)
    }

    var description: String {
        var lines = ["seed \(seed) (0x\(String(seed, radix: 16))): a store created at v\(createdAt), at v\(startAt) when the app updates, migrated \(mode.rawValue)"
                     + (keepsRenamingIdentifiers ? "" : "; renaming identifiers last one version") + (repeatsStrings ? "; strings repeat" : "")]
        for (k, changes) in versions.enumerated() {
            lines.append("  v\(k):")
            for change in changes { lines.append("    \(change)") }
        }
        return lines.joined(separator: "\n")
    }
}

extension EvolutionHistory {
    /// A random history of 2 to `maximumVersions` versions, made from `seed` alone.
    static func random(seed: UInt64, maximumVersions: Int = 6) -> EvolutionHistory {
        var random = SeededGenerator(seed: seed)
        var generator = ChangeGenerator()
        var model = EvolvingModel()
        let keeps = random.chance(0.5)
        var versions: [[ModelChange]] = []
        var first: [ModelChange] = []
        for _ in 0..<(1 + random.int(3)) { first.append(generator.newEntity(&random)) }
        for change in first { _ = change.apply(to: &model) }
        if model.entities.count > 1, random.chance(0.6), let relate = generator.relationship(model, &random) {
            first.append(relate); _ = relate.apply(to: &model)
        }
        versions.append(first)
        // A plan refuses two versions with the same hashes (a version that undoes the one before, say).
        var seen: [[String: VersionHash]] = (try? model.schema("v0")).map { [$0.entityVersionHashes] } ?? []
        let count = 2 + random.int(max(1, maximumVersions - 1))
        for k in 1..<count {
            if !keeps { model.forgetRenames() }
            var changes: [ModelChange] = []
            var next = model
            if k == count - 1, random.chance(0.08), let refused = generator.refused(next, &random) {
                changes = [refused]; _ = refused.apply(to: &next)
            } else if random.chance(0.1), let custom = generator.custom(next, &random) {
                changes = [custom]; _ = custom.apply(to: &next)
            } else {
                var touched: Set<Int> = []
                let wanted = 1 + random.int(3)
                var attempts = 0
                while attempts < 40 {
                    attempts += 1
                    guard let change = generator.change(next, touched: &touched, &random), change.apply(to: &next) else { continue }
                    changes.append(change)
                    if changes.count >= wanted, let schema = try? next.schema("v\(k)"), !seen.contains(schema.entityVersionHashes) { break }
                }
            }
            guard let schema = try? next.schema("v\(k)"), !seen.contains(schema.entityVersionHashes) else { break }
            versions.append(changes)
            model = next
            seen.append(schema.entityVersionHashes)
            if changes.contains(where: \.isRefused) { break }
        }
        let last = versions.count - 1
        let createdAt = random.int(max(1, last))
        let startAt = createdAt + random.int(max(1, last - createdAt))
        return EvolutionHistory(seed: seed, versions: versions, keepsRenamingIdentifiers: keeps, createdAt: createdAt,
                                startAt: startAt, mode: random.pick(Mode.allCases), repeatsStrings: random.chance(0.35))
    }
}

/// Makes the random changes of a history, with fresh names and uids.
struct ChangeGenerator {
    private var next = 0
    static let types: [AttributeType] = [.int16, .int32, .int64, .float, .double, .bool, .string, .date, .data, .uuid]

    mutating func uid() -> Int { next += 1; return next }
    mutating func name(_ prefix: String) -> String { next += 1; return "\(prefix)\(next)" }

    mutating func attribute(_ random: inout SeededGenerator, optional: Bool? = nil) -> EvolvingModel.AttributeSpec {
        let type = random.pick(Self.types)
        let optional = optional ?? random.chance(0.4)
        var spec = EvolvingModel.AttributeSpec(uid: uid(), name: name("p"), type: type, optional: optional,
                                               defaultValue: optional && random.chance(0.7) ? nil : random.value(of: type))
        if random.chance(0.3) { spec.indexed = true }
        if !optional, type == .uuid || type == .string, random.chance(0.1) { spec.unique = true; spec.defaultValue = nil }
        return spec
    }

    mutating func newEntity(_ random: inout SeededGenerator) -> ModelChange {
        var spec = EvolvingModel.EntitySpec(uid: uid(), name: name("E"))
        for _ in 0..<(1 + random.int(4)) { spec.attributes.append(attribute(&random)) }
        return .addEntity(spec)
    }

    mutating func relationship(_ model: EvolvingModel, _ random: inout SeededGenerator) -> ModelChange? {
        guard model.entities.count > 1 else { return nil }
        let a = random.pick(model.entities), others = model.entities.filter { $0.uid != a.uid }
        let b = random.pick(others)
        let u1 = uid(), u2 = uid()
        return .addRelationship(from: a.uid, .init(uid: u1, name: name("r"), destination: b.uid, inverseUID: u2, toMany: random.chance(0.5)),
                                to: b.uid, .init(uid: u2, name: name("r"), destination: a.uid, inverseUID: u1, toMany: random.chance(0.5)))
    }

    private func stringAttributes(_ model: EvolvingModel) -> [(Int, EvolvingModel.AttributeSpec)] {
        model.entities.flatMap { e in e.attributes.filter { $0.type == .string && !$0.unique }.map { (e.uid, $0) } }
    }

    mutating func custom(_ model: EvolvingModel, _ random: inout SeededGenerator) -> ModelChange? {
        let candidates = stringAttributes(model)
        guard !candidates.isEmpty else { return nil }
        let (e, a) = random.pick(candidates)
        return .retypeByScript(entity: e, attribute: a.uid)
    }

    mutating func refused(_ model: EvolvingModel, _ random: inout SeededGenerator) -> ModelChange? {
        let candidates = stringAttributes(model)
        if !candidates.isEmpty, random.chance(0.5) {
            let (e, a) = random.pick(candidates)
            return .retypeWithoutStage(entity: e, attribute: a.uid)
        }
        guard !model.entities.isEmpty else { return nil }
        var spec = attribute(&random, optional: false)
        spec.defaultValue = nil; spec.unique = false
        return .addRequiredWithoutDefault(entity: random.pick(model.entities).uid, spec)
    }

    /// One random inferable change touching nothing in `touched` (what the version already changed).
    mutating func change(_ model: EvolvingModel, touched: inout Set<Int>, _ random: inout SeededGenerator) -> ModelChange? {
        let entities = model.entities
        guard !entities.isEmpty else { return newEntity(&random) }
        let entity = random.pick(entities)
        let free = entity.attributes.filter { !touched.contains($0.uid) }
        let attribute = free.isEmpty ? nil : random.pick(free)
        let relationships = entities.flatMap(\.relationships).filter { !touched.contains($0.uid) && !touched.contains($0.inverseUID) }
        func mark(_ uids: Int...) { for u in uids { touched.insert(u) } }
        switch random.int(16) {
        case 0, 1:
            let spec = self.attribute(&random)
            if spec.unique { return nil }   // a new unique attribute of existing objects would need distinct defaults
            mark(spec.uid); return .addAttribute(entity: entity.uid, spec)
        case 2:
            guard let a = attribute, entity.attributes.count > 1 else { return nil }
            mark(a.uid); return .removeAttribute(entity: entity.uid, attribute: a.uid)
        case 3, 4:
            guard let a = attribute else { return nil }
            mark(a.uid); return .renameAttribute(entity: entity.uid, attribute: a.uid, to: name("p"))
        case 5:
            guard !touched.contains(entity.uid) else { return nil }
            mark(entity.uid); return .renameEntity(entity: entity.uid, to: name("E"))
        case 6:
            guard let a = attribute else { return nil }
            mark(a.uid)
            return a.optional ? .makeRequired(entity: entity.uid, attribute: a.uid, default: random.value(of: a.type))
                              : a.unique ? nil : .makeOptional(entity: entity.uid, attribute: a.uid)
        case 7:
            guard let a = attribute, !ModelChange.widenings(of: a.type).isEmpty else { return nil }
            mark(a.uid); return .widen(entity: entity.uid, attribute: a.uid, to: random.pick(ModelChange.widenings(of: a.type)))
        case 8:
            guard let a = attribute, !a.unique else { return nil }
            mark(a.uid); return .setIndexed(entity: entity.uid, attribute: a.uid, !a.indexed)
        case 9, 14, 15:
            guard let a = attribute, a.unique || ModelChange.canBeUnique(a) else { return nil }
            mark(a.uid); return .setUnique(entity: entity.uid, attribute: a.uid, !a.unique)
        case 10:
            guard entities.count < 5 else { return nil }
            return newEntity(&random)
        case 11:
            guard entities.flatMap(\.relationships).count < 6, let r = relationship(model, &random),
                  case .addRelationship(_, let r1, _, let r2) = r else { return nil }
            mark(r1.uid, r2.uid); return r
        case 12:
            guard !relationships.isEmpty else { return nil }
            let r = random.pick(relationships)
            mark(r.uid, r.inverseUID); return .removeRelationship(relationship: r.uid)
        default:
            guard !relationships.isEmpty else { return nil }
            let r = random.pick(relationships)
            mark(r.uid); return .renameRelationship(relationship: r.uid, to: name("r"))
        }
    }
}
