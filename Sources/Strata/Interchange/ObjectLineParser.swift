import Foundation

/// Reads the object form of a line (see ``ObjectLine``) straight from its bytes: a strict JSON parser for
/// that one shape, typing each value by the store's model as it goes and filling the object's values in
/// attribute order — no `JSONDecoder`, no dictionaries, no copy of the line.
///
/// It decides only lines it is sure to read exactly as ``ObjectLine/parse(_:schema:only:)`` does. Anything
/// else — a line that is not valid JSON, a value of the wrong type, an unknown name, a duplicate key, an
/// escape in a key, a number it cannot read exactly (`-0`, an integer out of range, a fraction where an
/// integer is due), a Codable attribute's value (but null), a line of another entity than `only`'s — is
/// `undecided`, and the caller reads the line with `ObjectLine.parse`, whose answer and error message are then
/// the line's. So the fast path changes no outcome; it only makes the common lines cheap.
struct ObjectLineParser {
    enum Outcome {
        case object(ObjectLine.Parsed)
        case undecided
    }

    /// What the parser needs of one entity, prepared once.
    struct EntityPlan {
        let index: Int
        let nameBytes: [UInt8]
        let attributeNames: [[UInt8]]
        let types: [AttributeType]
        let initialValues: [Value]
        let relationshipNames: [[UInt8]]
        let relationshipToMany: [Bool]
        let relationshipNameStrings: [String]
        /// Whether the fast path reads this entity's attributes and relationships (at most 64 of each).
        let readable: Bool
    }

    private let plans: [EntityPlan]
    private let positions: [String: Int]
    private let only: Int?
    private let onlyName: String?

    init(schema: Schema, only: String?) {
        plans = schema.entities.enumerated().map { index, entity in
            EntityPlan(
                index: index,
                nameBytes: Array(entity.name.utf8),
                attributeNames: entity.attributes.map { Array($0.name.utf8) },
                types: entity.attributes.map(\.type),
                initialValues: entity.attributes.map { $0.defaultValue ?? .null },
                relationshipNames: entity.relationships.map { Array($0.name.utf8) },
                relationshipToMany: entity.relationships.map(\.isToMany),
                relationshipNameStrings: entity.relationships.map(\.name),
                readable: entity.attributes.count <= 64 && entity.relationships.count <= 64)
        }
        var positions: [String: Int] = [:]
        for (i, e) in schema.entities.enumerated() where positions[e.name] == nil { positions[e.name] = i }
        self.positions = positions
        self.onlyName = only
        self.only = only.flatMap { positions[$0] }
    }

    /// Reads `line` (without its line break).
    func parse(_ line: UnsafeRawBufferPointer) -> Outcome {
        var c = JSONScanner(line)
        return parseObject(&c) ?? .undecided
    }

    private static let keyEntity = Array("entity".utf8)
    private static let keyID = Array("id".utf8)
    private static let keyAttributes = Array("attributes".utf8)
    private static let keyRelationships = Array("relationships".utf8)

    private func parseObject(_ c: inout JSONScanner) -> Outcome? {
        guard c.eat(UInt8(ascii: "{")) else { return nil }
        var seen = 0 // bits: entity, id, attributes, relationships
        var named: Int? = nil // the entity the line names
        var tentative: Int? = nil // the entity attributes or relationships were read as
        var id: ObjectID? = nil
        var values: [Value]? = nil
        var links: [(relationship: Int, targets: [UInt64])] = []
        if c.peek() == UInt8(ascii: "}") {
            c.advance()
        } else {
            while true {
                guard let key = c.plainString() else { return nil }
                guard c.eat(UInt8(ascii: ":")) else { return nil }
                if c.matches(key, Self.keyEntity) {
                    guard seen & 1 == 0 else { return nil }
                    seen |= 1
                    switch c.peek() {
                    case UInt8(ascii: "n"):
                        guard c.literal("null") else { return nil }
                    case UInt8(ascii: "\""):
                        // The name's bytes are compared with the entities' first; a name with escapes (or
                        // another spelling) is decoded and looked up.
                        let before = c
                        var position: Int? = nil
                        if let range = c.plainString() {
                            position = plans.first { c.matches(range, $0.nameBytes) }?.index
                        }
                        if position == nil {
                            c = before
                            guard let name = c.string(), let found = positions[name] else { return nil }
                            position = found
                        }
                        if let tentative, tentative != position { return nil }
                        named = position
                    default: return nil
                    }
                } else if c.matches(key, Self.keyID) {
                    guard seen & 2 == 0 else { return nil }
                    seen |= 2
                    if c.peek() == UInt8(ascii: "n") {
                        guard c.literal("null") else { return nil }
                    } else {
                        guard let n = c.positiveInteger() else { return nil }
                        id = ObjectID(rawValue: n)
                    }
                } else if c.matches(key, Self.keyAttributes) {
                    guard seen & 4 == 0 else { return nil }
                    seen |= 4
                    if c.peek() == UInt8(ascii: "n") {
                        guard c.literal("null") else { return nil }
                    } else {
                        guard let e = named ?? only else { return nil }
                        tentative = e
                        guard let read = attributes(&c, plans[e]) else { return nil }
                        values = read
                    }
                } else if c.matches(key, Self.keyRelationships) {
                    guard seen & 8 == 0 else { return nil }
                    seen |= 8
                    if c.peek() == UInt8(ascii: "n") {
                        guard c.literal("null") else { return nil }
                    } else {
                        guard let e = named ?? only else { return nil }
                        tentative = e
                        guard let read = relationships(&c, plans[e]) else { return nil }
                        links = read
                    }
                } else {
                    return nil
                }
                if c.eat(UInt8(ascii: ",")) { continue }
                guard c.eat(UInt8(ascii: "}")) else { return nil }
                break
            }
        }
        guard c.atEnd() else { return nil }
        // No "entity" (or null): the line is an object of `only`'s; none given is an error the slow path words.
        guard let entity = named ?? only else { return nil }
        // A line of another entity than `only`'s is skipped: the slow path decides (it also checks the line).
        if onlyName != nil, entity != only { return nil }
        if let tentative, tentative != entity { return nil }
        let plan = plans[entity]
        return .object(ObjectLine.Parsed(entityIndex: entity, id: id, values: values ?? plan.initialValues, links: links))
    }

