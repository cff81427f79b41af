import Foundation

/// The catalog's binary form (a metadata value, inside a checksummed envelope).
extension Catalog {
    /// Version 1; 2 once a layout reads a field through a widening (``FieldSource/converted(_:default:)``);
    /// 3 once one reads a codable field through a reshape (``FieldSource/reshaped(_:_:default:)``): a
    /// catalog older versions of Strata could not read says so by its version.
    static let formatVersion: UInt8 = 3

    /// The oldest format that holds every source of this catalog.
    var requiredFormat: UInt8 {
        entities.lazy.flatMap { $0.layouts }.flatMap { $0.sources }.map(\.requiredCatalogFormat).max() ?? 1
    }

    func encoded() -> [UInt8] {
        var w = BinaryWriter(capacity: 512)
        w.u8(requiredFormat)
        w.varint(UInt64(nextTag))
        w.varint(UInt64(nextGeneration))
        w.varint(entities.count)
        for e in entities {
            w.varint(UInt64(e.tag))
            w.string(e.name)
            w.string(e.database)
            w.varint(UInt64(e.currentLayout))
            w.varint(e.attributes.count)
            for a in e.attributes { w.string(a) }
            w.varint(e.layouts.count)
            for l in e.layouts {
                w.varint(UInt64(l.layout.id))
                w.varint(l.layout.fieldTypes.count)
                for t in l.layout.fieldTypes { TypeCode.write(t, to: &w) }
                for source in l.sources { source.encode(into: &w) }
            }
        }
        w.varint(relationships.count)
        for r in relationships {
            w.varint(UInt64(r.tag)); w.varint(UInt64(r.entityTag)); w.string(r.name); w.string(r.database)
        }
        w.varint(indexes.count)
        for i in indexes {
            w.varint(UInt64(i.tag)); w.varint(UInt64(i.entityTag)); w.string(i.attribute); w.string(i.database)
            w.u8(i.isUnique ? 1 : 0)
        }
        w.varint(garbage.count)
        for g in garbage { w.string(g) }
        return w.bytes
    }

    init(decoding bytes: UnsafeRawBufferPointer) throws {
        var r = BinaryReader(bytes)
        let version = try r.u8()
        guard (1...Catalog.formatVersion).contains(version) else {
            throw DecodeFailure("catalog format \(version) (this version of Strata reads 1 to \(Catalog.formatVersion))")
        }
        func tag() throws -> UInt32 {
            let v = try r.varint()
            guard v <= UInt64(UInt32.max) else { throw DecodeFailure("tag out of range") }
            return UInt32(v)
        }
        /// A database name LMDB can open: not empty, no NUL (LMDB takes a C string), at most its 511-byte key size.
        func databaseName() throws -> String {
            let name = try r.string()
            guard !name.isEmpty, !name.utf8.contains(0), name.utf8.count <= 511 else {
                throw DecodeFailure("a database name of \(name.utf8.count) bytes that LMDB cannot open")
            }
            return name
        }
        let limit = 1 << 20
        nextTag = try tag()
        nextGeneration = try tag()
        entities = []
        for _ in 0..<(try r.count(limit: limit)) {
            let entityTag = try tag()
            let name = try r.string()
            let database = try databaseName()
            let current = try tag()
            var attributes: [String] = []
            for _ in 0..<(try r.count(limit: limit)) { attributes.append(try r.string()) }
            var layouts: [LayoutEntry] = []
            for _ in 0..<(try r.count(limit: limit)) {
                let id = try tag()
                var types: [AttributeType] = []
                for _ in 0..<(try r.count(limit: limit)) { types.append(try TypeCode.read(from: &r)) }
                let sources = try attributes.map { _ in try FieldSource(decoding: &r, fieldCount: types.count, catalogFormat: version) }
                layouts.append(LayoutEntry(layout: RecordLayout(id: id, fieldTypes: types), sources: sources))
            }
            entities.append(EntityEntry(tag: entityTag, name: name, database: database, attributes: attributes,
                                        layouts: layouts, currentLayout: current))
        }
        relationships = []
        for _ in 0..<(try r.count(limit: limit)) {
            relationships.append(RelationshipEntry(tag: try tag(), entityTag: try tag(), name: try r.string(),
                                                   database: try databaseName()))
        }
        indexes = []
        for _ in 0..<(try r.count(limit: limit)) {
            let t = try tag(), e = try tag(), a = try r.string(), d = try databaseName()
            indexes.append(IndexEntry(tag: t, entityTag: e, attribute: a, database: d, isUnique: try r.u8() == 1))
        }
        garbage = []
        for _ in 0..<(try r.count(limit: limit)) { garbage.append(try databaseName()) }
        guard r.isAtEnd else { throw DecodeFailure("bytes after the catalog") }
    }
}

extension CodableReshape {
    /// Writes the changes: for each, the renames, the removed keys and the fills (their JSON as text).
    func encode(into w: inout BinaryWriter) {
        w.varint(changes.count)
        for c in changes {
            w.varint(c.renamed.count)
            for r in c.renamed { w.string(r.from); w.string(r.to) }
            w.varint(c.removed.count)
            for k in c.removed { w.string(k) }
            w.varint(c.filled.count)
            for f in c.filled {
                w.string(f.key)
                // Defaults are checked to serialise when the schema is made (``CodableShape``).
                w.string((try? f.value.serialized()).map { String(decoding: $0, as: UTF8.self) } ?? "null")
            }
        }
    }

    init(decoding r: inout BinaryReader) throws {
        let limit = 1 << 16
        var changes: [Change] = []
        for _ in 0..<(try r.count(limit: limit)) {
            var c = Change(renamed: [], removed: [], filled: [])
            for _ in 0..<(try r.count(limit: limit)) { c.renamed.append(Change.Rename(from: try r.string(), to: try r.string())) }
            for _ in 0..<(try r.count(limit: limit)) { c.removed.append(try r.string()) }
            for _ in 0..<(try r.count(limit: limit)) {
                let key = try r.string()
                let text = try r.string()
                guard let value = try? JSONValue.parse(Data(text.utf8)) else {
                    throw DecodeFailure("the default of the codable key \"\(key)\" is not JSON")
                }
                c.filled.append(Change.Fill(key: key, value: value))
            }
            changes.append(c)
        }
        self.init(changes: changes)
    }
}
