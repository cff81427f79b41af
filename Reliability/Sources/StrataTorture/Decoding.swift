@_spi(Testing) import Strata
import Foundation
import StrataTortureKit

/// Malformed input for every decoder of what Strata reads from disk (records, metadata), through the same
/// entry points as the libFuzzer target in `Fuzz/`.
enum Decoding {
    struct Tally: Codable {
        var inputs = 0
        var rejected = 0
        var accepted = 0
        var oracleViolations = 0
        /// Mutated records accepted although their checksum was not recomputed (must stay 0).
        var silentAccepts = 0
        var slowest = 0.0
        var slowestCategory = ""
        var categories: [String: Int] = [:]
        var problems: [String] = []
    }

    /// Valid records of the fixture entity: every type, nulls, edge values, both layouts.
    static func seedRecords(_ fixture: DecoderEntryPoints.RecordFixture) throws -> [(id: UInt64, bytes: [UInt8])] {
        let point = Value.codable(Data("{\"x\":1,\"y\":2}".utf8))
        var values: [[String: Value]] = [
            [:],
            ["i64": .int64(0), "str": "", "blob": .data(Data())],
            ["i64": .int64(.max), "i32": .int32(.min), "i16": .int16(-1), "dbl": .double(.nan), "flt": .float(-0.0), "flag": true],
            ["str": "héllo wörld 😀", "when": .date(Date(timeIntervalSinceReferenceDate: 1e9)), "uid": .uuid(UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))],
            ["link": .url(URL(string: "https://example.com/a?b=c#d")!), "dec": .decimal(Decimal(string: "12345.678")!), "point": point],
            ["str": .string(String(repeating: "x", count: 300)), "blob": .data(Data((0..<200).map { UInt8($0) }))],
            ["dbl": .double(.infinity), "flt": .float(.leastNonzeroMagnitude), "dec": .decimal(Decimal(string: "-0.000001")!)],
            ["added": "new", "flag": false, "i16": .int16(.max)],
        ]
        for i in 0..<8 {
            var v: [String: Value] = [:]
            for (k, (name, type)) in DecoderEntryPoints.RecordFixture.attributeTypes.enumerated() where (k + i) % 3 != 0 {
                switch type {
                case .int64: v[name] = .int64(Int64(i) * 1_000_003 - 7)
                case .int32: v[name] = .int32(Int32(i) * -77)
                case .int16: v[name] = .int16(Int16(i))
                case .double: v[name] = .double(Double(i) / 3)
                case .float: v[name] = .float(Float(i) * 1.5)
                case .bool: v[name] = .bool(i % 2 == 0)
                case .string: v[name] = .string(String(repeating: "ab€", count: i * 3))
                case .date: v[name] = .date(Date(timeIntervalSinceReferenceDate: Double(i) * 86400))
                case .data: v[name] = .data(Data(repeating: UInt8(i), count: i * 5))
                case .uuid: v[name] = .uuid(UUID(uuid: (UInt8(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, UInt8(i))))
                case .url: v[name] = .url(URL(string: "file:///tmp/\(i)")!)
                case .decimal: v[name] = .decimal(Decimal(i) / 8)
                case .codable: v[name] = point
                }
            }
            values.append(v)
        }
        var out: [(UInt64, [UInt8])] = []
        for (i, v) in values.enumerated() { out.append((UInt64(i + 1) * 977, try fixture.encode(v, id: UInt64(i + 1) * 977))) }
        // Records of the older layout (with a field dropped since, and one read with a default).
        let old: [[Value]] = [
            Array(repeating: Value.null, count: 14),
            [.int64(5), .int32(6), .null, .double(1), .float(2), .bool(true), "s", .date(Date(timeIntervalSinceReferenceDate: 0)),
             .data(Data([1, 2])), .uuid(UUID(uuid: (9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6))), .url(URL(string: "http://x")!), .decimal(1), point, "dropped"],
            [.null, .null, .int16(9), .null, .null, .null, .string(String(repeating: "é", count: 100)), .null, .null, .null, .null, .null, .null, "gone"],
        ]
        for (i, f) in old.enumerated() { out.append((UInt64(100 + i), try fixture.encodeOldLayout(f, id: UInt64(100 + i)))) }
        return out
    }

