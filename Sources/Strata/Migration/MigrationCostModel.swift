import Foundation

/// Estimates what each task of a migration step writes and how long it takes, from the task's kind, the
/// number of records it goes over and the per-record costs measured on the store (``MigrationCalibration``).
///
/// | task | records | time per record | bytes written per record |
/// |---|---|---|---|
/// | rewrite | the source entity's | read + encode (the transcoder walks every field, copying its bytes or widening it, and seals a new record: about an encode, no values decoded) + put | the record + LMDB's 16 bytes of node and key |
/// | custom instance pass, dynamic policy | the source entity's | decode, and per object created (one per entity the mapping creates): 1.2 × (decode + insert), and for each object after the first a link to it (two reads, two puts); associations are kept as runs (``AssociationRun``), with no put per object | the source record + 48 per created object |
/// | custom instance pass, typed mapping | the source entity's | decode, and per object created: decode + insert, and the links as above | the source record + 48 per created object |
/// | custom instance pass, declared mapping | the source entity's | read, and per object created: encode + put, and for each object after the first its association and two link entries (three puts) and an insert's bookkeeping | the source record + 48 per created object |
/// | custom relationship pass | the source entity's | decode + two puts (both sides of a link) | 48 |
/// | index build | the entity's | decode + put | 40 |
/// | required values check | the entity's | decode | 0 |
/// | link count and uniqueness checks | the entity's | read | 0 |
/// | switch, scripts | — | one durable commit | four pages (the metadata) |
/// | planning | — | the time `explainMigration` itself took to open and read the store (first step) and to infer and plan the step: the migration does the same before it writes | — |
///
/// A custom pass whose source objects are decoded ahead on a second thread
/// (``EntityMapping/decodesSourceAhead(inRelationshipPass:)``, where ``MigrationOptions/decodesAhead`` allows it)
/// counts the larger of the source's decode and the rest of its time per record instead of their sum: the two run
/// side by side. (Before round 18 the sum was counted, and the benchmark's split was estimated at 1.3–1.45× its
/// measured time at 1M.)
///
/// Every task over records commits once per batch (see ``BatchLimits``: by records, bytes or time, whichever
/// ends a batch first): each commit adds its fixed cost, and the bytes written add the commit's measured cost per byte. A step also commits
/// its journal once before its first task (``stepStart``).
///
/// A dynamic policy's machinery (the source object's values, the objects' value arrays, attributes and entities
/// looked up by name) costs about a fifth more than a typed mapping's work of building and inserting each
/// object (``dynamicPolicyMachinery``): the model counts 1.2 decodes and inserts per created object for a dynamic
/// policy, one for a typed mapping, which has no value arrays (its source is decoded once, in place, and each
/// object it creates is encoded from its value). On the benchmark's split at 1M, the dynamic policy took 1.0–1.2×
/// the typed mapping's time over rounds 18–22 (round 22's callgrind at 100k: 1,553.6 M against 1,393.2 M
/// instructions for the whole run). Until round 21 the factor was 1.5, set while the dynamic policy still copied
/// its objects and their values arrays: it overestimated the dynamic split 1.26–1.69× while the typed
/// mapping's estimate, counted with one, stood at 1.11–1.52× (rounds 18–22's runs).
/// The stage's own code beyond building, inserting and linking its objects is not known before it runs.
enum MigrationCostModel {
    /// How a custom stage's entity mapping makes its objects, which sets its cost per object.
    enum MappingKind {
        /// A closure or ``EntityMigrationPolicy`` over ``DynamicObject``s.
        case dynamic
        /// A typed mapping (``EntityMapping/each(_:creating:instances:relationships:)``): model values in and out.
        case typed
        /// A declared mapping: a streaming copy of records, no per-object closure.
        case declared
    }

    /// What a dynamic policy's objects cost per created object relative to a typed mapping's, counted in decodes and
    /// inserts (see the type's discussion).
    static let dynamicPolicyMachinery = 1.2

    /// The pages a metadata commit writes: the header and catalog records, and the B-tree pages above them.
    static let metadataBytes = 4 * 4096

