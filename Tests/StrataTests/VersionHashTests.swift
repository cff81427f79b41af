import Foundation
import Strata
import StrataTestSupport
import Testing

/// Entity version hashes: golden values computed once, outside Strata, from the canonical byte form
/// documented in `Schema/VersionHash.swift` (SHA-256 of length-prefixed big-endian fields, attributes and
/// relationships sorted by name); independent of declaration order; blind to defaults, renaming
/// identifiers, indexes, uniqueness and delete rules; sensitive to every hashed property.
@Suite struct VersionHashTests {
    static func post() -> Entity {
        Entity("Post") {
            Attribute("postID", .uuid).unique()
            Attribute("color", .string)
            Attribute("content", .string).optional()
            Attribute("views", .int16).defaultValue(0)
            Attribute("date", .date).indexed()
            Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
        }
    }

    static func tag() -> Entity {
        Entity("Tag") {
            Attribute("name", .string)
            Relationship("posts", to: "Post", inverse: "tags", toMany: true, minCount: 1, maxCount: 5)
        }
    }

    static func shape() -> Entity {
        Entity("Shape", versionHashModifier: "m1") {
            Attribute("origin", .codable("Point2D"))
            Attribute("scratch", .int64).optional().transient().versionHashModifier("t1")
            Attribute("area", .double)
        }
    }

    /// Golden values (computed with an independent implementation of the documented canonical form).
    static let golden: [String: String] = [
        "Post": "73e185ed8feaea97b3120ada901853b0aad06b2a75ded55d9fd085e23fa6ea8f",
        "Tag": "511f3d4a03a4a068da949d608aa8a21a85acf3850d0129cda2bfd32e1d2f741b",
        "Shape": "ed90d1e84ee40880e19d1021af936923af3680868f80524233c76b32dad20aca",
        "Empty": "48c856a723e0b3ae50cc9849953254f79a281d00cbf4355503ba0f319d21a91f",
    ]

    @Test func goldenValues() throws {
        let schema = try Schema("v1") { Self.post(); Self.tag(); Self.shape(); Entity("Empty") }
        for (name, hex) in Self.golden {
            #expect(schema.entityVersionHashes[name]?.hex == hex, "\(name)")
            #expect(VersionHash.of(try #require(schema.entity(named: name))) == VersionHash(hex: hex))
        }
        #expect(VersionHash.of(Self.post()).hex == Self.golden["Post"])
    }

    @Test func hexRoundTrip() throws {
        let hash = VersionHash.of(Self.post())
        #expect(VersionHash(hex: hash.hex) == hash)
        #expect(VersionHash(hex: hash.hex.uppercased()) == hash)
        #expect(VersionHash(hex: "zz" + hash.hex.dropFirst(2)) == nil)
        #expect(VersionHash(hex: String(hash.hex.dropLast())) == nil)
        #expect(hash.bytes.count == 32)
    }

    @Test func declarationOrderDoesNotMatter() throws {
        var rng = SeededGenerator(seed: 7)
        let base = try Schema("v1") { Self.post(); Self.tag(); Self.shape() }
        for _ in 0..<10 {
            let entities = base.entities.map { e -> Entity in
                var e = e
                e.attributes.shuffle(using: &rng)
                e.relationships.shuffle(using: &rng)
                return e
            }.shuffled(using: &rng)
            let shuffled = try Schema("v1", entities: entities)
            #expect(shuffled.entityVersionHashes == base.entityVersionHashes)
            #expect(shuffled.fingerprint == base.fingerprint)
        }
    }

    @Test func leftOutPropertiesDoNotChangeTheHash() {
        let base = VersionHash.of(Self.post())
        var e = Self.post()
        e.attributes[0].defaultValue = .uuid(UUID())
        e.attributes[1] = e.attributes[1].defaultValue("red").renamed(from: "colour")
        e.attributes[2].isIndexed = true
        e.attributes[3].isUnique = true
        e.attributes[4].isIndexed = false
        e.attributes[0].isUnique = false
        e.relationships[0].deleteRule = .cascade
        e.relationships[0].renamingIdentifier = "labels"
        e.renamingIdentifier = "Article"
        #expect(VersionHash.of(e) == base)
    }

