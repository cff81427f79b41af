import Foundation
import StrataTestSupport
import Testing
@testable import Strata

/// The record encoders of inserts (the dynamic API's one pass over values of exact types, its validating
/// fallback, and the checksum) write exactly the bytes of the reference encoding: the format byte, the layout
/// ID, the null bitmap, each field by its attribute type (``FieldCodec/encode(_:as:into:)``), the checksum.
@Suite struct RecordEncodingTests {
    /// The record the format defines for `values` (one per attribute, all stored, already of their types).
    static func reference(_ values: [Value], layout: RecordLayout, tag: UInt32, id: UInt64) throws -> [UInt8] {
        var w = BinaryWriter(capacity: 16)
        let bitmap = RecordCodec.begin(layout, into: &w)
        for (i, type) in layout.fieldTypes.enumerated() {
            if values[i].isNull {
                RecordCodec.markNull(field: i, bitmapOffset: bitmap, in: &w)
            } else {
                try FieldCodec.encode(values[i], as: type, into: &w)
            }
        }
        RecordCodec.seal(&w, entityTag: tag, id: id)
        return w.bytes
    }

    /// The stored bytes of object `id` of `entity`.
    static func storedBytes(_ ctx: ReadContext, _ entity: String, _ id: ObjectID) throws -> [UInt8] {
        let binding = try ctx.binding(entity)
        let bytes = try ObjectKey.with(id.rawValue) { try ctx.txn.get(binding.dbi, key: $0) }
        return Array(try #require(bytes))
    }

    static func edgeRows() throws -> [[Value]] {
        let long = String(repeating: "é日本🙂", count: 5_000)
        let doc = try Value.encoding(TestDocument(x: .max, tags: ["", "é"]))
        // label, then TestSchemas.allTypes in order.
        return [
            [.string(""), .int64(.min), .int32(.min), .int16(.min), .double(-.infinity), .float(.nan), .bool(false),
             .string(""), .date(.distantPast), .data(Data()), .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))),
             .url(URL(string: "a")!), .decimal(.nan), doc],
            [.string("#A1B2C3"), .int64(.max), .int32(.max), .int16(.max), .double(.greatestFiniteMagnitude),
             .float(-.leastNonzeroMagnitude), .bool(true), .string(long), .date(.distantFuture),
             .data(Data(repeating: 0xAB, count: 1 << 20 | 3)), .uuid(UUID()), .url(URL(string: "https://例え.jp/パス?q=1#f")!),
             .decimal(Decimal(string: "-12345678901234567890.123456789")!), doc],
            // Nulls on both sides of the bitmap's first byte (fields 0...7, then 8...13).
            [.string("nulls"), .int64(0), .null, .int16(-1), .null, .float(0), .null, .string("e\u{301}\u{0}"), .null, .data(Data([0])),
             .null, .url(URL(fileURLWithPath: "/tmp/with space/ü.txt")), .null, .null],
            [.string("all null")] + Array(repeating: .null, count: 13),
        ]
    }

    @Test("a value's type code is the code of the attribute type that stores it as it is, on every case")
    func valueCodesAreTheirTypesCodes() throws {
        let values = try Self.edgeRows()[0] + [.codable(Data("{}".utf8)), .null]
        #expect(Set(values.map(\.caseName)).count == 14, "every case of Value")
        for value in values {
            let expected = value.storageType.map(TypeCode.code) ?? 0
            #expect(TypeCode.code(of: value) == expected, "\(value.caseName)")
        }
    }

    @Test("a dynamic insert of values of exact types stores the reference bytes, on every attribute type")
    func exactValuesEncodeAsTheReference() throws {
        let store = try Store.temporary(schema: try TestSchemas.everyType())
        defer { store.close() }
        let rows = try Self.edgeRows()
        let names = ["label"] + TestSchemas.allTypes.map(TestSchemas.attributeName)
        let ids = try store.write { ctx in try rows.map { try ctx.insert("Sample", orderedValues: $0) } }
        try store.read { ctx in
            let binding = try ctx.binding("Sample")
            for (row, id) in zip(rows, ids) {
                let expected = try Self.reference(row, layout: binding.current.layout, tag: binding.tag, id: id.rawValue)
                #expect(try Self.storedBytes(ctx, "Sample", id) == expected)
                let object = try #require(try ctx.object(id, of: "Sample"))
                for (name, value) in zip(names, row) { #expect(object[name] == value, "\(name)") }
            }
        }
    }

    @Test("values that need converting take the validating path and store the same bytes as exact ones")
    func convertedValuesStoreTheSameBytes() throws {
        let schema = try Schema("v1") {
            Entity("Counter") {
                Attribute("small", .int16)
                Attribute("medium", .int32)
                Attribute("ratio", .float)
                Attribute("name", .string)
            }
        }
        let store = try Store.temporary(schema: schema)
        defer { store.close() }
        let (exact, converted) = try store.write { ctx in
            (try ctx.insert("Counter", orderedValues: [.int16(-7), .int32(70_000), .float(0.5), .string("n")]),
             try ctx.insert("Counter", orderedValues: [.int64(-7), .int64(70_000), .double(0.5), .string("n")]))
        }
        try store.read { ctx in
            let a = try Self.storedBytes(ctx, "Counter", exact), b = try Self.storedBytes(ctx, "Counter", converted)
            // Only the checksum differs: it covers the object's identifier.
            #expect(a.dropLast(4) == b.dropLast(4))
            #expect(try ctx.object(converted, of: "Counter")?["medium"] == .int32(70_000))
        }
    }

    @Test("a refused insert (required null, a value of another type) stores nothing and uses no identifier")
    func refusedInsertsLeaveNoTrace() throws {
        let schema = try Schema("v1") {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("count", .int32)
                Attribute("note", .string, isOptional: true)
            }
        }
        let store = try Store.temporary(schema: schema)
        defer { store.close() }
        let first = try store.write { ctx in try ctx.insert("Item", orderedValues: [.string("a"), .int32(1), .null]) }
        try store.write { ctx in
            #expect {
                try ctx.insert("Item", orderedValues: [.null, .int32(1), .null])
            } throws: { ($0 as? StoreError)?.code == .missingRequiredValue }
            #expect {
                try ctx.insert("Item", orderedValues: [.string("b"), .string("one"), .null])
            } throws: { ($0 as? StoreError)?.code == .invalidValue }
            #expect {
                try ctx.insert("Item", orderedValues: [.string("b"), .int64(1 << 40), .null])
            } throws: { ($0 as? StoreError)?.code == .invalidValue }
            #expect(try ctx.count("Item") == 1)
            // The refused inserts took no identifier: the next one follows the first.
            let next = try ctx.insert("Item", orderedValues: [.string("c"), .int32(3), .string("")])
            #expect(next.rawValue == first.rawValue + 1)
        }
        let count = try store.read { ctx in try ctx.count("Item") }
        #expect(count == 2)
    }

    @Test("an entity with a transient attribute checks its value's type and stores only the other fields")
    func transientAttributes() throws {
        let schema = try Schema("v1") {
            Entity("Item") {
                Attribute("name", .string)
                Attribute("scratch", .int64, isOptional: true, isTransient: true)
                Attribute("count", .int32)
            }
        }
        let store = try Store.temporary(schema: schema)
        defer { store.close() }
        let id = try store.write { ctx in try ctx.insert("Item", orderedValues: [.string("a"), .int64(5), .int32(2)]) }
        _ = try store.write { ctx in
            #expect {
                try ctx.insert("Item", orderedValues: [.string("a"), .string("x"), .int32(2)])
            } throws: { ($0 as? StoreError)?.code == .invalidValue }
        }
        try store.read { ctx in
            let object = try #require(try ctx.object(id, of: "Item"))
            #expect(object["name"] == .string("a"))
            #expect(object["scratch"] == .null)
            #expect(object["count"] == .int32(2))
            let binding = try ctx.binding("Item")
            let expected = try Self.reference([.string("a"), .int32(2)], layout: binding.current.layout, tag: binding.tag, id: id.rawValue)
            #expect(try Self.storedBytes(ctx, "Item", id) == expected)
        }
    }

    @Test("an entity of more than eight fields marks nulls in the right byte of the bitmap")
    func wideBitmap() throws {
        let names = (0..<19).map { "f\($0)" }
        let schema = try Schema("v1", entities: [Entity("Wide", attributes: names.map { Attribute($0, .int16, isOptional: true) }, relationships: [])])
        let store = try Store.temporary(schema: schema)
        defer { store.close() }
        let rows: [[Value]] = (0..<19).map { n in (0..<19).map { $0 == n || $0 % 7 == 0 ? .null : .int16(Int16($0)) } }
        let ids = try store.write { ctx in try rows.map { try ctx.insert("Wide", orderedValues: $0) } }
        try store.read { ctx in
            let binding = try ctx.binding("Wide")
            for (row, id) in zip(rows, ids) {
                #expect(try Self.storedBytes(ctx, "Wide", id) == (try Self.reference(row, layout: binding.current.layout, tag: binding.tag, id: id.rawValue)))
                let object = try #require(try ctx.object(id, of: "Wide"))
                for (name, value) in zip(names, row) { #expect(object[name] == value) }
            }
        }
    }

    /// CRC-32C computed bit by bit (the definition).
    static func bitwiseCRC32C(_ bytes: [UInt8], seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        for b in bytes {
            crc ^= UInt32(b)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    @Test("the checksum is CRC-32C for every length and alignment, tails of 1 to 7 bytes included")
    func checksumMatchesTheDefinition() {
        #expect(Checksum.crc32c(Array("123456789".utf8)) == 0xE306_9283)
        let data: [UInt8] = (0..<80).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7 ^ $0 >> 3) }
        for start in 0..<8 {
            for length in 0...(data.count - start) {
                let slice = Array(data[start..<(start + length)])
                #expect(Checksum.crc32c(slice) == Self.bitwiseCRC32C(slice), "start \(start) length \(length)")
                #expect(Checksum.crc32c(slice, seed: 0x1234_5678) == Self.bitwiseCRC32C(slice, seed: 0x1234_5678))
                // A record's checksum: its 12-byte key, then its bytes, in one call.
                let key = Array(data[(80 - 12)...])
                let concatenated = key.withUnsafeBytes { k in slice.withUnsafeBytes { Checksum.crc32c(k, then: $0) } }
                #expect(concatenated == Self.bitwiseCRC32C(key + slice), "key then start \(start) length \(length)")
            }
        }
    }

    /// The byte-at-a-time table of CRC-32C, built from the definition once.
    static let crcTable: [UInt32] = (0..<256).map { i in
        var c = UInt32(i)
        for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        return c
    }

    /// CRC-32C byte by byte through ``crcTable`` (for long inputs, where bit by bit is slow).
    static func tableCRC32C(_ bytes: ArraySlice<UInt8>, seed: UInt32 = 0) -> UInt32 {
        var crc = ~seed
        for b in bytes { crc = crcTable[Int(UInt8(truncatingIfNeeded: crc) ^ b)] ^ (crc >> 8) }
        return ~crc
    }

    @Test("records of 96 bytes and more (checksummed in three streams) get the checksum of the definition, at every length, block count and alignment")
    func longRecordsMatchTheDefinition() {
        var random = SeededGenerator(seed: 0xC3C3)
        let data: [UInt8] = (0..<3_400).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(Self.tableCRC32C(data[0..<200]) == Self.bitwiseCRC32C(Array(data[0..<200])))
        // Every length to 600, then to 3,390 in steps of 11 (fewer than the 24 bytes that give each stream one more
        // 8-byte block): every block count a stream takes (4 to 64), rounds of three full streams (1,536 bytes)
        // followed by more, and tails of every size.
        let lengths = Array(0...600) + Array(stride(from: 601, through: 3_390, by: 11))
        for start in 0..<8 {
            for length in lengths where start + length <= data.count {
                let slice = data[start..<(start + length)]
                let expected = Self.tableCRC32C(slice)
                let got = slice.withUnsafeBytes { Checksum.crc32c($0) }
                #expect(got == expected, "start \(start) length \(length)")
                let seeded = slice.withUnsafeBytes { Checksum.crc32c($0, seed: 0x9E37_79B9) }
                #expect(seeded == Self.tableCRC32C(slice, seed: 0x9E37_79B9), "seeded, start \(start) length \(length)")
                if got != expected { return }
            }
        }
        // A record's checksum (key, then bytes) over a long record.
        let key = Array(data[0..<12])
        let record = Array(data[100..<1_300])
        let concatenated = key.withUnsafeBytes { k in record.withUnsafeBytes { Checksum.crc32c(k, then: $0) } }
        #expect(concatenated == Self.tableCRC32C((key + record)[...]))
    }

    @Test("a UUID field holds its uuid bytes in order, and reads back as the UUID Foundation builds from them, at any alignment")
    func uuidFieldsAreTheirBytes() {
        var random = SeededGenerator(seed: 0x0DDB_A11)
        for _ in 0..<200 {
            let bytes: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255, using: &random) }
            let made = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            for offset in 0..<8 {
                var w = BinaryWriter(capacity: 0)
                for _ in 0..<offset { w.u8(0xEE) }
                w.uuid(made)
                #expect(Array(w.buffer) == Array(repeating: 0xEE, count: offset) + bytes, "offset \(offset)")
                let read = w.buffer.withUnsafeBytes { UUID.loaded(from: $0.baseAddress! + offset) }
                #expect(read == made && read.uuidString == made.uuidString, "offset \(offset)")
            }
        }
        // Where a UUID is not its bytes, reads take Foundation's initializer; this platform's is.
        #expect(UUID.isItsBytes)
    }
}
