#if ReliabilityHooks
import Foundation

/// The decoders of everything Strata reads from disk, exposed for the reliability suite's malformed-input
/// tests and the libFuzzer target in `Fuzz/` (`@_spi(Testing)`). Each entry point runs the production code
/// path and reports a failure as the typed error the store would throw; none of them traps on any input.
@_spi(Testing)
public enum DecoderEntryPoints {
    /// What decoding one fuzz input did.
    public enum Outcome: Sendable, Equatable {
        /// The input was refused with a typed error.
        case rejected(String)
        /// The input decoded, and re-encoding what it decoded gave the same values back.
        case accepted
        /// The input decoded but the round trip changed it: a decoder bug (the fuzzer stops here).
        case oracleViolation(String)
    }

    /// An entity with an attribute of every type, bound to a catalog the way a store binds it, with two
    /// layouts: layout 2 is current (every attribute a field); layout 1 is older, with a field that was
    /// dropped since, a field read with a default for null, and an attribute added since (a constant).
    public final class RecordFixture: Sendable {
        /// The fixture entity's attributes, in order.
        public static let attributeTypes: [(String, AttributeType)] = [
            ("i64", .int64), ("i32", .int32), ("i16", .int16), ("dbl", .double), ("flt", .float), ("flag", .bool),
            ("str", .string), ("when", .date), ("blob", .data), ("uid", .uuid), ("link", .url), ("dec", .decimal),
            ("point", .codable("Point")), ("added", .string),
        ]
        /// The field types of layout 1 (the older layout): the first 13 attributes and a dropped string.
        public static let oldLayoutTypes: [AttributeType] = attributeTypes.prefix(13).map(\.1) + [.string]
        /// The fixture's entity tag (records' checksums cover it).
        public let entityTag: UInt32 = 5
        let binding: EntityBinding

        /// The shared fixture.
        public static let shared: RecordFixture? = try? RecordFixture()

        init() throws {
            let attributes = RecordFixture.attributeTypes.map { name, type in Attribute(name, type, isOptional: true) }
            let schema = try Schema("fixture", entities: [Entity("Wide", attributes: attributes, relationships: [])])
            let names = RecordFixture.attributeTypes.map(\.0)
            var oldSources: [FieldSource] = (0..<13).map { .field($0) }
            oldSources[2] = .fieldOrDefault(2, .int16(7))
            oldSources.append(.constant(.string("added later")))
            let old = Catalog.LayoutEntry(layout: RecordLayout(id: 1, fieldTypes: RecordFixture.oldLayoutTypes), sources: oldSources)
            let current = Catalog.LayoutEntry(layout: RecordLayout(id: 2, fieldTypes: RecordFixture.attributeTypes.map(\.1)),
                                              sources: (0..<14).map { .field($0) })
            var catalog = Catalog()
            catalog.nextTag = 6
            catalog.entities = [Catalog.EntityEntry(tag: 5, name: "Wide", database: "e5-1", attributes: names,
                                                    layouts: [old, current], currentLayout: 2)]
            let model = try BoundModel(schema: schema, catalog: catalog, generation: 1,
                                       meta: MetaTable(dbi: 0, path: "fixture"), handles: ["e5-1": 1])
            binding = try model.entity("Wide")
        }

        /// Encodes values (by attribute name; missing ones are null) as a sealed record of the current layout.
        public func encode(_ values: [String: Value], id: UInt64) throws -> [UInt8] {
            var row = binding.initialValues
            for (name, value) in values {
                guard let i = binding.position(of: name) else { throw StoreError.unknownAttribute(entity: "Wide", name: name) }
                row[i] = value
            }
            try binding.validate(&row)
            var w = BinaryWriter(capacity: 256)
            try binding.encode(row, id: id, into: &w)
            return w.bytes
        }