    /// `decode-table`: at least 8,000 deterministic malformed inputs. Prints `DECODE <json tally>`.
    static func table(_ o: Options) throws -> Int32 {
        guard let fixture = DecoderEntryPoints.RecordFixture.shared else { throw TortureError("no fixture") }
        var t = Tally()
        func record(_ category: String, _ outcome: DecoderEntryPoints.Outcome, started: Date, raw: Bool, mutated: Bool) {
            t.inputs += 1
            t.categories[category, default: 0] += 1
            let elapsed = Date().timeIntervalSince(started)
            if elapsed > t.slowest { t.slowest = elapsed; t.slowestCategory = category }
            switch outcome {
            case .rejected: t.rejected += 1
            case .accepted:
                t.accepted += 1
                if raw && mutated { t.silentAccepts += 1; if t.problems.count < 20 { t.problems.append("\(category): a mutated record was accepted") } }
            case .oracleViolation(let why):
                t.oracleViolations += 1
                if t.problems.count < 20 { t.problems.append("\(category): \(why)") }
            }
        }
        func feed(_ category: String, _ id: UInt64, _ original: [UInt8], _ bytes: [UInt8]) {
            let mutated = bytes != original
            // As stored: the checksum must refuse every change.
            var started = Date()
            var outcome = bytes.withUnsafeBytes { fixture.roundTrip($0, id: id) }
            record(category + " (as stored)", outcome, started: started, raw: true, mutated: mutated)
            // Resealed: the field decoders see the damaged bytes.
            let sealed = DecoderEntryPoints.resealed(bytes, entityTag: fixture.entityTag, id: id)
            started = Date()
            outcome = sealed.withUnsafeBytes { fixture.roundTrip($0, id: id) }
            record(category + " (resealed)", outcome, started: started, raw: false, mutated: mutated)
        }

        for (id, record) in try seedRecords(fixture) {
            let n = record.count
            let body = n - 4
            feed("valid", id, record, record)
            feed("wrong object ID", id &+ 1, record, record)  // the checksum covers the key
            for len in 0..<n { feed("truncation", id, record, Array(record.prefix(len))) }
            for i in 0..<n { var b = record; b.remove(at: i); feed("byte deletion", id, record, b) }
            for i in 0..<body {
                for v: UInt8 in [0x00, 0xFF, 0x80, 0x7F] where record[i] != v {
                    var b = record; b[i] = v; feed("byte set to \(String(v, radix: 16))", id, record, b)
                }
            }
            for bit in 0..<(min(n, 48) * 8) { var b = record; b[bit / 8] ^= 1 << UInt8(bit % 8); feed("bit flip", id, record, b) }
            for extra in 1...8 { feed("trailing garbage", id, record, record.prefix(body) + [UInt8](repeating: 0xAB, count: extra) + record.suffix(4)) }
            for format: UInt8 in [0, 2, 255] { var b = record; b[0] = format; feed("unknown record format", id, record, b) }
            // Layout IDs: unknown, overlong and overflowing varints in place of the layout ID (byte 1).
            for layout: [UInt8] in [[0], [3], [0x7F], [0xFF, 0xFF, 0xFF, 0xFF, 0x0F], [0x82, 0x00], [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],
                                    [UInt8](repeating: 0xFF, count: 11)] {
                var b = record; b.replaceSubrange(1..<2, with: layout); feed("bad layout varint", id, record, b)
            }
            // Length prefixes: wherever a byte could be one, try 0, one past the end, and a huge varint.
            for i in 2..<max(2, body) {
                var b = record; b[i] = UInt8(min(127, n - i)); feed("length past the end", id, record, b)
                var c = record; c.replaceSubrange(i..<(i + 1), with: [0xFF, 0xFF, 0xFF, 0xFF, 0x0F]); feed("length 4 GiB", id, record, c)
            }
        }
        // Metadata: every payload kind, damaged, as a payload and inside its checksummed envelope.
        for (key, payload) in DecoderEntryPoints.sampleMetadata() {
            func meta(_ category: String, _ bytes: [UInt8]) {
                var started = Date()
                let outcome = bytes.withUnsafeBytes { DecoderEntryPoints.roundTripMetadata(key, $0) }
                record("\(key) \(category)", outcome, started: started, raw: false, mutated: true)
                if let wrapped = DecoderEntryPoints.wrapMetadata(key, payload) {
                    let damaged = Array(wrapped.prefix(4)) + bytes  // the original checksum, another payload
                    started = Date()
                    let enveloped: DecoderEntryPoints.Outcome
                    do {
                        try damaged.withUnsafeBytes { try DecoderEntryPoints.decodeMetadata(key, $0) }
                        enveloped = .accepted
                    } catch { enveloped = .rejected("\(error)") }
                    record("\(key) envelope \(category)", enveloped, started: started, raw: true, mutated: bytes != payload)
                }
            }
            meta("valid", payload)
            let step = max(1, payload.count / 150)
            for len in stride(from: 0, to: payload.count, by: step) { meta("truncation", Array(payload.prefix(len))) }
            for i in stride(from: 0, to: payload.count, by: step) {
                for v: UInt8 in [0x00, 0xFF, 0x80] where payload[i] != v { var b = payload; b[i] = v; meta("byte set", b) }
                var d = payload; d.remove(at: i); meta("byte deletion", d)
            }
            meta("huge count", [1] + [UInt8](repeating: 0xFF, count: 9) + [0x01] + payload)
        }
        emit("DECODE \(json(t))")
        return t.oracleViolations == 0 && t.silentAccepts == 0 ? 0 : 4
    }

