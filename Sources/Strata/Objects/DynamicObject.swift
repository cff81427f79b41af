/// An object read or written through the dynamic API: its entity, its ID and its attribute values by name.
///
/// A `DynamicObject` is a value: changing it changes nothing in the store until it is passed to
/// ``WriteContext/update(_:)``. Relationships are read and changed through the context
/// (``ReadContext/related(_:_:)``, ``WriteContext/link(_:_:to:)``).
///
/// ```swift
/// var post = try context.object(id, of: "Post")!
/// post["hexColor"] = "#FF0000"
/// try context.update(post)
/// ```
public struct DynamicObject: Sendable {
    /// The object's identity.
    public let id: ObjectID
    let binding: EntityBinding
    var values: [Value]
    /// Names assigned through the subscript that are not attributes of the entity; reported on update.
    private(set) var unknownAssignments: [String] = []

    init(id: ObjectID, binding: EntityBinding, values: [Value]) {
        self.id = id
        self.binding = binding
        self.values = values
    }

    /// The name of the object's entity.
    public var entityName: String { binding.name }

    /// The names of the entity's attributes, in declaration order.
    public var attributeNames: [String] { binding.attributeNames }

    /// The value of an attribute; ``Value/null`` when it is not set or is not an attribute of the entity
    /// (use ``value(for:)`` to be told about a wrong name).
    ///
    /// Setting a value converts number literals exactly to the attribute's type (`post["count"] = 3` for an
    /// Int16 attribute). A value of the wrong type, or a wrong name, makes ``WriteContext/update(_:)`` throw.
    public subscript(name: String) -> Value {
        get {
            guard let i = position(of: name) else { return .null }
            return values[i]
        }
        set {
            guard let i = position(of: name) else {
                unknownAssignments.append(name)
                return
            }
            // A value of the attribute's own type (the common case) is stored as it is; others are converted
            // where that is exact (the write checks what is left).
            if TypeCode.code(of: newValue) == binding.attributeCodes[i] {
                values[i] = newValue
            } else {
                values[i] = binding.attributeTypes[i].coerce(newValue) ?? newValue
            }
        }
    }

    @inline(__always)
    private func position(of name: String) -> Int? { binding.position(of: name) }

    /// The value of an attribute.
    /// - Throws: ``StoreError/unknownAttribute(entity:name:)``.
    public func value(for name: String) throws -> Value {
        values[try binding.attribute(name)]
    }

    /// Every attribute's value, by name.
    public var attributeValues: [String: Value] {
        var out: [String: Value] = [:]
        for (i, name) in binding.attributeNames.enumerated() { out[name] = values[i] }
        return out
    }

    func checkAssignments() throws {
        if let name = unknownAssignments.first { throw StoreError.unknownAttribute(entity: binding.name, name: name) }
    }
}

extension DynamicObject: Hashable {
    public static func == (lhs: DynamicObject, rhs: DynamicObject) -> Bool {
        lhs.id == rhs.id && lhs.binding.name == rhs.binding.name && lhs.values == rhs.values
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(binding.name)
    }
}

extension DynamicObject: CustomStringConvertible {
    public var description: String {
        let fields = zip(binding.attributeNames, values).map { "\($0): \($1)" }.joined(separator: ", ")
        return "\(binding.name) \(id) { \(fields) }"
    }
}