        /// Encodes field values (nil = null) as a sealed record of the older layout 1.
        public func encodeOldLayout(_ fields: [Value], id: UInt64) throws -> [UInt8] {
            let layout = RecordLayout(id: 1, fieldTypes: RecordFixture.oldLayoutTypes)
            guard fields.count == layout.fieldTypes.count else {
                throw StoreError.typeMismatch(expected: "\(layout.fieldTypes.count) fields", actual: "\(fields.count)")
            }
            var w = BinaryWriter(capacity: 256)
            let bitmap = RecordCodec.begin(layout, into: &w)
            for (i, value) in fields.enumerated() {
                if value.isNull {
                    RecordCodec.markNull(field: i, bitmapOffset: bitmap, in: &w)
                } else {
                    do { try FieldCodec.encode(value, as: layout.fieldTypes[i], into: &w) } catch {
                        throw StoreError.invalidValue(entity: "Wide", attribute: "field \(i)", expected: layout.fieldTypes[i].name, actual: error.reason)
                    }
                }
            }
            RecordCodec.seal(&w, entityTag: entityTag, id: id)
            return w.bytes
        }

        /// Decodes a stored record exactly as a store reads one (checksum, format, layout, projection).
        /// - Throws: ``StoreError/corruptedRecord(entity:id:reason:)``.
        public func decode(_ bytes: UnsafeRawBufferPointer, id: UInt64) throws -> [String: Value] {
            let values = try binding.decodeValues(bytes, id: id)
            var out: [String: Value] = [:]
            for (i, name) in binding.attributeNames.enumerated() { out[name] = values[i] }
            return out
        }

        /// Decodes a record through a model type's generated code (which must declare the fixture's entity,
        /// "Wide") and checks it against the store's own decoder: both must refuse the same records, the
        /// typed decoder's errors must name the object, and what it reads must be what the dynamic decoder
        /// reads, attribute by attribute (Codable values are decoded by Foundation's JSON decoder: a JSON
        /// document that does not fit the Swift type is refused with a typed error, not compared).
        public func modelOutcome<T: EntityModel>(_ type: T.Type, _ bytes: UnsafeRawBufferPointer, id: UInt64) -> Outcome {
            let dynamic = Result { try binding.decodeValues(bytes, id: id) }
            let typed = Result { () throws -> T in
                var reader = try ModelReader(record: bytes, id: id, binding: binding, context: nil)
                let value = try T(from: &reader)
                try reader.finish()
                return value
            }
            // The lean reader (every field located at once, plain fields read in place: what typed fetches,
            // borrowed records and aggregates read through) must agree with the field-by-field one.
            let lean = Result { () throws -> T in
                try withUnsafeTemporaryAllocation(of: Int.self, capacity: RecordFields.fieldCapacity(of: binding)) { offsets in
                    var reader = try ModelReader(record: bytes, id: id, binding: binding, context: nil, offsets: offsets.baseAddress!)
                    let value = try T(from: &reader)
                    try reader.finish()
                    return value
                }
            }
            switch (typed, lean) {
            case (.success(let a), .success(let b)):
                guard let wa = written(a), let wb = written(b), wa == wb else {
                    return .oracleViolation("the lean reader read other values than the field-by-field one")
                }
            case (.failure, .failure(let error)):
                guard let store = error as? StoreError, store.objectID == ObjectID(rawValue: id) || store.code == .invalidValue else {
                    return .oracleViolation("the lean reader's error does not name the object: \(error)")
                }
            case (.success, .failure(let error)):
                return .oracleViolation("the lean reader refused a record the field-by-field one reads: \(error)")
            case (.failure(let error), .success):
                return .oracleViolation("the lean reader accepted a record the field-by-field one refuses (\(error))")
            }
            switch (dynamic, typed) {
            case (.failure, .failure(let error)):
                guard let store = error as? StoreError else { return .oracleViolation("the generated decoder threw an untyped error: \(error)") }
                guard store.objectID == ObjectID(rawValue: id) || store.code == .invalidValue else {
                    return .oracleViolation("the generated decoder's error does not name the object: \(store)")
                }
                return .rejected(DecoderEntryPoints.describe(error))
            case (.failure(let error), .success):
                return .oracleViolation("the generated decoder accepted a record the store's decoder refuses (\(error))")
            case (.success, .failure(let error)):
                if let store = error as? StoreError, store.code == .invalidValue, store.objectID == ObjectID(rawValue: id) {
                    return .rejected(DecoderEntryPoints.describe(error))
                }
                return .oracleViolation("the generated decoder refused a record the store's decoder reads: \(error)")
            case (.success(let values), .success(let value)):
                var writer = ModelWriter(binding: binding, collectingValues: true)
                do { try value.write(to: &writer) } catch { return .oracleViolation("the decoded value could not be written again: \(error)") }
                for slot in values.indices where slot < writer.values.count {
                    if case .codable = binding.attributeTypes[slot] { continue }
                    guard writer.values[slot] == values[slot] else {
                        return .oracleViolation("attribute \(binding.attributeNames[slot]): the generated decoder read \(writer.values[slot]), the store's decoder \(values[slot])")
                    }
                }
                return .accepted
            }
        }

