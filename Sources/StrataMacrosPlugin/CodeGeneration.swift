import SwiftSyntax

/// The source the `@Entity` macro generates from a ``ModelDescription``.
extension ModelDescription {
    /// Slots (attribute positions in the entity) and relationship positions, in declaration order.
    var slots: [(slot: Int, attribute: AttributeDescription)] { Array(attributes.enumerated().map { ($0.offset, $0.element) }) }

    /// The members added inside the struct (where the struct's sibling types are in scope).
    func members() -> [DeclSyntax] {
        var out: [DeclSyntax] = []
        if !declaresObjectID {
            out.append("""
            /// The object's identifier, once the value was read from a store or inserted into one.
            \(raw: access)var objectID: Strata.ObjectID? = nil
            """)
        }
        if access == "public " && !declaresInitializer { out.append(memberwiseInitializer()) }
        out.append("\(raw: access)static var entityName: String { \(raw: entityName) }")
        out.append("\(raw: access)static let entity: Strata.Entity = \(raw: entityExpression())")
        out.append(propertyNameFunction())
        out.append(writeFunction())
        out.append(recordView())
        return out
    }

    /// The model's borrowed view (`Strata.ModelRecordView`): a throwing property per stored property, read in place
    /// (strings as `Strata.BorrowedString`), and `model()` for an owned value.
    func recordView() -> DeclSyntax {
        var lines = [
            "/// A stored `\(typeName)` read in place: each property is decoded when it is read (strings are borrowed,",
            "/// not copied). Valid only inside the closure that receives it (see `Strata.ModelQuery.forEachRecord(_:)`).",
            "\(access)struct Record: Strata.ModelRecordView {",
            "    \(access)typealias Model = \(typeName)",
            "    private let _access: Strata.ModelRecordAccess",
            "    \(access)init(access: Strata.ModelRecordAccess) { self._access = access }",
            "    /// The object's identifier.",
            "    \(access)var objectID: Strata.ObjectID { _access.objectID }",
        ]
        for (slot, a) in slots where !a.isTransient {
            let type: String, call: String
            switch a.storage {
            case .scalar(let swiftType) where swiftType == "String" || swiftType == "Swift.String":
                type = a.isOptional ? "Strata.BorrowedString?" : "Strata.BorrowedString"
                call = a.isOptional ? "optionalString" : "string"
            case .scalar(let swiftType):
                type = a.isOptional ? "\(swiftType)?" : swiftType
                call = "read"
            case .codable(_, let swiftType):
                type = a.isOptional ? "\(swiftType)?" : swiftType
                call = a.isOptional ? "optionalCodable" : "codable"
            case .raw(let swiftType):
                type = a.isOptional ? "\(swiftType)?" : swiftType
                call = a.isOptional ? "optionalRaw" : "raw"
            }
            lines.append("    \(access)var \(a.name): \(type) { get throws { try _access.\(call)(\(slot)) } }")
        }
        for (position, r) in relationships.enumerated() {
            let type = r.isToMany ? "[Strata.ObjectID]" : "Strata.ObjectID?"
            lines.append("    \(access)var \(r.name): \(type) { get throws { try _access.\(r.isToMany ? "related" : "relatedOne")(\(position)) } }")
        }
        if !attributes.contains(where: { $0.name == "model" }) && !relationships.contains(where: { $0.name == "model" }) {
            lines.append("    /// The object as an owned value.")
            lines.append("    \(access)func model() throws -> \(typeName) { try _access.model(\(typeName).self) }")
        }
        lines.append("}")
        return DeclSyntax(stringLiteral: lines.joined(separator: "\n"))
    }

    /// A public memberwise initializer for a public struct (Swift's implicit one is internal): every stored
    /// property in declaration order, with its initial value (or nil for optionals) as the default.
    func memberwiseInitializer() -> DeclSyntax {
        var properties = storedProperties
        if !declaresObjectID {
            properties.append(StoredProperty(name: "objectID", type: "Strata.ObjectID?", initialValue: "nil", isOptional: true, isLet: false))
        }
        let parameters = properties.filter { !($0.isLet && $0.initialValue != nil) }.map { p -> String in
            let value = p.initialValue ?? (p.isOptional && !p.isLet ? "nil" : nil)
            return "\(p.name): \(p.type)" + (value.map { " = \($0)" } ?? "")
        }
        var lines = ["public init(" + parameters.joined(separator: ", ") + ") {"]
        for p in properties where !(p.isLet && p.initialValue != nil) { lines.append("    self.\(p.name) = \(p.name)") }
        lines.append("}")
        return DeclSyntax(stringLiteral: lines.joined(separator: "\n"))
    }

    /// The `Entity(...)` expression: what the schema DSL would declare.
    func entityExpression() -> String {
        var lines: [String] = []
        lines.append("Strata.Entity(")
        lines.append("    \(entityName),")
        func list(_ label: String, _ items: [String]) {
            guard !items.isEmpty else { return lines.append("    \(label): [],") }
            lines.append("    \(label): [")
            for item in items { lines.append("        \(item),") }
            lines.append("    ],")
        }
        list("attributes", attributes.map(attributeExpression))
        list("relationships", relationships.map(relationshipExpression))
        lines.append("    renamingIdentifier: \(originalName ?? "nil"),")
        lines.append("    versionHashModifier: \(hashModifier ?? "nil")")
        lines.append(")")
        return lines.joined(separator: "\n")
    }

