import Foundation
import Strata

/// A second store kept equal to a first one — in another process, on another schedule — purely through the
/// first store's change history: the recipe of the ChangeHistory article, as code (`strata-example replica`
/// runs it across two processes).
///
/// - The replica's model is the replica app's model plus two bookkeeping entities: `ReplicaMap` (a primary
///   object's identifier → the replica's) and `ReplicaState` (the last token applied, and where to replay from
///   once the app knows a newer model). The token is written in the same transaction as the changes it covers,
///   so a kill at any point resumes exactly.
/// - The primary is only read, with the replica app's model (an older model reads a newer store as long as every
///   change since is additive). Each transaction's inserted and updated objects are read from the primary *now*
///   and upserted; deleted ones are deleted; links are set through the map. Values are always the primary's
///   latest and transactions apply in commit order: the last writer wins by commit order, and applying a
///   transaction twice changes nothing.
/// - A transaction written by a model the replica app does not know (the primary was migrated, the replica app
///   not yet updated) is applied as far as the app's model goes, and remembered: once the replica app is updated
///   (and its store migrated by its own plan), the replica replays from there.
/// - An expired, diverged or foreign token, or no token yet: a full copy, taken in one read with its token.
public final class HistoryReplica {
    /// The author of the replica's writes (in its own history, if it keeps one).
    public static let author = "replica"

    public let primaryURL: URL
    public let replicaURL: URL
    /// The replica app's model versions, oldest first; the last is the one it runs.
    public let appVersions: [Schema]
    var app: Schema { appVersions[appVersions.count - 1] }
    private let replica: Store
    private var primary: Store

    /// The replica app's model with the bookkeeping entities.
    public static func replicaSchema(_ app: Schema) throws -> Schema {
        try Schema(app.versionIdentifier, entities: app.entities + [
            Entity("ReplicaMap") {
                Attribute("primaryID", .int64).unique()
                Attribute("localID", .int64).unique()
                Attribute("entity", .string)
            },
            Entity("ReplicaState") {
                Attribute("token", .string).optional()
                Attribute("replayFrom", .string).optional()
                Attribute("replayApp", .string).optional()
            },
        ])
    }

    /// Opens (or creates) the replica at `replica` for the app at `appVersions.last`, migrating it along the
    /// app's versions, and the primary at `primary` read-only.
    public init(primary: URL, replica: URL, appVersions: [Schema]) throws {
        precondition(!appVersions.isEmpty, "the replica app has at least one model version")
        primaryURL = primary
        replicaURL = replica
        self.appVersions = appVersions
        let versions = try appVersions.map(Self.replicaSchema)
        self.replica = try Store.open(at: replica, schema: versions[versions.count - 1], plan: try MigrationPlan(schemas: versions))
        self.primary = try Self.openPrimary(primary, app: appVersions[appVersions.count - 1])
    }

    private static func openPrimary(_ url: URL, app: Schema) throws -> Store {
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        configuration.createIfMissing = false
        configuration.backgroundMaintenance = false
        return try Store.open(at: url, schema: app, configuration: configuration)
    }

    public func close() {
        primary.close()
        replica.close()
    }

    /// The last token applied (nil before the first copy).
    public var token: HistoryToken? {
        get throws { try state().token.flatMap(HistoryToken.init) }
    }

    /// Whether transactions of a model the replica app does not know were applied only in part (they are
    /// replayed once the app is updated).
    public var awaitsNewerApp: Bool {
        get throws { try state().replayFrom != nil }
    }

    // MARK: Following

    /// Applies everything the primary's history holds now, in pages (one replica write each). Returns the
    /// number of transactions applied.
    @discardableResult
    public func synchronize(pageSize: Int = 500) throws -> Int {
        var applied = 0
        while true {
            let (n, done) = try withFreshPrimary { try applyPage(limit: pageSize) }
            applied += n
            if done { return applied }
        }
    }

    /// Waits until the primary commits after the replica's token (through the primary's history feed: this
    /// process's observation machinery, which hears other processes' commits).
    public func waitForPrimaryCommits() async throws {
        var feed = primary.history(after: try token).makeAsyncIterator()
        _ = try await feed.next()
    }

