import Crypto
import Foundation

/// The names behind a history entry's numbers: for each entity tag of the model that wrote the entry, the
/// entity's name, its properties in the order a ``PropertyMask`` numbers them (attributes, then relationships),
/// and the attributes kept in tombstones. Stored once per model (the `historymodels` database, keyed by ``id``,
/// a digest of its contents), so that an entry names its properties as the model that wrote it did — across
/// migrations, and for an older model writing to a newer store (whose properties it numbers its own way).
struct HistoryModel: Sendable, Equatable {
    struct Entity: Sendable, Equatable {
        var tag: UInt32
        var name: String
        var attributes: [String]
        var relationships: [String]
        /// Positions (in `attributes`) of the attributes whose values deletions keep.
        var preserved: [Int]

        /// The names of the properties in `mask`. Bit 63 stands for every property from the 64th on (masks have
        /// 64 bits): all of them are named.
        func names(of mask: PropertyMask) -> [String] {
            if mask.bits == .max { return attributes + relationships }
            var out: [String] = []
            let count = attributes.count + relationships.count
            var bits = mask.bits
            while bits != 0 {
                let i = bits.trailingZeroBitCount
                bits &= bits - 1
                if i == 63 {
                    for j in 63..<max(63, count) { out.append(property(j)) }
                } else if i < count {
                    out.append(property(i))
                }
            }
            return out
        }

        private func property(_ i: Int) -> String {
            i < attributes.count ? attributes[i] : relationships[i - attributes.count]
        }
    }

    var versionIdentifier: String
    /// By tag, ascending.
    var entities: [Entity]
    /// The first 8 bytes of the SHA-256 of the encoded model: equal models share one stored copy.
    let id: UInt64

    init(versionIdentifier: String, entities: [Entity]) {
        self.versionIdentifier = versionIdentifier
        self.entities = entities.sorted { $0.tag < $1.tag }
        id = HistoryModel.digest(HistoryModel.body(versionIdentifier: versionIdentifier, entities: self.entities))
    }

    /// The names of a bound model (an older model bound to a newer store names properties as it numbers them).
    init(_ model: BoundModel) {
        self.init(versionIdentifier: model.schema.versionIdentifier, entities: model.entities.map { binding in
            Entity(tag: binding.tag, name: binding.name, attributes: binding.attributeNames,
                   relationships: binding.relationships.map(\.name),
                   preserved: binding.preservedAttributes)
        })
    }

    func entity(tag: UInt32) -> Entity? {
        var low = 0, high = entities.count
        while low < high {
            let mid = (low + high) / 2
            if entities[mid].tag < tag { low = mid + 1 } else { high = mid }
        }
        return low < entities.count && entities[low].tag == tag ? entities[low] : nil
    }

    // MARK: Coding (the payload HistoryCodec seals)

    var body: [UInt8] { HistoryModel.body(versionIdentifier: versionIdentifier, entities: entities) }

    private static func body(versionIdentifier: String, entities: [Entity]) -> [UInt8] {
        var w = BinaryWriter(capacity: 256)
        w.u8(1)
        w.string(versionIdentifier)
        w.varint(entities.count)
        for e in entities {
            w.varint(UInt64(e.tag))
            w.string(e.name)
            w.varint(e.attributes.count)
            for a in e.attributes { w.string(a) }
            w.varint(e.relationships.count)
            for r in e.relationships { w.string(r) }
            w.varint(e.preserved.count)
            for p in e.preserved { w.varint(p) }
        }
        return w.bytes
    }

    private static func digest(_ body: [UInt8]) -> UInt64 {
        let hash = Array(SHA256.hash(data: body))
        return hash.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Decodes a model's payload; `id` is the key it was stored under, which its contents must hash to.
    init(decoding bytes: UnsafeRawBufferPointer, id: UInt64) throws(DecodeFailure) {
        var r = BinaryReader(bytes)
        do {
            let version = try r.u8()
            guard version == 1 else { throw DecodeFailure("history model version \(version)") }
            let versionIdentifier = try r.string()
            var entities: [Entity] = []
            for _ in 0..<(try r.count(limit: r.remaining)) {
                let tag = try r.varint()
                guard tag <= UInt64(UInt32.max) else { throw DecodeFailure("entity tag \(tag) out of range") }
                let name = try r.string()
                var attributes: [String] = []
                for _ in 0..<(try r.count(limit: r.remaining)) { attributes.append(try r.string()) }
                var relationships: [String] = []
                for _ in 0..<(try r.count(limit: r.remaining)) { relationships.append(try r.string()) }
                var preserved: [Int] = []
                for _ in 0..<(try r.count(limit: r.remaining)) {
                    let p = try r.count(limit: Int.max)
                    guard p < attributes.count else { throw DecodeFailure("preserved attribute \(p) of \(attributes.count)") }
                    preserved.append(p)
                }
                entities.append(Entity(tag: UInt32(tag), name: name, attributes: attributes, relationships: relationships, preserved: preserved))
            }
            guard r.isAtEnd else { throw DecodeFailure("\(r.remaining) bytes past the end") }
            self.versionIdentifier = versionIdentifier
            self.entities = entities
        } catch let failure as DecodeFailure {
            throw failure
        } catch {
            throw DecodeFailure("\(error)")
        }
        self.id = HistoryModel.digest(Array(bytes))
        guard self.id == id else { throw DecodeFailure("the model's contents do not match its key") }
        guard zip(entities, entities.dropFirst()).allSatisfy({ $0.tag < $1.tag }) else {
            throw DecodeFailure("entity tags out of order")
        }
    }
}
