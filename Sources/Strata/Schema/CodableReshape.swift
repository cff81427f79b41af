import Foundation

/// How a ``AttributeType/codable(_:)`` value written with an older ``CodableShape`` is read with a newer one:
/// one change per migration step, applied in order. Each change renames keys, removes keys and fills absent
/// keys with defaults, on the top-level JSON object; keys it does not name pass through unchanged.
///
/// Inferred from two shapes by a migration; kept in the store's catalog with every layout whose values it
/// reshapes, so that reading an old record gives exactly what the background sweep writes for it.
public struct CodableReshape: Sendable, Hashable, CustomStringConvertible {
    /// One step's changes, applied together.
    public struct Change: Sendable, Hashable {
        /// Keys renamed, `(from, to)`: all values are taken, the removed keys removed, then the values put back.
        public var renamed: [Rename]
        /// Keys removed.
        public var removed: [String]
        /// Keys set to a value when absent or null (added or made required).
        public var filled: [Fill]

        /// A key renamed: its value moves from `from` to `to`.
        public struct Rename: Sendable, Hashable {
            /// The key in the older shape.
            public var from: String
            /// The key in the newer shape.
            public var to: String
        }
        /// A key given `value` where it is absent or null.
        public struct Fill: Sendable, Hashable {
            /// The key.
            public var key: String
            /// Its JSON value (the newer shape's default).
            public var value: JSONValue
        }

        var isEmpty: Bool { renamed.isEmpty && removed.isEmpty && filled.isEmpty }
    }

    /// The changes, oldest first.
    public let changes: [Change]
    /// Each change's fill values as JSON text (nil when one cannot be written: the decoding path then runs).
    private let fillJSON: [[[UInt8]]]?

    init(changes: [Change]) {
        self.changes = changes.filter { !$0.isEmpty }
        let texts = self.changes.map { $0.filled.map { (try? $0.value.serialized()).map(Array.init) } }
        fillJSON = texts.allSatisfy { $0.allSatisfy { $0 != nil } } ? texts.map { $0.compactMap { $0 } } : nil
    }

    /// Whether it changes nothing.
    public var isEmpty: Bool { changes.isEmpty }

    /// This reshape followed by `next` (a later step's).
    func followed(by next: CodableReshape) -> CodableReshape { CodableReshape(changes: changes + next.changes) }

    /// Reshapes canonical JSON. A value that is not a JSON object is returned as it is (the type's decoder
    /// then says what is wrong with it).
    func apply(toJSON data: Data) throws(DecodeFailure) -> Data {
        guard !changes.isEmpty else { return data }
        // The common case moves byte ranges: no value is decoded or re-encoded.
        if let fillJSON, var object = data.withUnsafeBytes({ JSONObjectMembers.parse($0) }) {
            for (change, fills) in zip(changes, fillJSON) { change.apply(to: &object, fills: fills) }
            return object.serialized()
        }
        return try applyDecoding(toJSON: data)
    }

    /// The same reshape through decoded values: for what the byte path does not handle (and to check it).
    func applyDecoding(toJSON data: Data) throws(DecodeFailure) -> Data {
        guard !changes.isEmpty else { return data }
        let json: JSONValue
        do { json = try JSONValue.parse(data) } catch { throw DecodeFailure("codable value is not JSON: \(error)") }
        guard case .object(var object) = json else { return data }
        for change in changes { change.apply(to: &object) }
        do { return try JSONValue.object(object).serialized() } catch { throw DecodeFailure("codable value cannot be re-encoded: \(error)") }
    }

    /// Reshapes a codable value; null and other cases are returned as they are.
    func apply(to value: Value) throws(DecodeFailure) -> Value {
        guard case .codable(let data) = value else { return value }
        return .codable(try apply(toJSON: data))
    }

    public var description: String {
        changes.map { c in
            var parts: [String] = []
            parts += c.renamed.map { "\($0.from) → \($0.to)" }
            parts += c.removed.map { "-\($0)" }
            parts += c.filled.map { "+\($0.key)" }
            return parts.joined(separator: ", ")
        }.joined(separator: "; ")
    }
}

