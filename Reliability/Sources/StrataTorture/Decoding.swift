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
        /// Records accepted although they differ from what was sealed — changed bytes, or another object ID —
        /// with the checksum not recomputed (must stay 0).
        var silentAccepts = 0
        /// Valid inputs (seed records as stored and resealed, metadata as written): each must decode, records
        /// to exactly the values they were encoded from.
        var valid = 0
        var validDecoded = 0
        var categories: [String: Int] = [:]
        /// Inputs refused with a typed error, per category.
        var rejectedBy: [String: Int] = [:]
        var problems: [String] = []

        mutating func problem(_ s: String) { if problems.count < 20 { problems.append(s) } }
    }

    /// The values a record of the older layout 1 reads as: its first 13 fields as the attributes (a null
    /// `i16` read as the default 7), `added` the constant "added later", the dropped field gone.
    static func oldLayoutValues(_ fields: [Value]) -> [String: Value] {
        var out: [String: Value] = [:]
        for (k, (name, _)) in DecoderEntryPoints.RecordFixture.attributeTypes.prefix(13).enumerated() { out[name] = fields[k] }
        if out["i16"] == .null { out["i16"] = .int16(7) }
        out["added"] = .string("added later")
        return out
    }

    /// Valid records of the fixture entity: every type, nulls, edge values, both layouts — each with the values
    /// it must decode to (every attribute; null where none was given).
    static func seedRecords(_ fixture: DecoderEntryPoints.RecordFixture) throws -> [(id: UInt64, bytes: [UInt8], values: [String: Value])] {
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
        var out: [(UInt64, [UInt8], [String: Value])] = []
        let everyAttribute = Dictionary(uniqueKeysWithValues: DecoderEntryPoints.RecordFixture.attributeTypes.map { ($0.0, Value.null) })
        for (i, v) in values.enumerated() {
            let id = UInt64(i + 1) * 977
            out.append((id, try fixture.encode(v, id: id), everyAttribute.merging(v) { _, given in given }))
        }
        // Records of the older layout (with a field dropped since, and one read with a default).
        let old: [[Value]] = [
            Array(repeating: Value.null, count: 14),
            [.int64(5), .int32(6), .null, .double(1), .float(2), .bool(true), "s", .date(Date(timeIntervalSinceReferenceDate: 0)),
             .data(Data([1, 2])), .uuid(UUID(uuid: (9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6))), .url(URL(string: "http://x")!), .decimal(1), point, "dropped"],
            [.null, .null, .int16(9), .null, .null, .null, .string(String(repeating: "é", count: 100)), .null, .null, .null, .null, .null, .null, "gone"],
        ]
        for (i, f) in old.enumerated() { out.append((UInt64(100 + i), try fixture.encodeOldLayout(f, id: UInt64(100 + i)), oldLayoutValues(f))) }
        return out
    }

    /// `decode-table`: at least 8,000 deterministic malformed inputs. Prints `DECODE <json tally>`.
    static func table(_ o: Options) throws -> Int32 {
        guard let fixture = DecoderEntryPoints.RecordFixture.shared else { throw TortureError("no fixture") }
        var t = Tally()
        /// Tallies one input. `sealedAsIs`: the checksum was left as stored; `changed`: the input differs from
        /// what was sealed (bytes or object ID), so with the checksum as stored it must be refused.
        func record(_ category: String, _ outcome: DecoderEntryPoints.Outcome, sealedAsIs: Bool, changed: Bool) {
            t.inputs += 1
            t.categories[category, default: 0] += 1
            switch outcome {
            case .rejected: t.rejected += 1; t.rejectedBy[category, default: 0] += 1
            case .accepted:
                t.accepted += 1
                if sealedAsIs && changed { t.silentAccepts += 1; t.problem("\(category): accepted although its checksum no longer matches") }
            case .oracleViolation(let why):
                t.oracleViolations += 1
                t.problem("\(category): \(why)")
            }
        }
        /// A valid record must decode, as stored and resealed, to exactly the values it was encoded from.
        func expectValid(_ id: UInt64, _ bytes: [UInt8], _ values: [String: Value]) {
            for (label, input) in [("as stored", bytes), ("resealed", DecoderEntryPoints.resealed(bytes, entityTag: fixture.entityTag, id: id))] {
                t.valid += 1
                do {
                    let decoded = try input.withUnsafeBytes { try fixture.decode($0, id: id) }
                    if decoded == values { t.validDecoded += 1 } else {
                        let diff = values.keys.sorted().filter { decoded[$0] != values[$0] }.map { "\($0): \(decoded[$0] ?? .null) ≠ \(values[$0] ?? .null)" }
                        t.problem("valid record \(id) (\(label)) decoded to other values: \(diff.prefix(3))")
                    }
                } catch {
                    t.problem("valid record \(id) (\(label)) refused: \(error)")
                }
            }
        }
        func feed(_ category: String, _ id: UInt64, _ original: [UInt8], _ bytes: [UInt8], wrongID: Bool = false) {
            let changed = bytes != original || wrongID
            // As stored: the checksum must refuse every change.
            var outcome = bytes.withUnsafeBytes { fixture.roundTrip($0, id: id) }
            record(category + " (as stored)", outcome, sealedAsIs: true, changed: changed)
            // Resealed: the field decoders see the damaged bytes.
            let sealed = DecoderEntryPoints.resealed(bytes, entityTag: fixture.entityTag, id: id)
            outcome = sealed.withUnsafeBytes { fixture.roundTrip($0, id: id) }
            record(category + " (resealed)", outcome, sealedAsIs: false, changed: changed)
        }

        for (id, record, values) in try seedRecords(fixture) {
            let n = record.count
            let body = n - 4
            expectValid(id, record, values)
            feed("valid", id, record, record)
            feed("wrong object ID", id &+ 1, record, record, wrongID: true)  // the checksum covers the key
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
                let outcome = bytes.withUnsafeBytes { DecoderEntryPoints.roundTripMetadata(key, $0) }
                record("\(key) \(category)", outcome, sealedAsIs: false, changed: bytes != payload)
                if let wrapped = DecoderEntryPoints.wrapMetadata(key, payload) {
                    let damaged = Array(wrapped.prefix(4)) + bytes  // the original checksum, another payload
                    let enveloped: DecoderEntryPoints.Outcome
                    do {
                        try damaged.withUnsafeBytes { try DecoderEntryPoints.decodeMetadata(key, $0) }
                        enveloped = .accepted
                    } catch { enveloped = .rejected("\(error)") }
                    record("\(key) envelope \(category)", enveloped, sealedAsIs: true, changed: bytes != payload)
                }
            }
            // Valid metadata (payload and envelope as a store writes them) must decode.
            t.valid += 2
            if case .accepted = payload.withUnsafeBytes({ DecoderEntryPoints.roundTripMetadata(key, $0) }) { t.validDecoded += 1 } else { t.problem("valid \(key) payload refused") }
            if let wrapped = DecoderEntryPoints.wrapMetadata(key, payload),
               (try? wrapped.withUnsafeBytes { try DecoderEntryPoints.decodeMetadata(key, $0) }) != nil {
                t.validDecoded += 1
            } else {
                t.problem("valid \(key) envelope refused")
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
        return t.oracleViolations == 0 && t.silentAccepts == 0 && t.validDecoded == t.valid ? 0 : 4
    }

    /// `decode-files <dir>`: every file of a directory (the fuzzer's `FailCases/`) through the fuzz entry
    /// point. Prints `FILE <name> <outcome>` and `DECODE <json tally>`.
    static func files(_ o: Options) throws -> Int32 {
        var t = Tally()
        let names = try FileManager.default.contentsOfDirectory(atPath: o.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".md") }.sorted()
        for name in names {
            let data = try Data(contentsOf: URL(fileURLWithPath: o.path + "/" + name))
            let outcome = data.withUnsafeBytes { DecoderEntryPoints.fuzzOne($0) }
            t.inputs += 1
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
        for (i, (_, record, _)) in try seedRecords(fixture).enumerated() {
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
