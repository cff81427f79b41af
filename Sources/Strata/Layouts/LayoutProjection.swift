/// How an entity of the bound model reads the records of one layout: for each attribute, in the model's
/// order, its ``FieldSource`` — and, derived from them once when the model is bound, which field holds which
/// attribute. (A class: it is shared, never copied, by every object and view read in the layout.)
// @unchecked: `codeBuffer` is written once, in `init`, and only read afterwards.
@usableFromInline
final class LayoutProjection: @unchecked Sendable {
    let layout: RecordLayout
    /// One per attribute of the entity (transient attributes read their initial value).
    let sources: [FieldSource]
    /// Field i holds attribute `fieldAttributes[i]` (nil when the field is not read); read from
    /// ``fieldAttributeBuffer``, its one home.
    var fieldAttributes: [Int?] { fieldAttributeBuffer.map { $0 >= 0 ? $0 : nil } }
    /// The field each attribute is read from (nil when it is a constant of the projection or transient).
    let attributeFields: [Int?]
    /// Every attribute is read straight from a field or is transient: no projection needed.
    let isDirect: Bool
    /// Each field's type code (``TypeCode``), for readers that locate fields without decoding them.
    let fieldCodes: [UInt8]
    /// The same codes in memory of the projection's own, which readers point into without counting references
    /// (``RecordFields`` never outlives the bound model that holds the projection).
    let codeBuffer: UnsafeMutableBufferPointer<UInt8>
    /// For each attribute, whether its source is a plain ``FieldSource/field(_:)``: read in place even when the
    /// layout is not direct, without looking at the projection.
    let readsFieldAsIs: [Bool]
    /// Per attribute, where typed readers and writers find it (``Slot``), in memory of the projection's own that
    /// they point into without counting references, as they do into ``codeBuffer``: reading or writing a field by
    /// slot touches no reference count.
    let slotBuffer: UnsafeMutableBufferPointer<Slot>
    /// The attribute each field holds (-1 for a field no attribute reads), in a buffer: loops that decode every field
    /// of a record read it without retaining or releasing anything per record.
    let fieldAttributeBuffer: UnsafeMutableBufferPointer<Int>

    /// Where one attribute is: its field (-1 when none), the field's type code, and whether it is read from the
    /// field as it is (a direct layout, or a plain ``FieldSource/field(_:)``).
    /// The lean readers (``RecordSlots``) read a slot where it is a plain field of its own type, else through the
    /// general path.
    @usableFromInline
    struct Slot {
        @usableFromInline let field: Int32
        @usableFromInline let code: UInt8
        @usableFromInline let readsAsIs: Bool
    }

    /// The slots, for reading (valid while the projection lives: readers never outlive the bound model).
    var slots: UnsafeBufferPointer<Slot> { UnsafeBufferPointer(slotBuffer) }

    /// The projection of a layout whose records `sources` read (one per stored attribute, in the catalog's order)
    /// for `entity`, whose stored attribute `j` in the catalog's order is the model's attribute `catalogToModel[j]`.
    init(layout: RecordLayout, sources stored: [FieldSource], entity: Entity, catalogToModel: [Int]) throws(DecodeFailure) {
        let entry = (layout: layout, sources: stored)
        var sources = entity.attributes.map { FieldSource.constant($0.isTransient ? $0.initialValue : .null) }
        var fieldAttributes = [Int?](repeating: nil, count: entry.layout.fieldTypes.count)
        var direct = true
        for (j, source) in entry.sources.enumerated() {
            guard j < catalogToModel.count else { throw DecodeFailure("layout \(entry.layout.id) of \(entity.name) has too many sources") }
            let a = catalogToModel[j]
            try source.check(layout: entry.layout, attribute: entity.attributes[a], entity: entity.name)
            sources[a] = source
            if let f = source.field { fieldAttributes[f] = a }
            if !source.isPlainField { direct = false }
        }
        var attributeFields = [Int?](repeating: nil, count: entity.attributes.count)
        for (f, a) in fieldAttributes.enumerated() { if let a { attributeFields[a] = f } }
        self.layout = entry.layout
        self.sources = sources
        self.attributeFields = attributeFields
        self.isDirect = direct
        self.fieldCodes = entry.layout.fieldTypes.map(TypeCode.code)
        self.codeBuffer = .allocate(capacity: max(1, fieldCodes.count))
        _ = codeBuffer.initialize(from: fieldCodes)
        self.readsFieldAsIs = sources.map(\.isPlainField)
        let codes = fieldCodes
        let slotBuffer = UnsafeMutableBufferPointer<Slot>.allocate(capacity: max(1, attributeFields.count))
        for a in attributeFields.indices {
            let f = attributeFields[a]
            slotBuffer.initializeElement(at: a, to: Slot(field: f.map(Int32.init) ?? -1, code: f.map { codes[$0] } ?? 0,
                                                         readsAsIs: direct || sources[a].isPlainField))
        }
        self.slotBuffer = slotBuffer
        self.fieldAttributeBuffer = .allocate(capacity: max(1, fieldAttributes.count))
        _ = fieldAttributeBuffer.initialize(from: fieldAttributes.map { $0 ?? -1 })
    }

    deinit {
        codeBuffer.deallocate()
        slotBuffer.deallocate()
        fieldAttributeBuffer.deallocate()
    }
}
