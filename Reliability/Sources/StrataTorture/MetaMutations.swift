import Foundation

/// A small seeded generator (SplitMix64): the same seed gives the same inputs on every machine.
struct SplitMix64 {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (0 when `bound` is 0).
    mutating func below(_ bound: Int) -> Int { bound <= 0 ? 0 : Int(next() % UInt64(bound)) }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
}

/// Hostile versions of a metadata payload: damaged bytes (for every kind), and valid JSON that means harm (for
/// the model's JSON). Each returns a name (for the figures) and the new payload.
enum MetaMutations {
    /// Varints no decoder should trust: 4 GiB, 2^63, an overflow of 64 bits, an endless continuation.
    static let hugeVarints: [[UInt8]] = [
        [0xFF, 0xFF, 0xFF, 0xFF, 0x0F], [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F],
        [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01], [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],
        [UInt8](repeating: 0xFF, count: 11),
    ]

    /// Little-endian fixed-width fields set to the extremes (UInt64.max, Int64.min as a "negative" length, …).
    static let hugeFixed: [[UInt8]] = [
        [UInt8](repeating: 0xFF, count: 8), [0, 0, 0, 0, 0, 0, 0, 0x80], [0xFF, 0xFF, 0xFF, 0x7F], [0xFF, 0xFF, 0xFF, 0xFF],
        [0, 0, 0, 0x80], [0, 0, 0, 0, 0, 0, 0, 0],
    ]