    /// `decode-files <dir>`: every file of a directory (the fuzzer's `FailCases/`) through the fuzz entry
    /// point. Prints `FILE <name> <outcome>` and `DECODE <json tally>`.
    static func files(_ o: Options) throws -> Int32 {
        var t = Tally()
        let names = try FileManager.default.contentsOfDirectory(atPath: o.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted()
        for name in names {
            let data = try Data(contentsOf: URL(fileURLWithPath: o.path + "/" + name))
            let started = Date()
            let outcome = data.withUnsafeBytes { DecoderEntryPoints.fuzzOne($0) }
            t.inputs += 1
            let elapsed = Date().timeIntervalSince(started)
            if elapsed > t.slowest { t.slowest = elapsed; t.slowestCategory = name }
            switch outcome {
            case .rejected: t.rejected += 1
            case .accepted: t.accepted += 1
            case .oracleViolation(let why): t.oracleViolations += 1; t.problems.append("\(name): \(why)")
            }
            emit("FILE \(name) \(outcome)")
        }
        emit("DECODE \(json(t))")
        return t.oracleViolations == 0 ? 0 : 4
    }

    /// `decode-seeds <dir>`: writes the fuzzer's seed corpus: every seed record (as stored, selector 0, and
    /// for resealing, selector 1) and every metadata payload (selectors 2–9) and envelope (10+).
    static func seeds(_ o: Options) throws -> Int32 {
        guard let fixture = DecoderEntryPoints.RecordFixture.shared else { throw TortureError("no fixture") }
        try FileManager.default.createDirectory(atPath: o.path, withIntermediateDirectories: true)
        var n = 0
        func write(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: URL(fileURLWithPath: o.path + "/" + name))
            n += 1
        }
        // The fuzz entry point decodes records under the ID 0x0102030405060708: reseal for it.
        let id: UInt64 = 0x0102_0304_0506_0708
        for (i, (seedID, record)) in try seedRecords(fixture).enumerated() {
            _ = seedID
            let sealed = DecoderEntryPoints.resealed(record, entityTag: fixture.entityTag, id: id)
            try write("record-\(i)", [0] + sealed)
            try write("record-\(i)-reseal", [1] + sealed)
        }
        let keys = DecoderEntryPoints.metadataKeys
        for (key, payload) in DecoderEntryPoints.sampleMetadata() {
            guard let k = keys.firstIndex(of: key) else { continue }
            try write("meta-\(key)", [UInt8(2 + k)] + payload)
            if let wrapped = DecoderEntryPoints.wrapMetadata(key, payload) {
                // Selector s ≥ 10 decodes the key at index s % 8: pick the first such s.
                let selector = (10...255).first { $0 % 24 >= 10 && $0 % keys.count == k } ?? 10
                try write("envelope-\(key)", [UInt8(selector)] + wrapped)
            }
        }
        emit("SEEDS \(n)")
        return 0
    }
}
