import Foundation
import StrataTestKit
import Strata
import StrataTortureKit

/// `limits <dir> [--largest bytes]`: keys at and past LMDB's 511-byte limit (indexed strings and data),
/// values from 0 bytes to `--largest`, strings with every kind of Unicode, each as an exact round trip or
/// a typed error. Prints `LIMIT <case> ok` or `LIMIT <case> FAIL <why>`, then `DONE`.
enum Limits {
    static func schema() throws -> Schema {
        try Schema("limits") {
            Entity("Key") {
                Attribute("text", .string).unique()
                Attribute("blob", .data).optional().indexed()
            }
            Entity("Blob") { Attribute("bytes", .data) }
            Entity("Text") { Attribute("text", .string).indexed() }
        }
    }

    static func run(_ o: Options) throws -> Int32 {
        let fm = FileManager.default
        try? fm.removeItem(atPath: o.path)
        try fm.createDirectory(atPath: o.path, withIntermediateDirectories: true)
        var failures = 0
        func check(_ name: String, _ body: () throws -> String?) {
            do {
                if let problem = try body() { failures += 1; emit("LIMIT \(name) FAIL \(problem)") } else { emit("LIMIT \(name) ok") }
            } catch {
                failures += 1
                let (typed, kind) = ErrorReport.classify(error)
                emit("LIMIT \(name) FAIL \(typed ? "typed" : "untyped") \(kind) \(String(describing: error).prefix(200))")
            }
        }
        let store = try Store.open(at: URL(fileURLWithPath: o.path + "/keys"), schema: try schema())

        // Keys: an indexed string's key is 1 + its UTF-8 bytes, cut at 440 bytes and completed by a SHA-256
        // beyond that; lengths around both limits and far past LMDB's 511.
        let lengths = [0, 1, 438, 439, 440, 441, 471, 472, 473, 509, 510, 511, 512, 1000, 4096, 65_536, 1 << 20]
        for n in lengths {
            check("indexed string of \(n) bytes") {
                let a = String(repeating: "k", count: n)
                let b = String(repeating: "k", count: max(0, n - 1)) + (n > 0 ? "z" : "")  // same prefix, other end
                var ids: [ObjectID] = []
                try store.write { context in
                    ids.append(try context.insert("Key", ["text": .string(a), "blob": .data(Data(a.utf8))]).id)
                    if n > 0 { ids.append(try context.insert("Key", ["text": .string(b), "blob": .data(Data(b.utf8))]).id) }
                }
                let found = try store.read { context -> ([ObjectID], [ObjectID], String?) in
                    let byText = try context.objects("Key").where("text", equals: .string(a)).ids()
                    let byBlob = try context.objects("Key").where("blob", equals: .data(Data(a.utf8))).ids()
                    let back = try context.object(ids[0], of: "Key")?["text"].stringValue
                    return (byText, byBlob, back)
                }
                if found.0 != [ids[0]] { return "lookup by text found \(found.0), expected \(ids[0])" }
                if found.1 != [ids[0]] { return "lookup by data found \(found.1), expected \(ids[0])" }
                if found.2.map({ Array($0.utf8) }) != Array(a.utf8) { return "read back differs" }
                // The unique constraint holds on long values too: a duplicate is refused with a typed error.
                do {
                    try store.write { context in _ = try context.insert("Key", ["text": .string(a)]) }
                    return "a duplicate of a unique \(n)-byte value was accepted"
                } catch let error as StoreError where error.code == .uniqueConstraintViolation {
                    return nil
                }
            }
        }

        // Values from 0 bytes to the largest asked for: exact round trips.
        let largest = o.int("largest", 256 << 20)
        var sizes = [0, 1, 2, 4079, 4080, 4081, 4095, 4096, 4097, 65_536, 1 << 20, 16 << 20, 64 << 20]
        if largest > 64 << 20 { sizes.append(largest) }
        for size in sizes where size <= largest {
            check("value of \(size) bytes") {
                var data = Data(count: size)
                data.withUnsafeMutableBytes { p in
                    var r = SeededGenerator(seed: UInt64(size))
                    var i = 0
                    while i + 8 <= p.count { p.storeBytes(of: r.next(), toByteOffset: i, as: UInt64.self); i += 8 }
                    while i < p.count { p[i] = UInt8(truncatingIfNeeded: r.next()); i += 1 }
                }
                let id = try store.write { try $0.insert("Blob", ["bytes": .data(data)]).id }
                let back = try store.read { try $0.object(id, of: "Blob")?["bytes"].dataValue }
                guard back == data else { return "read back \(back?.count ?? -1) bytes, different" }
                try store.write { try $0.delete(id, of: "Blob") }
                return nil
            }
        }
        store.close()

        // A value larger than the map may grow to: a typed error, the store intact.
        check("value larger than the map's ceiling") {
            var configuration = StoreConfiguration()
            configuration.maximumMapSize = 8 << 20
            let small = try Store.open(at: URL(fileURLWithPath: o.path + "/small"), schema: try schema(), configuration: configuration)
            defer { small.close() }
            do {
                try small.write { _ = try $0.insert("Blob", ["bytes": .data(Data(count: 16 << 20))]) }
                return "a 16 MiB value fitted in an 8 MiB map"
            } catch let error as StoreError where error.code == .mapFull {
                try small.write { _ = try $0.insert("Blob", ["bytes": .data(Data(count: 1000))]) }
                return try small.read { try $0.count("Blob") } == 1 ? nil : "the store changed"
            }
        }
        if o.flags.contains("huge") {
            check("value larger than a record may be (1 GiB)") {
                let huge = try Store.open(at: URL(fileURLWithPath: o.path + "/huge"), schema: try schema())
                defer { huge.close() }
                do {
                    try huge.write { _ = try $0.insert("Blob", ["bytes": .data(Data(count: (1 << 30) + 1))]) }
                    return "a record over 1 GiB was accepted"
                } catch let error as StoreError where error.code == .valueTooLarge {
                    return nil
                }
            }
        }

        // Unicode: every kind of string round-trips byte for byte, and is found by its exact bytes.
        let strings: [String] = [
            "", "plain ASCII", "café", "cafe\u{301}", "日本語のテキスト", "한국어", "עברית ومعها العربية", "😀", "👩‍👩‍👧‍👦", "🏳️‍🌈",
            "🇫🇷🇯🇵", "a\u{0}b", "\u{FEFF}bom", "\u{FFFD}", "\u{FFFE}\u{FFFF}", "\u{10FFFF}", "\u{E000}private", "\u{301}",
            "Z\u{351}\u{34B}\u{34E}\u{320}a\u{33E}\u{35B}l\u{30D}g\u{367}o", "𝕏𝕐ℤ", "\t\n\r", "Å", "A\u{30A}", "ﬁ", "ß", "İ",
            String(repeating: "👍🏽", count: 50_000),
        ]
        let text = try Store.open(at: URL(fileURLWithPath: o.path + "/text"), schema: try schema())
        for (i, s) in strings.enumerated() {
            check("unicode string #\(i) (\(s.utf8.count) bytes)") {
                let id = try text.write { try $0.insert("Text", ["text": .string(s)]).id }
                let (back, found) = try text.read { context -> (String?, [ObjectID]) in
                    (try context.object(id, of: "Text")?["text"].stringValue,
                     try context.objects("Text").where("text", equals: .string(s)).ids())
                }
                guard let back, Array(back.utf8) == Array(s.utf8) else { return "read back \(back.map { Array($0.utf8).count } ?? -1) bytes, different" }
                guard found.contains(id) else { return "not found by its value" }
                // Strings that are canonically equal (é and e + ◌́) are stored as given: each is found by
                // its own bytes, and only objects whose bytes are equal are returned.
                for other in found where other != id {
                    let value = try text.read { try $0.object(other, of: "Text")?["text"].stringValue }
                    if value.map({ Array($0.utf8) }) != Array(s.utf8) { return "lookup returned another string's object" }
                }
                return nil
            }
        }
        let report = try text.verify()
        if !report.isClean { failures += 1; emit("LIMIT verify FAIL \(report.problems.prefix(3))") }
        text.close()
        emit("DONE failures=\(failures)")
        return failures == 0 ? 0 : 4
    }
}
