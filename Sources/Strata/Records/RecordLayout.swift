/// A physical layout: the types of a record's fields, in order. Immutable once records use it.
struct RecordLayout: Sendable, Hashable {
    let id: UInt32
    let fieldTypes: [AttributeType]
    var bitmapSize: Int { (fieldTypes.count + 7) / 8 }
}