    struct Estimate {
        var bytes: Double = 0
        var seconds: Double = 0

        static func += (a: inout Estimate, b: Estimate) {
            a.bytes += b.bytes
            a.seconds += b.seconds
        }
    }

    /// What a step costs before its tasks: the durable commit of its journal (the step and where it is).
    static func stepStart(calibration c: MigrationCalibration) -> Estimate {
        Estimate(bytes: Double(metadataBytes), seconds: c.commitSeconds + Double(metadataBytes) * c.commitSecondsPerByte)
    }

    /// The estimate of one task over `records` records of `recordBytes` bytes each on average;
    /// `destinations` is the number of entities a custom mapping creates objects of; `kind`, how it makes them.
    /// `sourceDecodedAhead`: the pass's source objects are decoded on another thread while the migrating thread
    /// works (``EntityMapping/decodesSourceAhead(inRelationshipPass:options:)``).
    static func estimate(_ task: MigrationTask, records: Int, recordBytes: Double, destinations: Int, kind: MappingKind = .dynamic,
                         sourceDecodedAhead: Bool = false, calibration c: MigrationCalibration, options: MigrationOptions) -> Estimate {
        /// A source object's decoding beside `work`, the migrating thread's per object: after it on one thread; on
        /// another thread, running beside it, only the slower of the two counts.
        func withSourceDecoded(_ work: Double) -> Double {
            sourceDecodedAhead ? max(c.decodeSecondsPerRecord, work) : c.decodeSecondsPerRecord + work
        }
        let n = Double(records)
        let d = Double(max(1, destinations))
        var e = Estimate()
        switch task {
        case .rewrite:
            // The transcoder copies fields as bytes (widening those whose type grew): about an encode, with no
            // decode into values, as a declared mapping's copy. Counting a decode as well overestimated the
            // forced rewrite ×1.4–1.6 at 1M.
            e.bytes = n * (recordBytes + 16)
            e.seconds = n * (c.readSecondsPerRecord + c.encodeSecondsPerRecord + c.writeSecondsPerRecord)
        case .instances where kind == .declared:
            // A declared mapping's streaming copy: each created record is transcoded field by field (about an
            // encode: fields are copied as bytes, never decoded into values) and put; each new object adds its
            // association and two link entries, and its bookkeeping (about an insert's); no policy machinery.
            e.bytes = n * (recordBytes + d * 48)
            let created = c.encodeSecondsPerRecord + c.writeSecondsPerRecord
            let link = 3 * c.writeSecondsPerRecord + c.insertSecondsPerRecord
            e.seconds = n * (c.readSecondsPerRecord + d * created + (d - 1) * link)
        case .instances:
            e.bytes = n * (recordBytes + d * 48)
            let machinery = kind == .typed ? 1.0 : dynamicPolicyMachinery
            // Associations are kept as runs: consecutive posts making consecutive sections write one entry a batch.
            let created = machinery * (c.decodeSecondsPerRecord + c.insertSecondsPerRecord)
            let link = 2 * (c.readSecondsPerRecord + c.writeSecondsPerRecord)
            e.seconds = n * withSourceDecoded(d * created + (d - 1) * link)
        case .relationships:
            e.bytes = n * 48
            e.seconds = n * withSourceDecoded(2 * c.writeSecondsPerRecord)
        case .buildIndex:
            e.bytes = n * 40
            e.seconds = n * (c.decodeSecondsPerRecord + c.writeSecondsPerRecord)
        case .checkRequired:
            e.seconds = n * c.decodeSecondsPerRecord
        case .checkMaximumLinks, .checkMinimumLinks, .checkUniqueIndex:
            e.seconds = n * c.readSecondsPerRecord
        case .switchOver, .willMigrate, .didMigrate:
            e.bytes = Double(metadataBytes)
            return Estimate(bytes: e.bytes, seconds: c.commitSeconds + e.bytes * c.commitSecondsPerByte)
        }
        let batches = BatchLimits.count(records: records, bytes: e.bytes, seconds: e.seconds, options: options)
        e.seconds += Double(batches) * c.commitSeconds + e.bytes * c.commitSecondsPerByte
        return e
    }
}
