/// A Swift type whose values are stored as objects of one entity, declared once with the `@Entity` macro
/// of `StrataModels`, which generates this conformance from the type's stored properties: the schema's
/// ``Entity``, and code that reads and writes a record's fields directly by slot.
///
/// ```swift
/// import StrataModels
///
/// @Entity struct Post {
///     @Field(.unique) var postID: UUID
///     @Field(originalName: "color") var hexColor: String
///     var content: String
///     @Field(.indexed) var date: Date
///     var softDelete: Bool = false
///     @Related(inverse: \Section.post, deleteRule: .cascade) var sections: [ObjectID] = []
/// }
///
/// try store.write { try $0.insert(Post(postID: UUID(), hexColor: "#FF0000", content: "Hi", date: .now)) }
/// let recent = try store.read { try $0.objects(Post.self).filter(\.softDelete == false).sorted(by: \.date).fetch() }
/// ```
///
/// The members below are generated; write them by hand only for a type the macro cannot describe.
///
/// ## Topics
/// ### Generated members
/// - ``entityName``
/// - ``entity``
/// - ``propertyName(for:)``
/// - ``objectID``
/// - ``init(from:)``
/// - ``write(to:)``
/// - ``Record``
public protocol EntityModel: SendableMetatype {
    /// The model's borrowed view of a stored object (generated: a property per stored property, read in place;
    /// see ``ModelRecordView``). Hand-written models get ``ModelRecord``, which reads properties by key path.
    associatedtype Record: ModelRecordView = ModelRecord<Self> where Record.Model == Self
    /// The name of the entity in the schema (the type's name unless `@Entity("Name")` says otherwise).
    static var entityName: String { get }
    /// The entity, exactly as the schema DSL would declare it: same JSON, same version hash.
    static var entity: Entity { get }
    /// The name of the attribute or relationship a key path of this type reads, or nil.
    static func propertyName(for keyPath: AnyKeyPath) -> String?
    /// The object's identifier: set when the value was read from a store or inserted into one.
    var objectID: ObjectID? { get set }
    /// Reads a value from a stored object (generated: one typed read per stored property, by slot).
    init(from record: inout ModelReader) throws
    /// Writes the value's attributes and relationships (generated: one typed write per property, by slot).
    func write(to record: inout ModelWriter) throws
}

extension EntityModel {
    /// The attribute or relationship name of `keyPath`.
    /// - Throws: ``StoreError/Code-swift.struct/unknownAttribute`` when the key path is not a stored property.
    static func requirePropertyName(_ keyPath: AnyKeyPath) throws -> String {
        guard let name = propertyName(for: keyPath) else {
            throw StoreError.unknownAttribute(entity: entityName, name: "\(keyPath)")
        }
        return name
    }
}
