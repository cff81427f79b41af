import Foundation

/// One source object as a custom stage's passes visit it: its stored record, read in place from the
/// source entity's database. A dynamic policy receives it decoded (``object()``); a typed mapping decodes its
/// model type straight from the record, without ``Value``s.
///
/// Valid only while the batch that read it runs (the bytes are the memory map's).
struct SourceRecord {
    let id: UInt64
    let bytes: UnsafeRawBufferPointer
    /// The source entity's binding, not counted: the step's source model keeps it while the batch runs.
    private let bindingReference: Unmanaged<EntityBinding>

    init(id: UInt64, bytes: UnsafeRawBufferPointer, binding: __shared EntityBinding) {
        self.id = id
        self.bytes = bytes
        self.bindingReference = Unmanaged.passUnretained(binding)
    }

    var binding: EntityBinding { bindingReference.takeUnretainedValue() }

    /// Runs `body` with the binding lent, counting no reference (what a per-object path wants).
    @inline(__always)
    func withBinding<R>(_ body: (EntityBinding) throws -> R) rethrows -> R {
        try bindingReference._withUnsafeGuaranteedRef(body)
    }

    /// The source object decoded under the source model.
    func object() throws -> DynamicObject {
        DynamicObject(id: ObjectID(rawValue: id), binding: binding, values: try binding.decodeValues(bytes, id: id))
    }

    /// The source object decoded under the source model into `storage`'s array, which the object takes: a pass
    /// hands the array back after the policy's call (``InstanceMigrationContext/sourceValues``), so that the next
    /// object is decoded into it in place when the policy kept no object.
    @inline(__always)
    func object(reusing storage: inout [Value]) throws -> DynamicObject {
        var values: [Value] = []
        swap(&values, &storage)
        try withBinding { try $0.decodeValues(bytes, id: id, into: &values) }
        return DynamicObject(id: ObjectID(rawValue: id), binding: binding, values: values)
    }

    /// The source object as a value of its model type `T` (checked against the source model once per context).
    @inline(__always)
    func model<T: EntityModel>(_ type: T.Type, in context: MigrationContext) throws -> T {
        // Every field located in one walk, then read in place: as a typed fetch or scan decodes. The binding and
        // the source reader are lent, not retained (a per-object path).
        try withBinding { binding in
            try context.verifyOnce(T.self, binding)
            return try context.withSourceReader { try $0.decodeModel(T.self, bytes, id: id, binding: binding) }
        }
    }
}

/// A policy that reads each source object from its record itself (the typed mappings), instead of receiving
/// it decoded as a ``DynamicObject``.
protocol RecordReadingPolicy: EntityMigrationPolicy {
    func createDestinationInstances(for source: SourceRecord, in context: InstanceMigrationContext) throws
    func createRelationships(for source: SourceRecord, in context: RelationshipMigrationContext) throws
    /// The instance pass's visit given each source value decoded ahead on another thread (``SourceReadAhead``),
    /// with the reader, which the pass stops when it ends; nil when the values cannot be decoded ahead.
    func instanceVisitDecodingAhead(runner: StepRunner, binding: EntityBinding)
        -> (reader: any StoppableReadAhead, visit: (SourceRecord, InstanceMigrationContext) throws -> Void)?
    /// The same for the relationship pass.
    func relationshipVisitDecodingAhead(runner: StepRunner, binding: EntityBinding)
        -> (reader: any StoppableReadAhead, visit: (SourceRecord, RelationshipMigrationContext) throws -> Void)?
}

extension EntityMapping {
    /// Whether a pass of the mapping has its source objects decoded ahead on another thread (``SourceReadAhead``)
    /// where the options allow it (``decodesSourceAhead(inRelationshipPass:options:)``): both passes of a dynamic policy; a typed
    /// mapping's instance pass, and its relationship pass when it has a relationship closure (without one the pass
    /// links as inferred, from the source's dynamic object); a declared mapping's relationship pass (inferred links,
    /// from dynamic objects) but not its instance pass (a streaming copy of records, never decoded). What the
    /// passes do, and what the cost model counts.
    func decodesSourceAhead(inRelationshipPass: Bool) -> Bool {
        switch policy {
        case is DeclaredPolicy: inRelationshipPass
        case let typed as any TypedPolicy: !inRelationshipPass || typed.hasRelationshipClosure
        default: true
        }
    }

    /// Whether a pass of the mapping decodes its source objects ahead under `options` on this device: the mapping's
    /// pass does (``decodesSourceAhead(inRelationshipPass:)``), ``MigrationOptions/decodesAhead`` is on, and there is a
    /// second core to decode on. What the passes do, and what `explainMigration` counts.
    func decodesSourceAhead(inRelationshipPass: Bool, options: MigrationOptions) -> Bool {
        options.decodesAhead && ProcessInfo.processInfo.activeProcessorCount > 1
            && decodesSourceAhead(inRelationshipPass: inRelationshipPass)
    }

    /// Whether the mapping's relationship pass only translates the source's links as the inferred mapping
    /// would (a closure or typed mapping without a relationship closure).
    var linksAsInferred: Bool {
        switch policy {
        case let closures as ClosurePolicy: closures.relationships == nil
        case let typed as any TypedPolicy: !typed.hasRelationshipClosure
        case is DeclaredPolicy: true
        default: false
        }
    }
}

/// A typed mapping's policy, whatever its source type.
protocol TypedPolicy {
    var hasRelationshipClosure: Bool { get }
}

/// The source object a pass is visiting: its record, or the decoded object a policy was called with.
enum CurrentSource {
    case record(SourceRecord)
    case object(DynamicObject)

    var id: UInt64 {
        switch self {
        case .record(let r): r.id
        case .object(let o): o.id.rawValue
        }
    }

    /// The source object decoded under the source model.
    func object() throws -> DynamicObject {
        switch self {
        case .record(let r): try r.object()
        case .object(let o): o
        }
    }
}
