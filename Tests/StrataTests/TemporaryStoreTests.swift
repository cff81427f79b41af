import Foundation
import Strata
import StrataTestSupport
import Testing

/// `Store.temporary`: a working store in a fresh directory that disappears when it is closed.
@Suite struct TemporaryStoreTests {
    @Test func worksAndDisappearsWhenClosed() throws {
        let schema = try TestSchemas.library()
        let a = try Store.temporary(schema: schema)
        let b = try Store.temporary(schema: schema)
        #expect(a.url != b.url)
        #expect(FileManager.default.fileExists(atPath: a.url.appendingPathComponent("data.mdb").path))
        let oracle = Oracle(schema: schema)
        var generator = LibraryGenerator(seed: 11)
        try generator.fill(a, oracle: oracle, authors: 50, tags: 10)
        #expect(try oracle.mismatches(in: a) == [])
        #expect(try b.read { try $0.count("Author") } == 0)
        let url = a.url
        a.close()
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(a.isClosed)
        #expect(throws: StoreError.closed) { try a.read { try $0.count("Author") } }
        #expect(throws: StoreError.closed) { try a.write { _ in } }
        b.close()
        #expect(!FileManager.default.fileExists(atPath: b.url.path))
    }

    @Test func growsBeyondItsInitialMap() throws {
        // Temporary stores start with a small map; filling them past it grows the map transparently.
        let store = try Store.temporary(schema: try TestSchemas.everyType())
        defer { store.close() }
        let blob = Data(repeating: 7, count: 1 << 20)
        try store.write { ctx in
            for i in 0..<100 { try ctx.insert("Sample", ["label": .string("\(i)"), "a_data": .data(blob)]) }
        }
        #expect(try store.read { try $0.count("Sample") } == 100)
        #expect(try store.info().mapSize > 64 << 20)
    }
}