    /// The attributes object: every attribute's value in declaration order (defaults for those not given).
    private func attributes(_ c: inout JSONScanner, _ plan: EntityPlan) -> [Value]? {
        guard plan.readable, c.eat(UInt8(ascii: "{")) else { return nil }
        var values = plan.initialValues
        if c.peek() == UInt8(ascii: "}") {
            c.advance()
            return values
        }
        var seen: UInt64 = 0
        var next = 0
        let names = plan.attributeNames
        while true {
            // Exports list attributes in declaration order: the next one is tried first, in place.
            var a = -1
            if next < names.count, c.key(names[next]) {
                a = next
            } else {
                guard let key = c.plainString() else { return nil }
                for i in names.indices where c.matches(key, names[i]) {
                    a = i
                    break
                }
            }
            guard c.eat(UInt8(ascii: ":")), a >= 0, seen & (UInt64(1) << UInt64(a)) == 0 else { return nil }
            seen |= UInt64(1) << UInt64(a)
            next = a + 1
            guard let value = c.value(for: plan.types[a]) else { return nil }
            values[a] = value
            if c.eat(UInt8(ascii: ",")) { continue }
            guard c.eat(UInt8(ascii: "}")) else { return nil }
            return values
        }
    }

    /// The relationships object: links in the order of the relationships' names (as the slow path makes them).
    private func relationships(_ c: inout JSONScanner, _ plan: EntityPlan) -> [(relationship: Int, targets: [UInt64])]? {
        guard plan.readable, c.eat(UInt8(ascii: "{")) else { return nil }
        var links: [(relationship: Int, targets: [UInt64])] = []
        if c.peek() == UInt8(ascii: "}") {
            c.advance()
            return links
        }
        var seen: UInt64 = 0
        let names = plan.relationshipNames
        while true {
            guard let key = c.plainString(), c.eat(UInt8(ascii: ":")) else { return nil }
            var r = -1
            for i in names.indices where c.matches(key, names[i]) {
                r = i
                break
            }
            guard r >= 0, seen & (UInt64(1) << UInt64(r)) == 0 else { return nil }
            seen |= UInt64(1) << UInt64(r)
            var targets: [UInt64] = []
            switch c.peek() {
            case UInt8(ascii: "n"):
                guard c.literal("null") else { return nil }
            case UInt8(ascii: "["):
                c.advance()
                if c.peek() == UInt8(ascii: "]") {
                    c.advance()
                } else {
                    while true {
                        guard let t = c.positiveInteger() else { return nil }
                        targets.append(t)
                        if c.eat(UInt8(ascii: ",")) { continue }
                        guard c.eat(UInt8(ascii: "]")) else { return nil }
                        break
                    }
                }
            default:
                guard let t = c.positiveInteger() else { return nil }
                targets = [t]
            }
            if !plan.relationshipToMany[r] && targets.count > 1 { return nil }
            if !targets.isEmpty { links.append((r, targets)) }
            if c.eat(UInt8(ascii: ",")) { continue }
            guard c.eat(UInt8(ascii: "}")) else { return nil }
            break
        }
        if links.count > 1 {
            let names = plan.relationshipNameStrings
            links.sort { names[$0.relationship] < names[$1.relationship] }
        }
        return links
    }
}
