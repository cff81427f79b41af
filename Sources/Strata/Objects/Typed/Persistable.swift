/// A Swift type stored as objects of an entity, through `Codable`: the earlier typed API, deprecated in favour of
/// ``EntityModel`` (`@Entity` models), the one typed API. It keeps working until a later major version.
///
/// Coding keys name the entity's attributes; a property named `id` of type `ObjectID?` receives the object's
/// identifier and is not stored; properties of type `ObjectID?` or `[ObjectID]` whose key names a relationship
/// read and set its links. Nested `Codable` values are stored in ``AttributeType/codable(_:)`` attributes.
///
/// ```swift
/// struct Post: Persistable {
///     static let entityName = "Post"
///     var id: ObjectID?
///     var postID: UUID
///     var hexColor: String
///     var date: Date
///     var sections: [ObjectID] = []
/// }
///
/// try store.write { try $0.insert(Post(postID: UUID(), hexColor: "#FF0000", date: .now)) }
/// let posts = try store.read { try $0.objects(Post.self).fetch() }
/// ```
///
/// The typed API maps values through `Codable`, which costs more per object than the dynamic API; bulk
/// loaders that need the last bit of speed use ``WriteContext/insert(_:orderedValues:)``.
@available(*, deprecated, message: "Declare models with @Entity (import StrataModels): the one typed API — checked by the compiler, read and written in place, queried with key paths. Codable values stay storable as @Field(.codable) attributes.")
public protocol Persistable: Codable, Sendable {
    /// The entity the type's objects belong to.
    static var entityName: String { get }
}

extension WriteContext {
    /// Inserts a value as a new object. Its `id` property, if any, is ignored.
    /// - Returns: the new object's identifier.
    @available(*, deprecated, message: "Declare models with @Entity (import StrataModels): the one typed API — checked by the compiler, read and written in place, queried with key paths. Codable values stay storable as @Field(.codable) attributes.")
    @discardableResult
    public func insert<T: Persistable>(_ value: T) throws -> ObjectID {
        let binding = try binding(T.entityName)
        let encoded = try TypedEncoding.encode(value, binding: binding)
        var row = encoded.values
        let id = try insertRow(binding, &row, id: nil)
        for (relationship, targets) in encoded.links {
            let r = binding.relationships[relationship]
            for t in targets { try link(binding, r, id, t) }
        }
        return ObjectID(rawValue: id)
    }

    /// Stores a value as the object `id` (attributes, and the relationships the value has properties for).
    @available(*, deprecated, message: "Declare models with @Entity (import StrataModels): the one typed API — checked by the compiler, read and written in place, queried with key paths. Codable values stay storable as @Field(.codable) attributes.")
    public func update<T: Persistable>(_ value: T, id: ObjectID) throws {
        let binding = try binding(T.entityName)
        let encoded = try TypedEncoding.encode(value, binding: binding)
        guard var object = try object(id.rawValue, binding) else {
            throw StoreError.objectNotFound(entity: binding.name, id: id)
        }
        object.values = encoded.values
        try update(object)
        for (relationship, targets) in encoded.links {
            try setRelated(object, binding.relationships[relationship].name, to: targets.map(ObjectID.init(rawValue:)))
        }
    }
}

extension ReadContext {
    /// The object `id` as a value of `T`, or nil.
    @available(*, deprecated, message: "Declare models with @Entity (import StrataModels): the one typed API — checked by the compiler, read and written in place, queried with key paths. Codable values stay storable as @Field(.codable) attributes.")
    public func fetch<T: Persistable>(_ type: T.Type, id: ObjectID) throws -> T? {
        let binding = try binding(T.entityName)
        guard let object = try object(id.rawValue, binding) else { return nil }
        return try TypedDecoding.decode(T.self, from: object, context: self)
    }

    /// The objects of `T`'s entity, as a lazy typed query.
    @available(*, deprecated, message: "Declare models with @Entity (import StrataModels): the one typed API — checked by the compiler, read and written in place, queried with key paths. Codable values stay storable as @Field(.codable) attributes.")
    public func objects<T: Persistable>(_ type: T.Type) throws -> TypedQuery<T> {
        TypedQuery(query: try objects(T.entityName), context: self)
    }

    /// Decodes a dynamic object as a value of `T`.
    @available(*, deprecated, message: "Declare models with @Entity (import StrataModels): the one typed API — checked by the compiler, read and written in place, queried with key paths. Codable values stay storable as @Field(.codable) attributes.")
    public func decode<T: Persistable>(_ type: T.Type, from object: DynamicObject) throws -> T {
        try TypedDecoding.decode(T.self, from: object, context: self)
    }
}

/// A lazy query whose results are decoded as `T`. Build it with the dynamic query's operations
/// (``ObjectQuery``) through ``query``.
@available(*, deprecated, message: "Declare models with @Entity (import StrataModels): the one typed API — checked by the compiler, read and written in place, queried with key paths. Codable values stay storable as @Field(.codable) attributes.")
public struct TypedQuery<T: Persistable> {
    /// The dynamic query underneath (filter, sort and limit it, then wrap it again with ``init(_:context:)``).
    public var query: ObjectQuery
    let context: ReadContext

    init(query: ObjectQuery, context: ReadContext) {
        self.query = query
        self.context = context
    }

    /// A typed query over a dynamic query.
    public init(_ query: ObjectQuery, context: ReadContext) {
        self.query = query
        self.context = context
    }

    /// Keeps the values for which `isIncluded` returns true.
    public func filter(_ isIncluded: @escaping (T) throws -> Bool) -> TypedQuery<T> {
        let context = context
        return TypedQuery(query: query.filter { try isIncluded(try TypedDecoding.decode(T.self, from: $0, context: context)) }, context: context)
    }

    public func limit(_ count: Int) -> TypedQuery<T> { TypedQuery(query: query.limit(count), context: context) }
    public func sorted(by attribute: String, ascending: Bool = true) throws -> TypedQuery<T> {
        TypedQuery(query: try query.sorted(by: attribute, ascending: ascending), context: context)
    }

    /// Calls `body` with each value, streaming from a cursor when the query is not sorted.
    public func forEach(_ body: (T) throws -> Void) throws {
        try query.forEach { try body(try TypedDecoding.decode(T.self, from: $0, context: context)) }
    }

    /// The values, as an array.
    public func fetch() throws -> [T] {
        var out: [T] = []
        try forEach { out.append($0) }
        return out
    }

    /// The number of matching objects.
    public func count() throws -> Int { try query.count() }
}