    /// A damaged copy of `payload`.
    static func bytes(_ payload: [UInt8], _ rng: inout SplitMix64) -> (String, [UInt8]) {
        let n = payload.count
        var b = payload
        switch rng.below(12) {
        case 0:
            return ("truncated", Array(payload.prefix(rng.below(max(n, 1)))))
        case 1:
            for _ in 0...rng.below(3) where n > 0 { let bit = rng.below(n * 8); b[bit / 8] ^= UInt8(1) << UInt8(bit % 8) }
            return ("bit flips", b)
        case 2:
            if n > 0 { b[rng.below(n)] = rng.pick([0x00, 0xFF, 0x80, 0x7F, 0x01]) }
            return ("byte set", b)
        case 3:
            let at = rng.below(max(n, 1))
            b.replaceSubrange(at..<min(n, at + 1), with: rng.pick(hugeVarints))
            return ("length or count huge (varint)", b)
        case 4:
            let field = rng.pick(hugeFixed)
            let at = rng.below(max(n, 1))
            for (k, v) in field.enumerated() where at + k < n { b[at + k] = v }
            return ("fixed field huge or negative", b)
        case 5:
            let at = rng.below(max(n, 1))
            b.removeSubrange(at..<min(n, at + 1 + rng.below(16)))
            return ("bytes deleted", b)
        case 6:
            let at = rng.below(n + 1)
            b.insert(contentsOf: (0..<(1 + rng.below(24))).map { _ in UInt8(truncatingIfNeeded: rng.next()) }, at: at)
            return ("random bytes inserted", b)
        case 7:
            let length = rng.chance(50) ? n : rng.below(96)
            return ("random bytes", (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case 8:
            return ("empty", [])
        case 9:
            return ("trailing garbage", payload + (0..<(1 + rng.below(32))).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        case 10:
            return ("doubled", payload + payload)
        default:
            // The first byte (a version or format byte in most kinds) set to an unknown value.
            if n > 0 { b[0] = rng.pick([0, 2, 3, 9, 0x7F, 0xFF]) }
            return ("unknown version byte", b)
        }
    }

    /// Valid JSON (mostly) that means harm, made from the model's JSON: wrong types, huge numbers, deep
    /// nesting, unknown versions, names with NUL and odd Unicode, duplicated entities, references crossed into
    /// cycles, members removed. Falls back to damaged bytes when the payload is not JSON.
    static func json(_ payload: [UInt8], _ rng: inout SplitMix64) -> (String, [UInt8]) {
        guard let root = try? JSONSerialization.jsonObject(with: Data(payload), options: [.fragmentsAllowed]) else {
            return bytes(payload, &rng)
        }
        var paths: [[PathStep]] = []
        var strings: [String] = []
        collect(root, [], &paths, &strings)
        guard !paths.isEmpty else { return bytes(payload, &rng) }
        let path = rng.pick(paths)
        let name: String
        var replacement: Any?
        var textual: String? = nil
        switch rng.below(10) {
        case 0:
            name = "JSON wrong type"
            replacement = rng.pick([42, "x", [Any](), [String: Any](), NSNull(), true, 1.5] as [Any])
        case 1:
            name = "JSON huge number"
            replacement = rng.pick([1e308, -1, Int64.max, Int64.min, 4_294_967_296, -4_294_967_297, 1e-300, UInt64.max] as [Any])
        case 2:
            name = "JSON deeply nested"
            replacement = "\u{1}DEEP\u{1}"
            let depth = rng.pick([64, 1_000, 20_000, 200_000])
            textual = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            if rng.chance(30) { textual = String(repeating: "{\"a\":", count: depth) + "1" + String(repeating: "}", count: depth) }
        case 3:
            name = "JSON hostile name"
            replacement = rng.pick(["", "a\u{0}b", "\u{0}", "e\u{301}", "\u{E9}", "🦄‍🔥", "\u{FEFF}Item", "\u{202E}meti", "a.b",
                                    "Item ", String(repeating: "x", count: 70_000), "\u{FFFF}", "\u{10FFFF}"] as [Any])
        case 4:
            name = "JSON crossed reference"
            replacement = strings.isEmpty ? "Item" : rng.pick(strings)
        case 5:
            name = "JSON duplicated member"
            replacement = nil  // handled below
        case 6:
            name = "JSON member removed"
            replacement = nil
        case 7:
            name = "JSON unknown version"
            replacement = rng.pick([2, 999, -1, "v999", 1e20] as [Any])
        case 8:
            name = "JSON unknown member"
            replacement = nil
        default:
            name = "JSON empty container"
            replacement = rng.pick([[Any](), [String: Any]()] as [Any])
        }
        let mutated: Any
        switch name {
        case "JSON duplicated member": mutated = edit(root, path[...]) { .duplicate($0) }
        case "JSON member removed": mutated = edit(root, path[...]) { _ in .remove }
        case "JSON unknown member":
            mutated = edit(root, path.dropLast()[...]) { container in
                if var d = container as? [String: Any] { d["formatVersion"] = 99; d["\u{0}"] = [1]; return .replace(d) }
                return .replace(container)
            }
        case "JSON unknown version":
            // The root's version-like members (or a new one).
            var d = root as? [String: Any] ?? [:]
            let keys = d.keys.filter { $0.lowercased().contains("version") || $0.lowercased().contains("format") }
            d[keys.isEmpty ? "version" : rng.pick(keys.sorted())] = replacement
            mutated = d
        default:
            mutated = edit(root, path[...]) { _ in .replace(replacement ?? NSNull()) }
        }
        guard JSONSerialization.isValidJSONObject(mutated) || mutated is String || mutated is NSNumber,
              var data = try? JSONSerialization.data(withJSONObject: mutated, options: [.fragmentsAllowed]) else {
            return bytes(payload, &rng)
        }
        if let textual, var text = String(data: data, encoding: .utf8) {
            text = text.replacingOccurrences(of: "\"\\u0001DEEP\\u0001\"", with: textual)
            data = Data(text.utf8)
        }
        return (name, [UInt8](data))
    }

    /// Duplicate keys, which JSONSerialization cannot write: the text of the payload with its first member
    /// repeated with another value.
    static func duplicateKey(_ payload: [UInt8]) -> [UInt8] {
        guard let text = String(validating: payload, as: UTF8.self), text.hasPrefix("{") else { return payload + payload }
        return Array(("{\"entities\":[],\"entities\":7," + text.dropFirst()).utf8)
    }

    enum PathStep { case key(String), index(Int) }
    enum Edit { case replace(Any), remove, duplicate(Any) }

    static func collect(_ node: Any, _ path: [PathStep], _ paths: inout [[PathStep]], _ strings: inout [String]) {
        if !path.isEmpty { paths.append(path) }
        if let d = node as? [String: Any] {
            for key in d.keys.sorted() { collect(d[key]!, path + [.key(key)], &paths, &strings) }
        } else if let a = node as? [Any] {
            for (i, v) in a.enumerated() { collect(v, path + [.index(i)], &paths, &strings) }
        } else if let s = node as? String {
            strings.append(s)
        }
    }

    static func edit(_ node: Any, _ path: ArraySlice<PathStep>, _ change: (Any) -> Edit) -> Any {
        guard let step = path.first else {
            if case .replace(let v) = change(node) { return v }
            return node
        }
        let rest = path.dropFirst()
        switch step {
        case .key(let k):
            guard var d = node as? [String: Any], let child = d[k] else { return node }
            if rest.isEmpty {
                switch change(child) {
                case .replace(let v): d[k] = v
                case .remove: d[k] = nil
                case .duplicate(let v): d[k + "\u{0}"] = v; d[k] = v
                }
            } else {
                d[k] = edit(child, rest, change)
            }
            return d
        case .index(let i):
            guard var a = node as? [Any], i < a.count else { return node }
            if rest.isEmpty {
                switch change(a[i]) {
                case .replace(let v): a[i] = v
                case .remove: a.remove(at: i)
                case .duplicate(let v): a.insert(v, at: i)
                }
            } else {
                a[i] = edit(a[i], rest, change)
            }
            return a
        }
    }
}