        /// A model value's attributes as its generated code writes them (nil when it cannot be written); Codable
        /// values as null (their JSON is compared through the dynamic decoder).
        func written<T: EntityModel>(_ value: T) -> [Value]? {
            var writer = ModelWriter(binding: binding, collectingValues: true)
            guard (try? value.write(to: &writer)) != nil else { return nil }
            return writer.values.enumerated().map { slot, v in
                if slot < binding.attributeTypes.count, case .codable = binding.attributeTypes[slot] { return .null }
                return v
            }
        }

        /// Decodes, and when that succeeds re-encodes and decodes again: the values must not change.
        public func roundTrip(_ bytes: UnsafeRawBufferPointer, id: UInt64) -> Outcome {
            let first: [Value]
            do { first = try binding.decodeValues(bytes, id: id) } catch { return .rejected(DecoderEntryPoints.describe(error)) }
            do {
                var row = first
                try binding.validate(&row)
                var w = BinaryWriter(capacity: 256)
                try binding.encode(row, id: id, into: &w)
                let second = try binding.decodeValues(w.buffer, id: id)
                return second == first ? .accepted : .oracleViolation("values changed in a round trip: \(first) → \(second)")
            } catch {
                return .oracleViolation("decoded values could not be stored again: \(error)")
            }
        }
    }

    /// Replaces the last four bytes of a record with the checksum its other bytes need (so a mutated record
    /// gets past the checksum and exercises the field decoders). Shorter inputs are returned unchanged.
    public static func resealed(_ record: [UInt8], entityTag: UInt32, id: UInt64) -> [UInt8] {
        guard record.count >= RecordFormat.checksumSize else { return record }
        var out = record
        let bodyEnd = record.count - RecordFormat.checksumSize
        let crc = record.withUnsafeBytes {
            RecordCodec.checksum(body: UnsafeRawBufferPointer(rebasing: $0[0..<bodyEnd]), entityTag: entityTag, id: id)
        }
        withUnsafeBytes(of: crc.littleEndian) { c in for i in 0..<4 { out[bodyEnd + i] = c[i] } }
        return out
    }

    /// The metadata keys a store holds (`format`, `model`, `identity`, `catalog`, `state`, `counter`,
    /// `history`, `journal`).
    public static let metadataKeys: [String] = MetaKey.allCases.map(\.rawValue)

    /// Wraps a metadata payload in its checksummed envelope, as a store writes it.
    public static func wrapMetadata(_ key: String, _ payload: [UInt8]) -> [UInt8]? {
        guard let k = MetaKey(rawValue: key) else { return nil }
        return MetaEnvelope.wrap(k, payload)
    }