extension CodableReshape.Change {
    /// The change on an object's members located in its bytes (`fills`: the fill values' JSON text), exactly as
    /// ``apply(to:)-(inout [String: JSONValue])`` does it on decoded values.
    func apply(to object: inout JSONObjectMembers, fills: [[UInt8]]) {
        var moved: [(String, [UInt8])] = []
        for r in renamed {
            if let i = object.members.firstIndex(where: { $0.key == r.from }) { moved.append((r.to, object.members.remove(at: i).value)) }
        }
        if !removed.isEmpty { object.members.removeAll { removed.contains($0.key) } }
        func put(_ key: String, _ value: [UInt8]) {
            if let i = object.members.firstIndex(where: { $0.key == key }) {
                object.members[i].value = value
            } else {
                object.members.append(.init(key: key, keyJSON: JSONObjectMembers.keyJSON(key), value: value))
            }
        }
        for (key, value) in moved { put(key, value) }
        let null = Array("null".utf8)
        for (f, text) in zip(filled, fills) {
            if let i = object.members.firstIndex(where: { $0.key == f.key }) {
                if object.members[i].value == null { object.members[i].value = text }
            } else {
                put(f.key, text)
            }
        }
    }

    func apply(to object: inout [String: JSONValue]) {
        var moved: [(String, JSONValue)] = []
        for r in renamed {
            if let v = object.removeValue(forKey: r.from) { moved.append((r.to, v)) }
        }
        for key in removed { object.removeValue(forKey: key) }
        for (key, v) in moved { object[key] = v }
        for f in filled where object[f.key] == nil || object[f.key] == .null { object[f.key] = f.value }
    }

    /// The change from `source` to `destination`, or why there is none: a key whose kind changed, a key
    /// added or made required without a default, two keys claiming one.
    static func inferred(from source: CodableShape, to destination: CodableShape) -> Result<Self, ShapeMismatch> {
        var renamed: [Rename] = []
        var filled: [Fill] = []
        var claimed: Set<String> = []
        for d in destination.fields {
            // The key it was renamed from, else the key of the same name.
            let s = d.renamingIdentifier.flatMap(source.field(named:)) ?? source.field(named: d.name)
            guard let s else {
                if let v = d.defaultValue { filled.append(Fill(key: d.name, value: v)) }
                else if !d.isOptional { return .failure(.addedWithoutDefault(d.name)) }
                continue
            }
            guard claimed.insert(s.name).inserted else { return .failure(.claimedTwice(s.name)) }
            guard s.kind == d.kind || d.kind == .any else { return .failure(.kindChanged(d.name, from: s.kind, to: d.kind)) }
            if s.name != d.name { renamed.append(Rename(from: s.name, to: d.name)) }
            if s.isOptional && !d.isOptional {
                guard let v = d.defaultValue else { return .failure(.madeRequiredWithoutDefault(d.name)) }
                filled.append(Fill(key: d.name, value: v))
            }
        }
        // Keys no destination key takes (renamed values are put back after the removals).
        let removed = source.fields.map(\.name).filter { !claimed.contains($0) }
        return .success(Self(renamed: renamed, removed: removed, filled: filled))
    }

    /// Why two shapes have no inferred change.
    enum ShapeMismatch: Error, Equatable, CustomStringConvertible {
        case addedWithoutDefault(String)
        case madeRequiredWithoutDefault(String)
        case kindChanged(String, from: CodableShape.Kind, to: CodableShape.Kind)
        case claimedTwice(String)

        var description: String {
            switch self {
            case .addedWithoutDefault(let k): "the key \"\(k)\" is new, required and has no default"
            case .madeRequiredWithoutDefault(let k): "the key \"\(k)\" became required without a default"
            case .kindChanged(let k, let from, let to): "the key \"\(k)\" changed from \(from.rawValue) to \(to.rawValue)"
            case .claimedTwice(let k): "two keys claim the key \"\(k)\""
            }
        }
    }
}
