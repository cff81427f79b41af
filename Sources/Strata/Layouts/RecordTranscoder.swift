import Foundation

/// Rewrites records of a source entity as records of its destination entity at the byte level: fields are
/// copied as bytes, converted only where a widening requires it, and constants are pre-encoded. No object
/// is materialised, so a rewrite step costs little more than LMDB copying the bytes.
struct RecordTranscoder {
    enum Operation {
        /// Copies field `index` (converting it when `conversion` is set); a null field becomes
        /// `nullReplacement` (already encoded in the destination type) when given.
        case copy(index: Int, conversion: AttributeMappingPlan.Conversion?, nullReplacement: [UInt8]?)
        /// Copies codable field `index` reshaped to the destination's shape; null becomes `nullReplacement`.
        case reshape(index: Int, CodableReshape, nullReplacement: [UInt8]?)
        /// Writes an encoded constant, or null.
        case constant([UInt8]?)
        /// Writes the first `length` characters of string field `index` followed by `suffix` (a declared mapping's
        /// ``MappedValue/prefix(of:length:appending:)``); null becomes `nullReplacement`.
        case textPrefix(index: Int, length: Int, suffix: [UInt8], nullReplacement: [UInt8]?)
    }

    struct Program {
        let sourceLayout: RecordLayout
        let operations: [Operation]
    }

    /// A program's operations with their constants gathered in one byte pool (`Range`s into it), so running
    /// one neither hashes nor retains anything per record. (A class: taking one for a record retains it once,
    /// instead of copying its arrays' references.)
    // @unchecked: `sourceCodes` is written once, in `init`, and only read afterwards.
    final class CompiledProgram: @unchecked Sendable {
        enum Step {
            case constant(Range<Int>?)
            case copy(index: Int, conversion: Int?, nullReplacement: Range<Int>?)
            case reshape(index: Int, CodableReshape, nullReplacement: Range<Int>?)
            case textPrefix(index: Int, length: Int, suffix: Range<Int>, nullReplacement: Range<Int>?)
        }
        let layoutID: UInt32
        let sourceLayout: RecordLayout
        /// The ``TypeCode`` of each source field (skipping by code copies no ``AttributeType``), in memory of the
        /// program's own that record readers point into.
        let sourceCodes: UnsafeMutableBufferPointer<UInt8>
        let steps: [Step]
        let pool: [UInt8]
        let conversions: [AttributeMappingPlan.Conversion]
        /// For each conversion, the widening done on the field's bytes, without a ``Value`` (all of them today).
        let widenings: [Widening?]

        init(layoutID: UInt32, sourceLayout: RecordLayout, sourceCodes: [UInt8], steps: [Step], pool: [UInt8],
             conversions: [AttributeMappingPlan.Conversion], widenings: [Widening?]) {
            self.layoutID = layoutID
            self.sourceLayout = sourceLayout
            self.sourceCodes = .allocate(capacity: max(1, sourceCodes.count))
            _ = self.sourceCodes.initialize(from: sourceCodes)
            self.steps = steps
            self.pool = pool
            self.conversions = conversions
            self.widenings = widenings
        }

        deinit { sourceCodes.deallocate() }
    }

    let entityTag: UInt32
    let destinationLayout: RecordLayout
    private let compiled: [CompiledProgram]
    private var fields: [Range<Int>?] = []

    /// A transcoder writing records of `destinationLayout` for the entity tagged `entityTag`, one program per
    /// source layout.
    init(entityTag: UInt32, destinationLayout: RecordLayout, programs: [UInt32: Program]) {
        self.entityTag = entityTag
        self.destinationLayout = destinationLayout
        compiled = programs.keys.sorted().compactMap { id in programs[id].map { RecordTranscoder.compile(id, $0) } }
    }

    private static func compile(_ id: UInt32, _ program: Program) -> CompiledProgram {
        var pool: [UInt8] = []
        var conversions: [AttributeMappingPlan.Conversion] = []
        func stash(_ bytes: [UInt8]?) -> Range<Int>? {
            guard let bytes else { return nil }
            let start = pool.count
            pool.append(contentsOf: bytes)
            return start..<pool.count
        }
        let steps = program.operations.map { op -> CompiledProgram.Step in
            switch op {
            case .constant(let encoded): return .constant(stash(encoded))
            case .copy(let index, let conversion, let replacement):
                var c: Int? = nil
                if let conversion { c = conversions.count; conversions.append(conversion) }
                return .copy(index: index, conversion: c, nullReplacement: stash(replacement))
            case .reshape(let index, let reshape, let replacement):
                return .reshape(index: index, reshape, nullReplacement: stash(replacement))
            case .textPrefix(let index, let length, let suffix, let replacement):
                return .textPrefix(index: index, length: length, suffix: stash(suffix) ?? 0..<0, nullReplacement: stash(replacement))
            }
        }
        return CompiledProgram(layoutID: id, sourceLayout: program.sourceLayout,
                               sourceCodes: program.sourceLayout.fieldTypes.map(TypeCode.code),
                               steps: steps, pool: pool, conversions: conversions, widenings: conversions.map(Widening.init))
    }

    /// Rewrites one record (`id`) into `w`, sealed for the destination entity.
    mutating func transcode(_ bytes: UnsafeRawBufferPointer, id: UInt64, sourceTag: UInt32, into w: inout BinaryWriter) throws(DecodeFailure) {
        _ = try transcodeUnsealed(bytes, id: id, sourceTag: sourceTag, into: &w)
        RecordCodec.seal(&w, entityTag: entityTag, id: id)
    }

