import Foundation

/// The JSON Lines form of objects (documented in <doc:ImportingAndExporting>):
///
/// ```json
/// {"entity":"Post","id":12,"attributes":{"title":"Hello","views":3},"relationships":{"author":7,"tags":[3,4]}}
/// ```
///
/// ``parse(_:schema:only:)`` is the general reading of a line, through `JSONDecoder`, whose answer and
/// error message are every line's; ``ObjectLineParser`` reads the common lines faster, to the same answer.
enum ObjectLine {
    /// An object read from a line, typed by the store's model.
    struct Parsed: Sendable {
        /// The entity's position in the model.
        var entityIndex: Int
        var id: ObjectID?
        /// Every attribute's value in declaration order: those the line gives, the others' defaults (or null).
        var values: [Value]
        /// Links by relationship position in the entity, in the order of the relationships' names.
        var links: [(relationship: Int, targets: [UInt64])]
    }

    /// The keys of a line.
    static let keys: Set<String> = ["entity", "id", "attributes", "relationships"]

    /// Reads a line, typed by `schema`. With `only`, lines without an entity are objects of `only`, and
    /// lines of other entities return nil (skipped).
    static func parse(_ line: Data, schema: Schema, only: String?) throws(LineProblem) -> Parsed? {
        let json: JSONValue
        do {
            json = try JSONValue.parse(line)
        } catch {
            throw LineProblem("not valid JSON (\(jsonReason(line)))")
        }
        guard case .object(let members) = json else {
            throw LineProblem("a line must be a JSON object such as {\"entity\":\"Post\",\"attributes\":{...}}")
        }
        for key in members.keys where !keys.contains(key) {
            throw LineProblem("unknown key \"\(key)\" (a line has \"entity\", \"id\", \"attributes\" and \"relationships\")")
        }
        let entityName: String
        switch members["entity"] {
        case .string(let name)?: entityName = name
        case nil, .null?:
            guard let only else { throw LineProblem("no \"entity\"; give one, or import with --entity NAME") }
            entityName = only
        default: throw LineProblem("\"entity\" must be a string")
        }
        if let only, entityName != only { return nil }
        guard let entityIndex = schema.entities.firstIndex(where: { $0.name == entityName }) else {
            throw LineProblem("the store's model has no entity named \(entityName) (it has \(schema.entities.map(\.name).joined(separator: ", ")))")
        }
        let entity = schema.entities[entityIndex]
        var id: ObjectID? = nil
        if let raw = members["id"], raw != .null {
            guard let n = objectID(raw) else { throw LineProblem("\"id\" must be a positive integer, got \(JSONText.short(raw))") }
            id = ObjectID(rawValue: n)
        }
        return Parsed(entityIndex: entityIndex, id: id,
                      values: try attributes(members["attributes"], of: entity),
                      links: try links(members["relationships"], of: entity))
    }

    /// Every attribute's value in declaration order: those of `json`, the others' defaults (or null).
    private static func attributes(_ json: JSONValue?, of entity: Entity) throws(LineProblem) -> [Value] {
        var values = entity.attributes.map { $0.defaultValue ?? .null }
        switch json {
        case nil, .null?: break
        case .object(let attributes)?:
            for (name, raw) in attributes {
                guard let position = entity.attributes.firstIndex(where: { $0.name == name }) else {
                    throw LineProblem("\(entity.name) has no attribute named \"\(name)\"")
                }
                do {
                    values[position] = try ValueJSON.value(from: raw, type: entity.attributes[position].type)
                } catch {
                    throw LineProblem("attribute \(name): \(error)")
                }
            }
        default: throw LineProblem("\"attributes\" must be an object")
        }
        return values
    }

    /// The links of `json`, by relationship position, in the order of the relationships' names.
    private static func links(_ json: JSONValue?, of entity: Entity) throws(LineProblem) -> [(relationship: Int, targets: [UInt64])] {
        var links: [(relationship: Int, targets: [UInt64])] = []
        switch json {
        case nil, .null?: break
        case .object(let relationships)?:
            for (name, raw) in relationships.sorted(by: { $0.key < $1.key }) {
                guard let position = entity.relationships.firstIndex(where: { $0.name == name }) else {
                    throw LineProblem("\(entity.name) has no relationship named \"\(name)\"")
                }
                let relationship = entity.relationships[position]
                var targets: [UInt64] = []
                switch raw {
                case .null: break
                case .array(let items):
                    for item in items {
                        guard let t = objectID(item) else {
                            throw LineProblem("relationship \(name): object IDs are positive integers, got \(JSONText.short(item))")
                        }
                        targets.append(t)
                    }
                default:
                    guard let t = objectID(raw) else {
                        throw LineProblem("relationship \(name): expected an object ID\(relationship.isToMany ? " or an array of them" : "") or null, got \(JSONText.short(raw))")
                    }
                    targets = [t]
                }
                if !relationship.isToMany && targets.count > 1 {
                    throw LineProblem("relationship \(name) is to-one but lists \(targets.count) objects")
                }
                if !targets.isEmpty { links.append((position, targets)) }
            }
        default: throw LineProblem("\"relationships\" must be an object")
        }
        return links
    }

    static func objectID(_ json: JSONValue) -> UInt64? {
        switch json {
        case .integer(let i) where i > 0: return UInt64(i)
        case .number(let d) where d > 0: return UInt64(exactly: d)
        default: return nil
        }
    }

    /// Why `line` is not JSON, in the words of JSONSerialization (JSONDecoder gives no detail).
    private static func jsonReason(_ line: Data) -> String {
        do {
            _ = try JSONSerialization.jsonObject(with: line, options: [.fragmentsAllowed])
        } catch {
            if let detail = (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String {
                return detail.hasSuffix(".") ? String(detail.dropLast()) : detail
            }
        }
        return "a number out of range, or invalid text"
    }
}

/// Why a line (or the input, or the links' temporary file) cannot be imported: one line of text.
struct LineProblem: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}
