import Foundation

extension MigrationStage {
    /// A custom stage between two versions declared as Swift model types, with any of `willMigrate`, object
    /// scripts, entity mappings (typed ones from ``EntityMapping/each(_:creating:instances:relationships:)``)
    /// and `didMigrate`.
    ///
    /// ```swift
    /// MigrationStage.custom(from: PostsV2.self, to: PostsV3.self, entityMappings: [
    ///     .each(PostsV2.Post.self, creating: [PostsV3.Section.self]) { post, context in
    ///         let kept = try context.insert(PostsV3.Post(postID: post.postID, hexColor: post.hexColor, date: post.date),
    ///                                       keepingSourceID: true)
    ///         let section = try context.insert(PostsV3.Section(title: "Intro", body: post.content))
    ///         try context.link(section, \PostsV3.Section.post, to: kept)
    ///     },
    /// ])
    /// ```
    public static func custom(
        from source: any SchemaVersion.Type,
        to destination: any SchemaVersion.Type,
        willMigrate: (@Sendable (WriteContext) throws -> Void)? = nil,
        scripts: [ObjectScript] = [],
        entityMappings: [EntityMapping] = [],
        didMigrate: (@Sendable (WriteContext) throws -> Void)? = nil
    ) -> MigrationStage {
        custom(from: source.versionIdentifier, to: destination.versionIdentifier, willMigrate: willMigrate,
               scripts: scripts, entityMappings: entityMappings, didMigrate: didMigrate)
    }
}

extension EntityMapping {
    /// Maps each object of a model type of the stage's *source* version into objects of model types of its
    /// *destination* version: the old type in, the new types out, in the same bounded, resumable,
    /// exactly-once batches as every policy.
    ///
    /// - Parameters:
    ///   - source: the source version's model type; its entity's objects are visited.
    ///   - creating: the destination model types the closure inserts besides the one that matches `source`.
    ///   - instances: creates destination objects from one source value (instance pass).
    ///   - relationships: links them once every mapping of the pass has created its objects (relationship
    ///     pass); by default, the source's links are translated as the inferred mapping would.
    public static func each<Source: EntityModel>(
        _ source: Source.Type,
        creating destinations: [any EntityModel.Type] = [],
        instances: @escaping @Sendable (Source, ModelMigrationContext) throws -> Void,
        relationships: (@Sendable (Source, ModelRelationshipContext) throws -> Void)? = nil
    ) -> EntityMapping {
        EntityMapping(source: Source.entityName, destinations: destinations.map { $0.entityName },
                      policy: ModelPolicy<Source>(instances: instances, relationships: relationships))
    }
}

/// The policy of a typed mapping: decodes each source object as `Source`, straight from its record.
struct ModelPolicy<Source: EntityModel>: RecordReadingPolicy, TypedPolicy {
    let instances: @Sendable (Source, ModelMigrationContext) throws -> Void
    let relationships: (@Sendable (Source, ModelRelationshipContext) throws -> Void)?

    var hasRelationshipClosure: Bool { relationships != nil }

    func createDestinationInstances(for source: SourceRecord, in context: InstanceMigrationContext) throws {
        try instances(try source.model(Source.self, in: context), ModelMigrationContext(base: context))
    }

    func instanceVisitDecodingAhead(runner: StepRunner, binding: EntityBinding)
        -> (reader: any StoppableReadAhead, visit: (SourceRecord, InstanceMigrationContext) throws -> Void)? {
        guard let reader = sourceReadAhead(runner: runner, binding: binding) else { return nil }
        return (reader, { source, context in
            context.current = .record(source)
            guard let value = reader.take(source.id) else { return try createDestinationInstances(for: source, in: context) }
            try instances(value.pointee, ModelMigrationContext(base: context))
        })
    }

    func relationshipVisitDecodingAhead(runner: StepRunner, binding: EntityBinding)
        -> (reader: any StoppableReadAhead, visit: (SourceRecord, RelationshipMigrationContext) throws -> Void)? {
        // Without a relationship closure the pass links as inferred, from the source's dynamic object.
        guard let relationships, let reader = sourceReadAhead(runner: runner, binding: binding) else { return nil }
        return (reader, { source, context in
            guard let value = reader.take(source.id) else { return try createRelationships(for: source, in: context) }
            try relationships(value.pointee, ModelRelationshipContext(base: context, source: .record(source)))
        })
    }

    /// A reader decoding `binding`'s source objects ahead as `Source`; nil when the type does not match the
    /// entity (the writer's own decoding then reports it, per object).
    private func sourceReadAhead(runner: StepRunner, binding: EntityBinding) -> SourceReadAhead<Source>? {
        guard (try? binding.verifyModel(Source.self)) != nil else { return nil }
        return SourceReadAhead<Source>(environment: runner.environment, model: runner.source, dbi: binding.dbi) { context, id, bytes, slot in
            slot.initialize(to: try context.decodeModel(Source.self, bytes, id: id, binding: binding))
        }
    }

    func createRelationships(for source: SourceRecord, in context: RelationshipMigrationContext) throws {
        guard let relationships else { return try context.linkInferred(for: try source.object()) }
        try relationships(try source.model(Source.self, in: context), ModelRelationshipContext(base: context, source: .record(source)))
    }

