import Foundation
import StrataModels
import StrataTestKit
import StrataTestSupport
import Testing

/// A model type of another model version — same entity name, other attributes — is refused by the typed API with
/// a typed error, every time it is used (the check is remembered only for the types that pass it), and the store
/// is left as it was.
@Suite struct ModelVersionMismatchTests {
    enum Old: SchemaVersion {
        static let versionIdentifier = "m1"
        static let models: [any EntityModel.Type] = [Note.self]
        @Entity struct Note {
            var title: String
            var stars: Int32
        }
    }

    enum New: SchemaVersion {
        static let versionIdentifier = "m2"
        static let models: [any EntityModel.Type] = [Note.self]
        @Entity struct Note {
            var title: String
            var stars: Int32
            var pinned: Bool = false
        }
    }

    @Test("a model type of another version is refused on insert and on reads, each time, and nothing is written")
    func aTypeOfAnotherVersionIsRefused() throws {
        let dir = try TemporaryDirectory("model-mismatch")
        let store = try Store.open(at: dir.path("store"), schema: try Schema(New.self))
        defer { store.close() }
        try store.write { ctx in _ = try ctx.insert(New.Note(title: "kept", stars: 3)) }
        for _ in 0..<2 {
            #expect(throws: StoreError.self) {
                try store.write { ctx in _ = try ctx.insert(Old.Note(title: "wrong", stars: 1)) }
            }
            #expect(throws: StoreError.self) {
                try store.read { ctx in _ = try ctx.objects(Old.Note.self).fetch() }
            }
        }
        let notes = try store.read { ctx in try ctx.objects(New.Note.self).fetch() }
        #expect(notes.map { $0.title } == ["kept"])
    }
}
