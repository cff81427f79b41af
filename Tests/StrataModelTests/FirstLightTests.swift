import Foundation
import Testing
import StrataModels

@Suite struct FirstLightTests {
    @Test func insertAndRead() throws {
        let store = try Store.temporary(schema: try Schema(Library.self))
        defer { store.close() }
        let item = Library.Item(code: "A1", wide: 1 << 40, medium: -5, small: 7, weight: 2.5, added: Date(timeIntervalSinceReferenceDate: 100),
                                blob: Data([1, 2, 3]), uid: UUID(), link: URL(string: "https://example.com")!, price: Decimal(string: "12.34")!,
                                note: nil, rank: 3, size: .init(width: 1, height: 2))
        let id = try store.write { try $0.insert(item) }
        let read = try store.read { try $0.fetch(Library.Item.self, id: id) }
        #expect(read?.code == "A1" && read?.wide == 1 << 40 && read?.rank == 3 && read?.size.height == 2 && read?.kind == .book)
        #expect(read?.objectID == id)
    }
}