    @Test func everyHashedPropertyChangesTheHash() {
        let entity = Self.tag()
        let base = VersionHash.of(entity)
        var changes: [(String, (inout Entity) -> Void)] = [
            ("entity name", { $0.name = "Label" }),
            ("entity modifier", { $0.versionHashModifier = "2" }),
            ("attribute name", { $0.attributes[0].name = "title" }),
            ("attribute type", { $0.attributes[0].type = .url }),
            ("attribute optionality", { $0.attributes[0].isOptional = true }),
            ("attribute transience", { $0.attributes[0].isTransient = true }),
            ("attribute modifier", { $0.attributes[0].versionHashModifier = "x" }),
            ("attribute added", { $0.attributes.append(Attribute("extra", .bool)) }),
            ("attribute removed", { $0.attributes.removeAll() }),
            ("relationship name", { $0.relationships[0].name = "articles" }),
            ("relationship destination", { $0.relationships[0].destination = "Article" }),
            ("relationship to-many flag", { $0.relationships[0].isToMany = false; $0.relationships[0].minCount = nil; $0.relationships[0].maxCount = nil }),
            ("relationship inverse", { $0.relationships[0].inverse = "labels" }),
            ("relationship minimum", { $0.relationships[0].minCount = 2 }),
            ("relationship minimum removed", { $0.relationships[0].minCount = nil }),
            ("relationship maximum", { $0.relationships[0].maxCount = 6 }),
            ("relationship maximum removed", { $0.relationships[0].maxCount = nil }),
            ("relationship modifier", { $0.relationships[0].versionHashModifier = "m" }),
            ("relationship removed", { $0.relationships.removeAll() }),
        ]
        changes.append(("codable type name", { $0.attributes[0].type = .codable("A") }))
        var seen: Set<VersionHash> = [base]
        for (what, change) in changes {
            var e = entity
            change(&e)
            let hash = VersionHash.of(e)
            #expect(hash != base, "\(what) must change the version hash")
            #expect(seen.insert(hash).inserted, "\(what) gives the hash of another change")
        }
        // Two codable type names differ from each other too.
        var a = entity, b = entity
        a.attributes[0].type = .codable("Point2D")
        b.attributes[0].type = .codable("Point3D")
        #expect(VersionHash.of(a) != VersionHash.of(b))
        // Whether a modifier is absent or empty is a difference.
        var empty = entity
        empty.versionHashModifier = ""
        #expect(VersionHash.of(empty) != base)
    }

    @Test func fingerprintCoversWhatHashesLeaveOut() throws {
        let base = try Schema("v1") { Self.post(); Self.tag() }
        let indexed = try Schema("v1") {
            Entity("Post", attributes: Self.post().attributes.map { $0.name == "color" ? $0.indexed() : $0 },
                   relationships: Self.post().relationships)
            Self.tag()
        }
        let defaulted = try Schema("v1") {
            Entity("Post", attributes: Self.post().attributes.map { $0.name == "color" ? $0.defaultValue("red") : $0 },
                   relationships: Self.post().relationships)
            Self.tag()
        }
        #expect(indexed.entityVersionHashes == base.entityVersionHashes)
        #expect(defaulted.entityVersionHashes == base.entityVersionHashes)
        #expect(indexed.fingerprint != base.fingerprint)
        #expect(defaulted.fingerprint != base.fingerprint)
        #expect(try base.withVersionIdentifier("v2").fingerprint != base.fingerprint)
        #expect(try base.withVersionIdentifier("v2").entityVersionHashes == base.entityVersionHashes)
    }
}
