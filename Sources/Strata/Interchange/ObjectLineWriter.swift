import Foundation

/// Writes the lines of one entity's objects straight from record views into a reusable byte buffer: no
/// `DynamicObject`, no `JSONValue`, no `String` per text (texts are escaped from the record's bytes).
///
/// The line is the documented object form (see ``ObjectLine``): entity, ID, every attribute in declaration
/// order (null included), every relationship in declaration order (to-one: an ID or null; to-many: IDs in
/// ascending order). Each value's text is exactly `JSONText.write(ValueJSON.json(for: value))`'s (the tests
/// compare exports before and after a round trip); Codable and other attributes take that general path.
struct ObjectLineWriter {
    private enum Kind {
        case string, uuid, date, integer, general
    }

    private let entity: Entity
    private let attributeNames: [String]
    private let relationshipNames: [String]
    private let relationshipToMany: [Bool]
    /// `{"entity":"Post","id":`
    private let prefix: [UInt8]
    /// `"name":` for each attribute, with a leading comma after the first.
    private let attributeKeys: [[UInt8]]
    private let kinds: [Kind]
    private let relationshipKeys: [[UInt8]]

    init(entity: Entity) {
        self.entity = entity
        attributeNames = entity.attributes.map(\.name)
        relationshipNames = entity.relationships.map(\.name)
        relationshipToMany = entity.relationships.map(\.isToMany)
        var prefix = Array("{\"entity\":".utf8)
        JSONText.writeString(entity.name, into: &prefix)
        prefix.append(contentsOf: ",\"id\":".utf8)
        self.prefix = prefix
        func keys(_ names: [String]) -> [[UInt8]] {
            names.enumerated().map { i, name in
                var key: [UInt8] = i > 0 ? [UInt8(ascii: ",")] : []
                JSONText.writeString(name, into: &key)
                key.append(UInt8(ascii: ":"))
                return key
            }
        }
        attributeKeys = keys(entity.attributes.map(\.name))
        relationshipKeys = keys(entity.relationships.map(\.name))
        kinds = entity.attributes.map { a in
            switch a.type {
            case .string: .string
            case .uuid: .uuid
            case .date: .date
            case .int64, .int32, .int16: .integer
            default: .general
            }
        }
    }

    private static let null = Array("null".utf8)
    private static let attributesKey = Array(",\"attributes\":{".utf8)
    private static let relationshipsKey = Array("},\"relationships\":{".utf8)
    private static let end = Array("}}\n".utf8)

    /// Appends the line of the object `view` shows.
    func write(_ view: ObjectView, context: ReadContext, into out: inout [UInt8]) throws {
        out.append(contentsOf: prefix)
        JSONText.writeInteger(view.id.rawValue, into: &out)
        out.append(contentsOf: Self.attributesKey)
        for i in attributeNames.indices {
            let name = attributeNames[i]
            out.append(contentsOf: attributeKeys[i])
            switch kinds[i] {
            case .string:
                let written = try view.withBytes(of: name) { bytes -> Bool in
                    JSONText.writeString(bytes, into: &out)
                    return true
                }
                if written == nil { out.append(contentsOf: Self.null) }
            case .uuid:
                if let u = try view.uuid(name) { Self.writeUUID(u, into: &out) } else { out.append(contentsOf: Self.null) }
            case .date:
                if let d = try view.date(name) {
                    Self.writeFloating(d.timeIntervalSinceReferenceDate, into: &out)
                } else {
                    out.append(contentsOf: Self.null)
                }
            case .integer:
                if let n = try view.int64(name) { JSONText.writeInteger(n, into: &out) } else { out.append(contentsOf: Self.null) }
            case .general:
                JSONText.write(ValueJSON.json(for: try view.value(name)), into: &out)
            }
        }
        out.append(contentsOf: Self.relationshipsKey)
        for i in relationshipNames.indices {
            out.append(contentsOf: relationshipKeys[i])
            let targets = try context.related(view.id, of: entity.name, relationshipNames[i])
            if relationshipToMany[i] {
                out.append(UInt8(ascii: "["))
                for (k, t) in targets.enumerated() {
                    if k > 0 { out.append(UInt8(ascii: ",")) }
                    JSONText.writeInteger(t.rawValue, into: &out)
                }
                out.append(UInt8(ascii: "]"))
            } else if let t = targets.first {
                JSONText.writeInteger(t.rawValue, into: &out)
            } else {
                out.append(contentsOf: Self.null)
            }
        }
        out.append(contentsOf: Self.end)
    }

    // MARK: Values (the same text as ValueJSON.json(for:) written by JSONText)

    /// A double as `ValueJSON` writes it: `"nan"`, `"inf"`, `"-inf"`, `"-0"` as strings, integers as
    /// integers, others as the shortest text that reads back as the same value.
    static func writeFloating(_ d: Double, into out: inout [UInt8]) {
        if d.isNaN {
            out.append(contentsOf: "\"nan\"".utf8)
        } else if d.isInfinite {
            out.append(contentsOf: (d < 0 ? "\"-inf\"" : "\"inf\"").utf8)
        } else if d == 0 && d.sign == .minus {
            out.append(contentsOf: "\"-0\"".utf8)
        } else {
            JSONText.writeNumber(d, into: &out)
        }
    }

    /// The uppercase form of `UUID.uuidString`.
    static func writeUUID(_ u: UUID, into out: inout [UInt8]) {
        let hex: StaticString = "0123456789ABCDEF"
        let digits = hex.utf8Start
        withUnsafeBytes(of: u.uuid) { bytes in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 38) { text in
                text[0] = UInt8(ascii: "\"")
                var k = 1
                for i in 0..<16 {
                    if i == 4 || i == 6 || i == 8 || i == 10 {
                        text[k] = UInt8(ascii: "-")
                        k += 1
                    }
                    let b = bytes[i]
                    text[k] = digits[Int(b >> 4)]
                    text[k + 1] = digits[Int(b & 0xF)]
                    k += 2
                }
                text[37] = UInt8(ascii: "\"")
                out.append(contentsOf: UnsafeBufferPointer(text))
            }
        }
    }
}