    private func attributeExpression(_ a: AttributeDescription) -> String {
        let type: String
        switch a.storage {
        case .scalar(let swiftType): type = "Strata.ModelSupport.attributeType(of: \(swiftType).self)"
        case .codable(let shape, _): type = ".codable(\(shape))"
        case .raw(let swiftType): type = "Strata.ModelSupport.rawAttributeType(of: \(swiftType).self)"
        }
        var arguments = ["\"\(a.name)\"", type]
        if a.isOptional { arguments.append("isOptional: true") }
        if let d = a.defaultValue { arguments.append("defaultValue: \(d)") }
        if a.isTransient { arguments.append("isTransient: true") }
        if a.isIndexed { arguments.append("isIndexed: true") }
        if a.isUnique { arguments.append("isUnique: true") }
        if let o = a.originalName { arguments.append("renamingIdentifier: \(o)") }
        if let h = a.hashModifier { arguments.append("versionHashModifier: \(h)") }
        if a.preservesValueOnDeletion { arguments.append("preservesValueOnDeletion: true") }
        let attribute = "Strata.Attribute(" + arguments.joined(separator: ", ") + ")"
        if case .codable(_, let swiftType) = a.storage {
            // The type's `CodableShapeDescribing` conformance, if it has one, gives the attribute its shape.
            return "Strata.ModelSupport.shaped(\(attribute), of: \(swiftType).self)"
        }
        return attribute
    }

    private func relationshipExpression(_ r: RelationshipDescription) -> String {
        let inverse = r.inverseIsChecked
            ? "\"\(r.inverse)\""
            : "Strata.ModelSupport.inverse(\"\(r.inverse)\", \\\(r.destinationType).\(r.inverse))"
        var arguments = ["\"\(r.name)\"", "to: \(r.destinationType).entityName", "inverse: \(inverse)"]
        if r.isToMany { arguments.append("toMany: true") }
        if let d = r.deleteRule { arguments.append("deleteRule: \(d)") }
        if let m = r.minCount { arguments.append("minCount: \(m)") }
        if let m = r.maxCount { arguments.append("maxCount: \(m)") }
        if let o = r.originalName { arguments.append("renamingIdentifier: \(o)") }
        if let h = r.hashModifier { arguments.append("versionHashModifier: \(h)") }
        return "Strata.Relationship(" + arguments.joined(separator: ", ") + ")"
    }

    private func propertyNameFunction() -> DeclSyntax {
        var lines = ["\(access)static func propertyName(for keyPath: AnyKeyPath) -> String? {"]
        for a in attributes { lines.append("    if keyPath == \\Self.\(a.name) as AnyKeyPath { return \"\(a.name)\" }") }
        for r in relationships { lines.append("    if keyPath == \\Self.\(r.name) as AnyKeyPath { return \"\(r.name)\" }") }
        lines.append("    return nil")
        lines.append("}")
        return DeclSyntax(stringLiteral: lines.joined(separator: "\n"))
    }

    private func writeFunction() -> DeclSyntax {
        var lines = ["\(access)func write(to record: inout Strata.ModelWriter) throws {"]
        for (slot, a) in slots where !a.isTransient {
            switch a.storage {
            case .scalar: lines.append("    try record.write(\(slot), self.\(a.name))")
            case .codable: lines.append("    try record.writeCodable(\(slot), self.\(a.name))")
            case .raw: lines.append("    try record.writeRaw(\(slot), self.\(a.name))")
            }
        }
        for (position, r) in relationships.enumerated() {
            lines.append("    record.relate(\(position), self.\(r.name))")
        }
        lines.append("}")
        return DeclSyntax(stringLiteral: lines.joined(separator: "\n"))
    }

    /// The initializer that reads a stored object (in an extension, so that the struct keeps its memberwise
    /// initializer; it names no type, so that nothing has to resolve outside the struct's scope).
    ///
    /// Every field is read into a local first (its type inferred from the property, through
    /// `ModelReader.value(of:_:)`), and the properties are assigned after the last read that can throw: assigned
    /// between reads, the half-built value on the throwing paths made the optimizer copy the whole value once at
    /// the end (its strings retained and released again, per object read).
    func readingInitializer() -> DeclSyntax {
        var lines = ["\(access)init(from record: inout Strata.ModelReader) throws {"]
        var assignments: [String] = []
        for (slot, a) in slots where !a.isTransient {
            let method: String
            switch a.storage {
            case .scalar: method = "read"
            case .codable: method = a.isOptional ? "optionalCodable" : "codable"
            case .raw: method = a.isOptional ? "optionalRaw" : "raw"
            }
            lines.append("    let _\(a.name) = try Strata.ModelReader.value(of: { (object: Self) in object.\(a.name) }) { try record.\(method)(\(slot)) }")
            assignments.append("    self.\(a.name) = _\(a.name)")
        }
        for (position, r) in relationships.enumerated() {
            lines.append("    let _\(r.name) = try Strata.ModelReader.value(of: { (object: Self) in object.\(r.name) }) { try record.\(r.isToMany ? "related" : "relatedOne")(\(position)) }")
            assignments.append("    self.\(r.name) = _\(r.name)")
        }
        lines += assignments
        lines.append("    self.objectID = record.objectID")
        lines.append("}")
        return DeclSyntax(stringLiteral: lines.joined(separator: "\n"))
    }
}