    func createDestinationInstances(for source: DynamicObject, in context: InstanceMigrationContext) throws {
        try instances(try context.sourceReader.model(Source.self, from: source), ModelMigrationContext(base: context))
    }

    func createRelationships(for source: DynamicObject, in context: RelationshipMigrationContext) throws {
        guard let relationships else { return try context.linkInferred(for: source) }
        try relationships(try context.sourceReader.model(Source.self, from: source),
                          ModelRelationshipContext(base: context, source: .object(source)))
    }
}

/// What a typed mapping can do in the instance pass: insert values of the destination version's model types
/// made from the current source value, and link them.
public struct ModelMigrationContext {
    /// The dynamic context underneath (lookup tables, inferred values, destination objects by name).
    public let base: InstanceMigrationContext

    /// Inserts a value of a destination model type made from the current source object. With
    /// `keepingSourceID`, it takes the source object's identifier (at most one object per entity may).
    @discardableResult
    public func insert<T: EntityModel>(_ value: T, keepingSourceID: Bool = false) throws -> ObjectID {
        try base.insertModel(value, keepingSourceID: keepingSourceID)
    }

    /// Links destination object `id` to `target` through the relationship `relationship` names (the inverse is
    /// linked too). Both objects must exist: objects this mapping created, or objects of entities the stage
    /// does not rebuild.
    public func link<T: EntityModel, V>(_ id: ObjectID, _ relationship: KeyPath<T, V>, to target: ObjectID) throws {
        try base.link(id, T.self, relationship, to: target)
    }

    /// The value the inferred mapping makes of the current source object as the destination model type `T`
    /// (the source's values through renames, widenings and defaults): change what differs and insert it.
    public func inferred<T: EntityModel>(_ type: T.Type) throws -> T {
        guard let source = base.current else { throw StoreError.typeMismatch(expected: "a current source object", actual: "none") }
        let object = try base.inferredObject(for: try source.object())
        try object.binding.verifyModel(T.self)
        var reader = ModelReader(values: object.values, id: object.id, binding: object.binding, context: nil)
        return try T(from: &reader)
    }

    /// The object of a lookup table for `key`, inserting `make()` (not associated with the source) when the
    /// table has none: one `Author` per distinct name.
    public func lookupOrInsert<T: EntityModel>(_ table: String, key: Value, _ make: () throws -> T) throws -> ObjectID {
        if let existing = try base.lookup(table, key) { return existing }
        let binding = try base.allowedBinding(T.entityName)
        try binding.verifyModel(T.self)
        let id = ObjectID(rawValue: try base.writer.insertModel(try make(), binding: binding, id: nil))
        try base.setLookup(table, key, to: id)
        return id
    }

    /// The identifiers of the source objects linked to `source` through the source model's `relationship`.
    public func related<S: EntityModel, V>(_ source: S, _ relationship: KeyPath<S, V>) throws -> [ObjectID] {
        guard let id = source.objectID else { return [] }
        return try base.sourceReader.related(id, of: S.entityName, try S.requirePropertyName(relationship))
    }

    /// The destination objects of model type `T` made so far from source object `source` (by this stage's
    /// mappings that already ran, or that kept its identifier).
    public func destinations<T: EntityModel>(for source: ObjectID, as type: T.Type) throws -> [ObjectID] {
        try base.destinations(for: source, entity: T.entityName)
    }

    /// A destination object already written by the stage, as a value of the destination model type `T`.
    public func destination<T: EntityModel>(_ type: T.Type, id: ObjectID) throws -> T? {
        try base.writer.fetchModel(T.self, id: id, binding: try base.runner.destination.entity(T.entityName))
    }
}

/// What a typed mapping can do in the relationship pass: find the destination objects made from any source
/// object, and link them.
public struct ModelRelationshipContext {
    /// The dynamic context underneath.
    public let base: RelationshipMigrationContext
    let source: CurrentSource

    /// Translates the current source object's links as the inferred mapping would (what a mapping without a
    /// relationship closure does).
    public func linkInferred() throws {
        try base.linkInferred(for: try source.object())
    }

    /// The destination object a lookup table holds for `key`.
    public func lookup(_ table: String, _ key: Value) throws -> ObjectID? {
        try base.lookup(table, key)
    }

    /// The destination objects of model type `T` made from source object `source`.
    public func destinations<T: EntityModel>(for source: ObjectID, as type: T.Type) throws -> [ObjectID] {
        try base.destinations(for: source, entity: T.entityName)
    }

    /// Links destination object `id` to `target` through `relationship` (and the inverse).
    public func link<T: EntityModel, V>(_ id: ObjectID, _ relationship: KeyPath<T, V>, to target: ObjectID) throws {
        try base.link(id, T.self, relationship, to: target)
    }

    /// The identifiers of the source objects linked to `source` through the source model's `relationship`.
    public func related<S: EntityModel, V>(_ source: S, _ relationship: KeyPath<S, V>) throws -> [ObjectID] {
        guard let id = source.objectID else { return [] }
        return try base.sourceReader.related(id, of: S.entityName, try S.requirePropertyName(relationship))
    }
}