    /// Runs `body`, opening the primary again when another process migrated it meanwhile.
    private func withFreshPrimary<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as StoreError where error.code == .modelChanged {
            primary.close()
            primary = try Self.openPrimary(primaryURL, app: app)
            return try body()
        }
    }

    private struct State {
        var token: String?
        var replayFrom: String?
        var replayApp: String?
    }

    private func state() throws -> State {
        try replica.read { ctx in
            guard let row = try ctx.objects("ReplicaState").first() else { return State() }
            return State(token: row["token"].stringValue, replayFrom: row["replayFrom"].stringValue, replayApp: row["replayApp"].stringValue)
        }
    }

    private func save(_ state: State, in ctx: WriteContext) throws {
        let values: [String: Value] = ["token": state.token.map(Value.string) ?? .null,
                                       "replayFrom": state.replayFrom.map(Value.string) ?? .null,
                                       "replayApp": state.replayApp.map(Value.string) ?? .null]
        if var row = try ctx.objects("ReplicaState").first() {
            for (k, v) in values { row[k] = v }
            try ctx.update(row)
        } else {
            try ctx.insert("ReplicaState", values)
        }
    }

    /// One page: the transactions after the saved token, applied with the token in one replica write.
    private func applyPage(limit: Int) throws -> (applied: Int, done: Bool) {
        var state = try state()
        // The app was updated since transactions of a newer model were applied in part: replay them.
        if let replay = state.replayFrom, state.replayApp != app.versionIdentifier {
            state.token = replay
            state.replayFrom = nil
            state.replayApp = nil
        }
        guard let saved = state.token, let token = HistoryToken(saved) else {
            try copyAll()
            return (0, true)
        }
        let page: HistoryPage
        do {
            page = try primary.fetchHistory(after: token, limit: limit)
        } catch let error as StoreError
                    where [.historyExpired, .historyDiverged, .historyTokenFromOtherStore].contains(error.code) {
            try copyAll()
            return (0, true)
        }
        let knownVersions = Set(appVersions.map(\.versionIdentifier))
        try primary.read { source in
            try replica.write(author: Self.author) { target in
                var position = token
                var work = Work()
                for transaction in page.transactions {
                    var partial = !knownVersions.contains(transaction.modelVersion)
                    try apply(transaction, from: source, to: target, work: &work, partial: &partial)
                    if partial && state.replayFrom == nil {
                        state.replayFrom = position.description
                        state.replayApp = app.versionIdentifier
                    }
                    position = transaction.token
                }
                try work.finish(self, from: source, to: target)
                state.token = page.next.description
                try save(state, in: target)
            }
        }
        return (page.transactions.count, page.isAtEnd)
    }

    /// The links to set once every object of a page exists: (primary ID, entity, relationships).
    private struct Work {
        var links: [(id: ObjectID, entity: String, relationships: [String])] = []

        func finish(_ replica: HistoryReplica, from source: ReadContext, to target: WriteContext) throws {
            for item in links { try replica.link(item.id, item.entity, item.relationships, from: source, to: target) }
        }
    }

    private func apply(_ transaction: HistoryTransaction, from source: ReadContext, to target: WriteContext,
                       work: inout Work, partial: inout Bool) throws {
        if let migration = transaction.migration {
            for (name, step) in migration.steps {
                guard let entity = app.entities.first(where: { $0.name == name }) else { continue }
                if step == .removed { try deleteAll(entity.name, in: target) }
            }
        }
        for changes in transaction.changes {
            guard let entity = app.entities.first(where: { $0.name == changes.entity }) else {
                partial = true
                continue
            }
            if !changes.isComplete {
                try copyEntity(entity, from: source, to: target, work: &work)
                continue
            }
            for deletion in changes.deleted { try delete(deletion.id, entity.name, in: target) }
        }
        for changes in transaction.changes where changes.isComplete {
            guard let entity = app.entities.first(where: { $0.name == changes.entity }) else { continue }
            let attributes = Set(entity.attributes.map(\.name))
            let relationships = Set(entity.relationships.map(\.name))
            for id in changes.inserted {
                try upsert(id, entity, names: nil, from: source, to: target)
                work.links.append((id, entity.name, entity.relationships.map(\.name)))
            }
            for update in changes.updated {
                let unknown = update.properties.contains { !attributes.contains($0) && !relationships.contains($0) }
                // A name this model does not know (a newer model's property, or an older model's name for a
                // renamed one): every property this model has is copied, and the transaction replayed later.
                if unknown { partial = true }
                try upsert(update.id, entity, names: unknown ? nil : Set(update.properties).intersection(attributes), from: source, to: target)
                let linked = unknown ? entity.relationships.map(\.name) : update.properties.filter(relationships.contains)
                if !linked.isEmpty { work.links.append((update.id, entity.name, linked)) }
            }
        }
    }

    // MARK: Objects

    private func localID(_ primaryID: ObjectID, in ctx: ReadContext) throws -> (map: DynamicObject, local: ObjectID)? {
        guard let row = try ctx.objects("ReplicaMap").where("primaryID", equals: .int64(Int64(primaryID.rawValue))).first(),
              let local = row["localID"].int64Value else { return nil }
        return (row, ObjectID(rawValue: UInt64(local)))
    }

    /// Copies the primary object `id` (all attributes, or those in `names`); absent from the primary: nothing
    /// (a later transaction deletes it).
    private func upsert(_ id: ObjectID, _ entity: Entity, names: Set<String>?, from source: ReadContext, to target: WriteContext) throws {
        guard let object = try source.object(id, of: entity.name) else { return }
        let stored = entity.attributes.filter { !$0.isTransient }.map(\.name)
        if let (map, local) = try localID(id, in: target) {
            if var mine = try target.object(local, of: entity.name) {
                for name in stored where names?.contains(name) ?? true { mine[name] = object[name] }
                try target.update(mine)
                return
            }
            try target.delete(map)
        }
        var values: [String: Value] = [:]
        for name in stored { values[name] = object[name] }
        let mine = try target.insert(entity.name, values)
        try target.insert("ReplicaMap", ["primaryID": .int64(Int64(id.rawValue)), "localID": .int64(Int64(mine.id.rawValue)),
                                         "entity": .string(entity.name)])
    }

    private func delete(_ id: ObjectID, _ entity: String, in target: WriteContext) throws {
        guard let (map, local) = try localID(id, in: target) else { return }
        try target.delete(local, of: entity)
        try target.delete(map)
    }

    private func link(_ id: ObjectID, _ entity: String, _ relationships: [String], from source: ReadContext, to target: WriteContext) throws {
        guard let (_, local) = try localID(id, in: target), let mine = try target.object(local, of: entity),
              try source.object(id, of: entity) != nil else { return }
        for relationship in relationships {
            var targets: [ObjectID] = []
            for other in try source.related(id, of: entity, relationship) {
                if let (_, mapped) = try localID(other, in: target) { targets.append(mapped) }
            }
            try target.setRelated(mine, relationship, to: targets)
        }
    }

    private func deleteAll(_ entity: String, in target: WriteContext) throws {
        for row in try target.objects("ReplicaMap").where("entity", equals: .string(entity)).fetch() {
            if let local = row["localID"].int64Value { try target.delete(ObjectID(rawValue: UInt64(local)), of: entity) }
            try target.delete(row)
        }
    }

    /// Every object of an entity copied again (a migration rewrote it); objects the primary no longer has deleted.
    private func copyEntity(_ entity: Entity, from source: ReadContext, to target: WriteContext, work: inout Work) throws {
        let present = Set(try source.objects(entity.name).ids())
        for row in try target.objects("ReplicaMap").where("entity", equals: .string(entity.name)).fetch() {
            guard let primary = row["primaryID"].int64Value, !present.contains(ObjectID(rawValue: UInt64(primary))) else { continue }
            try delete(ObjectID(rawValue: UInt64(primary)), entity.name, in: target)
        }
        for id in present.sorted(by: { $0.rawValue < $1.rawValue }) {
            try upsert(id, entity, names: nil, from: source, to: target)
            work.links.append((id, entity.name, entity.relationships.map(\.name)))
        }
    }

    /// A full copy: every object of the app's entities and the history's position, in one read of the primary;
    /// what the replica held before is replaced. (A large store would copy in batches of reads, then follow
    /// the history from the first read's token.)
    private func copyAll() throws {
        try withFreshPrimary {
            try primary.read { source in
                let token = try source.historyToken()
                try replica.write(author: Self.author) { target in
                    for entity in app.entities { try deleteAll(entity.name, in: target) }
                    var work = Work()
                    for entity in app.entities { try copyEntity(entity, from: source, to: target, work: &work) }
                    try work.finish(self, from: source, to: target)
                    try save(State(token: token.description), in: target)
                }
            }
        }
    }

    // MARK: Comparing

    /// The differences between the primary and the replica under `schema` (both read with it): objects missing
    /// on either side, values and links that differ. Empty when the replica equals the primary.
    public static func differences(primary: URL, replica: URL, schema: Schema) throws -> [String] {
        var configuration = StoreConfiguration()
        configuration.readOnly = true
        configuration.backgroundMaintenance = false
        let p = try Store.open(at: primary, schema: schema, configuration: configuration)
        defer { p.close() }
        let r = try Store.open(at: replica, schema: try replicaSchema(schema), configuration: configuration)
        defer { r.close() }
        var out: [String] = []
        try p.read { source in
            try r.read { target in
                var toPrimary: [UInt64: UInt64] = [:]
                var toLocal: [UInt64: UInt64] = [:]
                for row in try target.objects("ReplicaMap").fetch() {
                    if let a = row["primaryID"].int64Value, let b = row["localID"].int64Value {
                        toPrimary[UInt64(b)] = UInt64(a)
                        toLocal[UInt64(a)] = UInt64(b)
                    }
                }
                for entity in schema.entities {
                    let mine = try target.objects(entity.name).fetch()
                    let theirs = try source.objects(entity.name).fetch()
                    if mine.count != theirs.count { out.append("\(entity.name): \(theirs.count) in the primary, \(mine.count) in the replica") }
                    for object in theirs {
                        guard let local = toLocal[object.id.rawValue], let copy = try target.object(ObjectID(rawValue: local), of: entity.name) else {
                            out.append("\(entity.name) \(object.id): missing from the replica")
                            continue
                        }
                        for a in entity.attributes where !a.isTransient && object[a.name] != copy[a.name] {
                            out.append("\(entity.name) \(object.id).\(a.name): \(object[a.name]) in the primary, \(copy[a.name]) in the replica")
                        }
                        for rel in entity.relationships {
                            let expected = Set(try source.related(object.id, of: entity.name, rel.name).map(\.rawValue))
                            let actual = Set(try target.related(copy.id, of: entity.name, rel.name).compactMap { toPrimary[$0.rawValue] })
                            if expected != actual { out.append("\(entity.name) \(object.id).\(rel.name): \(expected.sorted()) in the primary, \(actual.sorted()) in the replica") }
                        }
                    }
                }
            }
        }
        return out
    }
}
