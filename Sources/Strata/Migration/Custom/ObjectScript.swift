/// A per-object script of a custom stage, run on the stage's *intermediate model*.
///
/// Some changes cannot be inferred: a required attribute added without a default, or an attribute whose type
/// changes (including a Codable attribute whose shape changes). For these Strata builds an intermediate
/// model between the stage's source and destination, in which
/// - an added required attribute exists but is optional (null until the script sets it);
/// - a changed attribute exists twice: under its own name with its **new** type (null until the script sets
///   it), and under ``previousValueName(of:)`` (`__previous_<name>`) with its old type and old value.
///
/// The script runs once per object of its entity, in bounded batches; then the store migrates lightweight
/// to the destination, which must find every required attribute set. The script's completion is committed
/// with its last batch, so it never runs twice on an object, even across crashes.
///
/// ```swift
/// ObjectScript("Note") { note in
///     let old = try note.previousValue("position").decode(Point2D.self)
///     note["position"] = try .encoding(Point3D(x: old.x, y: old.y, z: 0))
/// }
/// ```
public struct ObjectScript: Sendable {
    /// The destination entity whose objects the script visits.
    public let entity: String
    /// The script: changes the object in place.
    public let body: @Sendable (inout DynamicObject) throws -> Void

    public init(_ entity: String, _ body: @escaping @Sendable (inout DynamicObject) throws -> Void) {
        self.entity = entity
        self.body = body
    }

    /// The name under which the intermediate model keeps the old value of a changed attribute.
    public static func previousValueName(of attribute: String) -> String { "__previous_" + attribute }
}

extension DynamicObject {
    /// In an ``ObjectScript``, the old value of an attribute whose type changes in the stage.
    public func previousValue(_ attribute: String) throws -> Value {
        try value(for: ObjectScript.previousValueName(of: attribute))
    }
}
