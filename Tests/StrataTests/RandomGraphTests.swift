import Foundation
import Strata
import StrataTestSupport
import Testing

/// Random object graphs (seeded): many transactions of random inserts, updates, links, unlinks and deletes
/// on the library model, mirrored in an oracle; after every transaction and after reopening, every object,
/// every link from both sides and every index lookup agree with the oracle.
@Suite struct RandomGraphTests {
    enum Operation: CaseIterable { case insertAuthor, insertBook, insertTag, update, link, unlink, delete, setTags }

    @Test(arguments: [1 as UInt64, 2, 3, 0xDEAD_BEEF])
    func randomGraph(seed: UInt64) throws {
        let dir = try TemporaryDirectory("graph-\(seed)")
        let schema = try TestSchemas.library()
        let oracle = Oracle(schema: schema)
        var generator = LibraryGenerator(seed: seed)
        var store = try Store.open(at: dir.store, schema: schema)
        try generator.fill(store, oracle: oracle, authors: 60, tags: 12)
        var rng = SeededGenerator(seed: seed &* 31)
        var serial = 0
        for transaction in 0..<25 {
            // Plan the operations against the oracle's state, apply them to the store, then to the oracle.
            let log = try store.write { ctx -> OracleLog in
                var log: OracleLog = []
                // A scratch oracle follows the transaction so that later operations see earlier ones.
                let scratch = oracle.copy()
                for _ in 0..<rng.int(30) + 1 {
                    serial += 1
                    let authors = scratch.ids(of: "Author"), books = scratch.ids(of: "Book"), tags = scratch.ids(of: "Tag")
                    /// Inserts with the values given here, recorded in both oracles from those values.
                    func insert(_ entity: String, _ values: [String: Value]) throws -> DynamicObject {
                        let object = try ctx.insert(entity, values)
                        scratch.insert(entity, id: object.id, values)
                        log.append { [id = object.id] in $0.insert(entity, id: id, values) }
                        return object
                    }
                    switch rng.pick(Operation.allCases) {
                    case .insertAuthor:
                        _ = try insert("Author", ["name": .string("new author \(seed)-\(serial)"),
                                                  "born": .date(Date(timeIntervalSinceReferenceDate: Double(serial)))])
                    case .insertBook:
                        let b = try insert("Book", ["title": .string(rng.string(length: 6)), "pages": .int32(Int32(rng.int(1000))),
                                                    "isbn": rng.chance(0.5) ? .string("isbn \(serial)") : .null])
                        if let author = authors.randomElement(using: &rng), rng.chance(0.8) {
                            try ctx.link(b, "author", to: try #require(try ctx.object(author, of: "Author")))
                            scratch.link(b.id, "author", author); log.append { $0.link(b.id, "author", author) }
                        }
                    case .insertTag:
                        _ = try insert("Tag", ["name": .string("tag \(seed)-\(serial)")])
                    case .update:
                        guard let id = (authors + books).randomElement(using: &rng), var object = try ctx.object(id, of: scratch.objects[id]!.entity) else { continue }
                        var changes: [String: Value] = [:]
                        if object.entityName == "Author" {
                            changes["rating"] = .double(Double(rng.int(100)) / 10)
                            if rng.chance(0.3) { changes["name"] = .string("renamed \(seed)-\(serial)") }
                        } else {
                            changes["pages"] = .int32(Int32(rng.int(1000)))
                            changes["price"] = rng.chance(0.5) ? .decimal(Decimal(rng.int(9999)) / 100) : .null
                            if rng.chance(0.3) { changes["isbn"] = rng.chance(0.5) ? .null : .string("isbn \(serial)") }
                        }
                        for (name, value) in changes { object[name] = value }
                        try ctx.update(object)
                        // The oracle gets the changes the test made, the other values stay the oracle's own.
                        for (name, value) in changes { scratch.set(id, name, value) }
                        log.append { o in for (name, value) in changes { o.set(id, name, value) } }
                    case .link:
                        if rng.chance(0.5), let b = books.randomElement(using: &rng), let t = tags.randomElement(using: &rng) {
                            try ctx.link(t, of: "Tag", "books", to: b)
                            scratch.link(t, "books", b); log.append { $0.link(t, "books", b) }
                        } else if let b = books.randomElement(using: &rng), let a = authors.randomElement(using: &rng) {
                            // Either side of the to-many / to-one pair.
                            if rng.chance(0.5) {
                                try ctx.link(a, of: "Author", "books", to: b)
                                scratch.link(a, "books", b); log.append { $0.link(a, "books", b) }
                            } else {
                                try ctx.link(b, of: "Book", "author", to: a)
                                scratch.link(b, "author", a); log.append { $0.link(b, "author", a) }
                            }
                        }
                    case .unlink:
                        guard let b = books.randomElement(using: &rng) else { continue }
                        if let t = scratch.targets(b, "tags").sorted().first {
                            try ctx.unlink(b, of: "Book", "tags", from: t)
                            scratch.unlink(b, "tags", t); log.append { $0.unlink(b, "tags", t) }
                        } else if let a = scratch.targets(b, "author").first {
                            try ctx.unlink(a, of: "Author", "books", from: b)
                            scratch.unlink(a, "books", b); log.append { $0.unlink(a, "books", b) }
                        }
                    case .delete:
                        let pool = rng.chance(0.2) ? authors : (rng.chance(0.5) ? books : tags)
                        guard let id = pool.randomElement(using: &rng), let entity = scratch.objects[id]?.entity else { continue }
                        try ctx.delete(id, of: entity)
                        scratch.delete(id); log.append { $0.delete(id) }
                    case .setTags:
                        guard let b = books.randomElement(using: &rng) else { continue }
                        let chosen = Array(tags.shuffled(using: &rng).prefix(rng.int(4)))
                        try ctx.setRelated(try #require(try ctx.object(b, of: "Book")), "tags", to: chosen)
                        for old in scratch.targets(b, "tags") { scratch.unlink(b, "tags", old) }
                        for t in chosen { scratch.link(b, "tags", t) }
                        log.append { o in
                            for old in o.targets(b, "tags") { o.unlink(b, "tags", old) }
                            for t in chosen { o.link(b, "tags", t) }
                        }
                    }
                }
                return log
            }
            for apply in log { apply(oracle) }
            if transaction % 5 == 4 {
                #expect(try oracle.mismatches(in: store) == [], "seed \(seed), transaction \(transaction)")
            }
            if transaction == 12 {
                store.close()
                store = try Store.open(at: dir.store, schema: schema)
            }
        }
        store.close()
        let reopened = try Store.open(at: dir.store, schema: schema)
        defer { reopened.close() }
        #expect(try oracle.mismatches(in: reopened) == [], "seed \(seed), after reopening")
        let report = try reopened.verify()
        #expect(report.problems == [], "seed \(seed)")
        #expect(report.objectsChecked == oracle.objects.count)
    }
}
