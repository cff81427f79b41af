import Crypto
import Foundation

/// A SHA-256 digest identifying an entity's stored layout (or a whole model, for ``Schema/fingerprint``).
///
/// Version hashes follow Core Data's recipe. An entity's hash covers its name and version hash modifier;
/// each stored attribute's name, type, optionality, transience and modifier; each relationship's name,
/// destination, to-many flag, inverse, minimum and maximum counts and modifier. It leaves out default values,
/// renaming identifiers, indexes, uniqueness and delete rules, which do not change how objects are stored.
/// The bytes hashed are described in <doc:VersionHashes>; the result does not depend on declaration order.
public struct VersionHash: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The 32 bytes of the digest.
    public let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// Parses a 64-character lowercase or uppercase hexadecimal string.
    public init?(hex: String) {
        let chars = Array(hex.utf8)
        guard chars.count == 64 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(32)
        var i = 0
        while i < 64 {
            guard let hi = VersionHash.nibble(chars[i]), let lo = VersionHash.nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        bytes = out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The digest as 64 lowercase hexadecimal digits.
    public var hex: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for b in bytes { out.append(digits[Int(b >> 4)]); out.append(digits[Int(b & 15)]) }
        return String(decoding: out, as: UTF8.self)
    }

    public var description: String { hex }

    public static func < (lhs: VersionHash, rhs: VersionHash) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }

    /// The version hash of an entity.
    public static func of(_ entity: Entity) -> VersionHash {
        VersionHash(bytes: Array(SHA256.hash(data: canonicalBytes(of: entity))))
    }

    /// The canonical bytes hashed for an entity (documented in <doc:VersionHashes>).
    static func canonicalBytes(of entity: Entity) -> [UInt8] {
        var w = CanonicalWriter()
        w.string("strata.entity/1")
        w.string(entity.name)
        w.optionalString(entity.versionHashModifier)
        let attributes = entity.attributes.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        w.count(attributes.count)
        for a in attributes {
            w.byte(UInt8(ascii: "A"))
            w.string(a.name)
            w.string(a.type.canonicalSpelling)
            w.byte(a.isOptional ? 1 : 0)
            w.byte(a.isTransient ? 1 : 0)
            w.optionalString(a.versionHashModifier)
        }
        let relationships = entity.relationships.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        w.count(relationships.count)
        for r in relationships {
            w.byte(UInt8(ascii: "R"))
            w.string(r.name)
            w.string(r.destination)
            w.byte(r.isToMany ? 1 : 0)
            w.string(r.inverse)
            w.int(r.minCount.map(Int64.init) ?? -1)
            w.int(r.maxCount.map(Int64.init) ?? -1)
            w.optionalString(r.versionHashModifier)
        }
        return w.bytes
    }

    /// A hash of everything in a model, independent of declaration order.
    static func fingerprint(versionIdentifier: String, entities: [Entity]) -> VersionHash {
        let normalized = entities
            .sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
            .map { e -> Entity in
                var e = e
                e.attributes.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                e.relationships.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
                return e
            }
        let document = SchemaDocument(versionIdentifier: versionIdentifier, entities: normalized)
        let data = (try? SchemaDocument.encoder(prettyPrinted: false).encode(document)) ?? Data()
        return VersionHash(bytes: Array(SHA256.hash(data: data)))
    }
}

/// Length-prefixed, big-endian canonical bytes for hashing.
struct CanonicalWriter {
    var bytes: [UInt8] = []
    mutating func byte(_ b: UInt8) { bytes.append(b) }
    mutating func count(_ n: Int) { u32(UInt32(truncatingIfNeeded: n)) }
    mutating func u32(_ v: UInt32) { for s in stride(from: 24, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: v >> UInt32(s))) } }
    mutating func int(_ v: Int64) { let u = UInt64(bitPattern: v); for s in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: u >> UInt64(s))) } }
    mutating func string(_ s: String) { count(s.utf8.count); bytes.append(contentsOf: s.utf8) }
    mutating func optionalString(_ s: String?) { if let s { string(s) } else { u32(0xFFFF_FFFF) } }
}