    /// Decodes a metadata value (envelope and payload) exactly as opening a store does.
    /// - Throws: ``StoreError/corrupted(path:reason:)`` with a metadata reason.
    public static func decodeMetadata(_ key: String, _ bytes: UnsafeRawBufferPointer) throws {
        guard let k = MetaKey(rawValue: key) else { throw StoreError.corrupted(path: "fuzz", reason: .metadata("unknown key \(key)")) }
        do {
            let payload = try MetaEnvelope.unwrap(k, bytes)
            try decodePayload(k, payload)
        } catch let failure as DecodeFailure {
            throw StoreError.corrupted(path: "fuzz", reason: .metadata(failure.reason))
        }
    }

    /// Decodes a metadata payload (without its envelope), re-encoding what can be re-encoded and checking the
    /// round trip.
    public static func roundTripMetadata(_ key: String, _ payload: UnsafeRawBufferPointer) -> Outcome {
        guard let k = MetaKey(rawValue: key) else { return .rejected("unknown key") }
        do {
            switch k {
            case .catalog:
                let catalog = try Catalog(decoding: payload)
                let again = try catalog.encoded().withUnsafeBytes { try Catalog(decoding: $0) }
                return again == catalog ? .accepted : .oracleViolation("catalog changed in a round trip")
            case .identity:
                let identity = try IdentityRecord(decoding: payload)
                let again = try identity.encoded().withUnsafeBytes { try IdentityRecord(decoding: $0) }
                return again == identity ? .accepted : .oracleViolation("identity changed in a round trip")
            case .history:
                let history = try HistoryRecord.decode(payload)
                let again = try HistoryRecord.encode(history).withUnsafeBytes { try HistoryRecord.decode($0) }
                return again == history ? .accepted : .oracleViolation("history changed in a round trip")
            case .journal:
                let journal = try MigrationJournal.decode(payload)
                let again = try journal.encoded().withUnsafeBytes { try MigrationJournal.decode($0) }
                return again == journal ? .accepted : .oracleViolation("journal changed in a round trip")
            default:
                try decodePayload(k, payload)
                return .accepted
            }
        } catch {
            return .rejected(describe(error))
        }
    }

    static func decodePayload(_ key: MetaKey, _ payload: UnsafeRawBufferPointer) throws {
        switch key {
        case .format: _ = try FormatRecord(decoding: payload)
        case .model:
            do { _ = try Schema(jsonData: Data(payload)) } catch { throw DecodeFailure("model: \(error)") }
        case .identity: _ = try IdentityRecord(decoding: payload)
        case .catalog: _ = try Catalog(decoding: payload)
        case .state: _ = try StateRecord(decoding: payload)
        case .counter: _ = try CounterRecord.decode(payload)
        case .history: _ = try HistoryRecord.decode(payload)
        case .journal: _ = try MigrationJournal.decode(payload)
        case .maintenance: _ = try MaintenanceRecord(decoding: payload)
        case .changeHistory: _ = try HistoryState(decoding: payload)
        case .encryption: _ = try EncryptionRecord(decoding: payload)
        case .keyRotation: _ = try KeyRotationRecord(decoding: payload)
        }
    }

