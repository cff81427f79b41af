import Foundation
import Strata

/// Writes JSON text for `JSONValue`s, byte for byte the same for the same value.
///
/// Object keys are sorted; strings keep non-ASCII characters as UTF-8 and escape only what JSON requires;
/// a floating-point number that is an integer within Int64's range is written as that integer, so that
/// reading the text back (which yields an integer) and writing it again gives the same bytes.
enum JSONText {
    static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .integer(let i): out.append(contentsOf: String(i).utf8)
        case .number(let d): writeNumber(d, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(members[key] ?? .null, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func writeNumber(_ d: Double, into out: inout [UInt8]) {
        if !d.isFinite {
            // Not representable in JSON; ValueJSON never produces these (it writes "nan", "inf").
            out.append(contentsOf: "null".utf8)
        } else if let i = Int64(exactly: d) {
            out.append(contentsOf: String(i).utf8)
        } else {
            // Swift's description is the shortest text that reads back as the same Double.
            out.append(contentsOf: d.description.utf8)
        }
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0x08: out.append(contentsOf: "\\b".utf8)
            case 0x0C: out.append(contentsOf: "\\f".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}

/// The JSON Lines form of objects (documented in `CommandLineTool.md`):
///
/// ```json
/// {"entity":"Post","id":12,"attributes":{"title":"Hello","views":3},"relationships":{"author":7,"tags":[3,4]}}
/// ```
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
        for key in members.keys where !["entity", "id", "attributes", "relationships"].contains(key) {
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
        do {
            guard let entity = schema.entity(named: entityName) else {
                throw LineProblem("the store's model has no entity named \(entityName) (it has \(schema.entities.map(\.name).joined(separator: ", ")))")
            }
            var id: ObjectID? = nil
            if let raw = members["id"], raw != .null {
                guard let n = objectID(raw) else { throw LineProblem("\"id\" must be a positive integer, got \(JSONText.short(raw))") }
                id = ObjectID(rawValue: n)
            }
            var values = entity.attributes.map { $0.defaultValue ?? .null }
            switch members["attributes"] {
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
            var links: [(relationship: Int, targets: [UInt64])] = []
            switch members["relationships"] {
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
            return Parsed(entityIndex: schema.entities.firstIndex { $0.name == entity.name } ?? 0, id: id, values: values, links: links)
        }
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

/// Why a line cannot be imported.
struct LineProblem: Error {
    var reason: String
    init(_ reason: String) { self.reason = reason }
}

extension JSONText {
    /// A short text form of a value for messages.
    static func short(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        write(value, into: &out)
        let text = String(decoding: out, as: UTF8.self)
        return text.count > 60 ? String(text.prefix(57)) + "..." : text
    }
}
