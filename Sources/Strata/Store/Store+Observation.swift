import Foundation

extension Store {
    /// Observes the result of a query: its value now, then again after every commit that may change it.
    ///
    /// ```swift
    /// for try await posts in store.observe({ try $0.objects(Post.self).filter(\.published == true).fetch() }) {
    ///     render(posts)
    /// }
    /// ```
    ///
    /// The query runs in a read transaction, first when iteration starts and then after each commit — by this
    /// process or by another process on the same store — that touches an entity the query read (or an entity
    /// one of their relationships leads to); commits to other entities wake nobody. Bursts of commits
    /// coalesce into one fetch after the latest. See ``QueryObservation``.
    ///
    /// - Parameter query: reads the value; it runs on a background thread, once per value.
    public func observe<Value: Sendable>(_ query: @escaping @Sendable (ReadContext) throws -> Value) -> QueryObservation<Value> {
        QueryObservation(store: self, query: query)
    }

    /// Observes which objects of `entity` commits insert, update and delete.
    ///
    /// ```swift
    /// for try await changes in try store.changes(of: "Post", properties: ["title"]) {
    ///     list.apply(inserted: changes.inserted, updated: changes.updated, deleted: changes.deleted)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - entity: the entity to observe.
    ///   - properties: the attributes and relationships whose changes count as updates (nil: all of them).
    ///     Updates that change only other properties are not reported and wake nobody.
    /// - Throws: ``StoreError/Code-swift.struct/unknownEntity`` or ``StoreError/Code-swift.struct/unknownAttribute``
    ///   for names the model does not have.
    public func changes(of entity: String, properties: [String]? = nil) throws -> ChangeObservation {
        let binding = try model.entity(entity)
        return ChangeObservation(store: self, binding: binding, properties: try properties.map(binding.mask(of:)))
    }

    /// Observes which objects of a model type commits insert, update and delete; with `properties`, updates
    /// count only when one of those properties changed.
    ///
    /// ```swift
    /// for try await changes in try store.changes(of: Post.self, properties: [\.title, \.tags]) { … }
    /// ```
    public func changes<T: EntityModel>(of type: T.Type, properties: [PartialKeyPath<T>]? = nil) throws -> ChangeObservation {
        try changes(of: T.entityName, properties: try properties?.map { try T.requirePropertyName($0) })
    }

    // MARK: Plumbing

    /// Registers a subscriber with the hub of this store's files.
    func subscribe<S: CommitSubscriber>(_ subscriber: S) throws -> Subscription<S> {
        if isClosed { throw StoreError.closed }
        let hub = environment.observations
        let token = hub.register(subscriber, store: ObjectIdentifier(self), meta: model.meta, environment: environment)
        // Closed while registering: the close may have missed this registration.
        if isClosed {
            hub.unregister(token)
            throw StoreError.closed
        }
        return Subscription(subscriber: subscriber, hub: hub, token: token)
    }

    /// Runs a query on a background thread and returns its value with the entities it read.
    func readTracking<Value: Sendable>(_ query: @escaping @Sendable (ReadContext) throws -> Value) async throws -> (Value, Set<UInt32>) {
        try await read { context in
            context.region = []
            let value = try query(context)
            return (value, context.region ?? [])
        }
    }
}