    /// Valid metadata payloads of a real store's kinds, as seeds for mutation: a catalog, an identity, a
    /// history, a state, a counter, a format record, a journal, an encryption record and a key rotation's progress.
    public static func sampleMetadata() -> [(key: String, payload: [UInt8])] {
        guard let schema = try? Schema("v1", entities: [
            Entity("Post", attributes: [Attribute("title", .string), Attribute("views", .int64, isIndexed: true),
                                        Attribute("when", .date, isOptional: true, defaultValue: nil)],
                   relationships: [Relationship("tags", to: "Tag", inverse: "posts", toMany: true)]),
            Entity("Tag", attributes: [Attribute("name", .string, isUnique: true)],
                   relationships: [Relationship("posts", to: "Post", inverse: "tags", toMany: true)]),
        ]) else { return [] }
        var catalog = Catalog.initial(for: schema)
        catalog.garbage = ["e1-1"]
        var out: [(String, [UInt8])] = [
            ("catalog", catalog.encoded()),
            ("identity", IdentityRecord(schema: schema).encoded()),
            ("history", HistoryRecord.encode(["v0", "v1"])),
            ("state", StateRecord(generation: 3, migrating: true).encoded()),
            ("counter", CounterRecord.encode(1234)),
            ("format", FormatRecord.current().encoded()),
            ("model", Array(schema.jsonData(prettyPrinted: false))),
        ]
        let journal = MigrationJournal(
            sourceVersion: "v1", destinationVersion: "v2", sourceFingerprint: schema.fingerprint.hex,
            destinationFingerprint: schema.fingerprint.hex, destinationModel: schema.jsonData(prettyPrinted: false),
            destinationCatalog: Data(catalog.encoded()), hasStage: false, stagingDatabases: ["e1-9"],
            retiredDatabases: ["e1-1"], tasks: [.rewrite(entity: "Post", source: "Post"), .switchOver],
            ownerPID: 42, startedAt: 0)
        if let bytes = try? journal.encoded() { out.append(("journal", bytes)) }
        out.append(("encryption", EncryptionRecord(epochs: [
            .init(epoch: 2, salt: Array(repeating: 7, count: StoreCipher.saltSize), check: Array(repeating: 9, count: 32)),
            .init(epoch: 1, salt: Array(repeating: 3, count: StoreCipher.saltSize), check: Array(repeating: 5, count: 32)),
        ]).encoded()))
        var rotation = KeyRotationRecord(total: 500)
        rotation.passed = 120
        rotation.done = ["e1-1"]
        rotation.cursorDatabase = "e1-2"
        rotation.cursorKey = [0, 0, 0, 0, 0, 0, 0, 42]
        out.append(("keyRotation", rotation.encoded()))
        return out
    }

    /// One fuzz input: the first byte picks the decoder, the rest is its input.
    ///
    /// - 0: a record, as stored (the checksum usually refuses it);
    /// - 1: a record whose checksum is recomputed first, so the field decoders see the bytes;
    /// - 2…9: a metadata payload (format, model, identity, catalog, state, counter, history, journal);
    /// - 10…: a metadata value in its envelope, for the key picked by the byte.
    public static func fuzzOne(_ data: UnsafeRawBufferPointer, model: (any EntityModel.Type)? = nil) -> Outcome {
        guard let selector = data.first, let fixture = RecordFixture.shared else { return .rejected("empty") }
        let input = UnsafeRawBufferPointer(rebasing: data[1...])
        let id: UInt64 = 0x0102_0304_0506_0708
        /// The round trip, then (with a model type) the generated decoder against the store's.
        func record(_ bytes: UnsafeRawBufferPointer) -> Outcome {
            let outcome = fixture.roundTrip(bytes, id: id)
            guard let model else { return outcome }
            if case .oracleViolation = outcome { return outcome }
            let typed = fixture.modelOutcome(model, bytes, id: id)
            if case .oracleViolation = typed { return typed }
            return outcome
        }
        switch selector % 24 {
        case 0:
            return record(input)
        case 1:
            let sealed = resealed(Array(input), entityTag: fixture.entityTag, id: id)
            return sealed.withUnsafeBytes { record($0) }
        case let s where s < 10:
            let key = MetaKey.allCases[Int(s - 2) % MetaKey.allCases.count]
            return roundTripMetadata(key.rawValue, input)
        default:
            let key = MetaKey.allCases[Int(selector) % MetaKey.allCases.count]
            do {
                try decodeMetadata(key.rawValue, input)
                return .accepted
            } catch {
                return .rejected(describe(error))
            }
        }
    }

    /// Whether an error is one of Strata's typed errors, and its short description.
    static func describe(_ error: any Error) -> String {
        switch error {
        case let e as StoreError: return "StoreError: \(e)"
        case let e as DecodeFailure: return "DecodeFailure: \(e.reason)"
        default: return "untyped \(type(of: error)): \(error)"
        }
    }
}
#endif