    /// Rewrites one record (`id`) into `w` without its checksum, for a caller that seals it
    /// (``RecordCodec/seal(_:entityTag:id:)``) under the identifier it chooses. Returns the offset of the null bitmap.
    mutating func transcodeUnsealed(_ bytes: UnsafeRawBufferPointer, id: UInt64, sourceTag: UInt32,
                                    into w: inout BinaryWriter) throws(DecodeFailure) -> Int {
        let layoutID = try locate(bytes, id: id, sourceTag: sourceTag)
        return try transcodeUnsealed(bytes, layoutID: layoutID, fields: fields, into: &w)
    }

    /// Opens record `id` (checking its checksum) and locates its fields (``locatedFields``); returns its layout ID.
    mutating func locate(_ bytes: UnsafeRawBufferPointer, id: UInt64, sourceTag: UInt32) throws(DecodeFailure) -> UInt32 {
        // Few layouts per entity: a linear search beats hashing the layout ID.
        var record = try RecordFields(bytes, id: id, entityTag: sourceTag) { layoutID in
            for k in compiled.indices where compiled[k].layoutID == layoutID {
                return UnsafeBufferPointer(rebasing: compiled[k].sourceCodes[0..<compiled[k].sourceLayout.fieldTypes.count])
            }
            return nil
        }
        try record.locateAll(into: &fields)
        return record.layoutID
    }

    /// The byte range of each field of the record ``locate(_:id:sourceTag:)`` opened last (nil: null).
    var locatedFields: [Range<Int>?] { fields }

    /// Rewrites a record of layout `layoutID` whose fields are already located (by this transcoder or another one
    /// reading the same source entity) into `w`, unsealed. Returns the offset of the null bitmap.
    func transcodeUnsealed(_ bytes: UnsafeRawBufferPointer, layoutID: UInt32, fields: [Range<Int>?],
                           into w: inout BinaryWriter) throws(DecodeFailure) -> Int {
        var found: Int? = nil
        for k in compiled.indices where compiled[k].layoutID == layoutID { found = k }
        guard let k = found else { throw DecodeFailure("unknown layout \(layoutID)") }
        let bitmapOffset = RecordCodec.begin(destinationLayout, into: &w)
        let program = compiled[k]
        // Fields copied as they are, one after another, are contiguous in the source too: they are appended
        // as one run of bytes.
        var run: Range<Int> = 0..<0
        for j in program.steps.indices {
            if case .copy(let i, nil, _) = program.steps[j], let range = fields[i] {
                if run.isEmpty {
                    run = range
                } else if run.upperBound == range.lowerBound {
                    run = run.lowerBound..<range.upperBound
                } else {
                    w.raw(UnsafeRawBufferPointer(rebasing: bytes[run]))
                    run = range
                }
                continue
            }
            if !run.isEmpty {
                w.raw(UnsafeRawBufferPointer(rebasing: bytes[run]))
                run = 0..<0
            }
            switch program.steps[j] {
            case .constant(let encoded):
                if let encoded { w.raw(program.pool[encoded]) } else { RecordCodec.markNull(field: j, bitmapOffset: bitmapOffset, in: &w) }
            case .textPrefix(let i, let length, let suffix, let replacement):
                guard let range = fields[i] else {
                    if let replacement { w.raw(program.pool[replacement]) } else { RecordCodec.markNull(field: j, bitmapOffset: bitmapOffset, in: &w) }
                    continue
                }
                var fr = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[range]))
                let text: UnsafeRawBufferPointer
                do { text = try fr.lengthPrefixed() } catch { throw DecodeFailure("\(error)") }
                TextPrefix.write(text, length: length, suffix: program.pool[suffix], into: &w)
            case .reshape(let i, let reshape, let replacement):
                guard let range = fields[i] else {
                    if let replacement { w.raw(program.pool[replacement]) } else { RecordCodec.markNull(field: j, bitmapOffset: bitmapOffset, in: &w) }
                    continue
                }
                var fr = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[range]))
                let json: Data
                do { json = Data(try fr.lengthPrefixed()) } catch { throw DecodeFailure("\(error)") }
                w.lengthPrefixed(try reshape.apply(toJSON: json))
            case .copy(let i, let conversion, let replacement):
                guard let range = fields[i] else {
                    if let replacement { w.raw(program.pool[replacement]) } else { RecordCodec.markNull(field: j, bitmapOffset: bitmapOffset, in: &w) }
                    continue
                }
                if let c = conversion, let widening = program.widenings[c], range.count == widening.sourceSize {
                    widening.write(UnsafeRawBufferPointer(rebasing: bytes[range]), into: &w)
                } else if let c = conversion {
                    let conversion = program.conversions[c]
                    var fr = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[range]))
                    do {
                        let value = try FieldCodec.decode(conversion.from, from: &fr)
                        try FieldCodec.encode(Widening.convert(value, conversion), as: conversion.to, into: &w)
                    } catch let failure as DecodeFailure {
                        throw failure
                    } catch {
                        throw DecodeFailure("\(error)")
                    }
                } else {
                    w.raw(UnsafeRawBufferPointer(rebasing: bytes[range]))
                }
            }
        }
        if !run.isEmpty { w.raw(UnsafeRawBufferPointer(rebasing: bytes[run])) }
        return bitmapOffset
    }

    static func encode(_ value: Value, _ type: AttributeType) throws -> [UInt8]? {
        if value.isNull { return nil }
        var w = BinaryWriter(capacity: 16)
        try FieldCodec.encode(type.coerce(value) ?? value, as: type, into: &w)
        return w.bytes
    }
}
