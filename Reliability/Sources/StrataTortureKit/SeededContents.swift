import Foundation
import Strata
import StrataTestKit

/// The expected contents of a torture store: item `i` (its `serial`) has values derived from the seed and
/// `i` alone, so any process can check any object without a copy of the data.
public struct SeededContents: Sendable {
    public let seed: UInt64

    public init(seed: UInt64) { self.seed = seed }

    static let pieces: [String] = ["a", "é", "ß", "中", "😀", "👩‍👩‍👧", "e\u{301}", "Ω", " ", "ق", "\u{200D}", "ﬀ", "𝄞", "\t", "0"]

    func random(_ i: Int, _ salt: UInt64) -> SeededGenerator {
        SeededGenerator(seed: seed &* 0x100_0000_01B3 ^ UInt64(truncatingIfNeeded: i) &* 31 ^ salt)
    }

    public func title(_ i: Int) -> String {
        var r = random(i, 1)
        let n = Int(r.next() % 9)
        var s = "item-\(i)-"
        for _ in 0..<n { s += SeededContents.pieces[Int(r.next() % UInt64(SeededContents.pieces.count))] }
        return s
    }

    public func score(_ i: Int) -> Int16 { Int16(truncatingIfNeeded: (i &* 7919) % 30_000 - 15_000) }
    public func when(_ i: Int) -> Date { Date(timeIntervalSinceReferenceDate: Double(i) * 1.5 + Double(seed % 1000)) }
    public func note(_ i: Int) -> String? { i % 3 == 0 ? nil : "note \(i) of \(seed)" }
    public func blob(_ i: Int) -> Data? {
        guard i % 7 == 0 else { return nil }
        var r = random(i, 2)
        return Data((0..<Int(r.next() % 48)).map { _ in UInt8(truncatingIfNeeded: r.next()) })
    }
    /// Item `i`'s `spot` at v1 (canonical JSON; none when `i % 4 == 3`, no label when `i % 4 == 2`), and as
    /// v2 and v3 read it: `y` renamed `north`, the label dropped, `z` = 0.
    public func spot(_ i: Int, reshaped: Bool) -> Value {
        guard i % 4 != 3 else { return .null }
        var object: [String: JSONValue] = ["x": .integer(Int64(i))]
        let y = JSONValue.integer(Int64(i % 4 == 2 ? 2 * i : -i))
        if reshaped {
            object["north"] = y
            object["z"] = .integer(0)
        } else {
            object["y"] = y
            if i % 4 != 2 { object["label"] = .string("L\(i) \(SeededContents.pieces[i % SeededContents.pieces.count])") }
        }
        return (try? JSONValue.object(object).serialized()).map(Value.codable) ?? .null
    }

    /// The tag an item links to, if any.
    public func tagIndex(_ i: Int) -> Int? { i % 5 == 0 ? (i / 5) % TortureModels.tagCount : nil }
    public static func tagName(_ k: Int) -> String { "tag-\(k)" }

    /// The values of item `i` at v1.
    public func v1Values(_ i: Int) -> [String: Value] {
        var values: [String: Value] = [
            "serial": .int64(Int64(i)), "title": .string(title(i)), "score": .int16(score(i)), "when": .date(when(i)),
        ]
        if let note = note(i) { values["note"] = .string(note) }
        if let blob = blob(i) { values["blob"] = .data(blob) }
        let spot = spot(i, reshaped: false)
        if !spot.isNull { values["spot"] = spot }
        return values
    }

    /// The values item `i` must have at `version` (attributes, not relationships).
    public func expectedValues(_ i: Int, version: String) -> [String: Value] {
        let base: [String: Value] = [
            "serial": .int64(Int64(i)), "when": .date(when(i)),
            "note": note(i).map(Value.string) ?? .null, "blob": blob(i).map(Value.data) ?? .null,
        ]
        var v = base
        v["spot"] = spot(i, reshaped: version == "v2" || version == "v3")
        switch version {
        case "v2":
            v["name"] = .string(title(i)); v["score"] = .int16(score(i)); v["flag"] = .bool(false)
        case "v3":
            v["name"] = .string(title(i)); v["score"] = .int64(Int64(score(i))); v["flag"] = .bool(false)
        case "c2":
            v["title"] = .string(title(i)); v["score"] = .int16(score(i))
            v["digest"] = .string(TortureModels.digest(serial: Int64(i), title: title(i)))
        case "s2":
            v["title"] = .string(title(i)); v["score"] = .string("s\(score(i))"); v["rank"] = .int64(Int64(i) * 2)
        case "d2":
            v["title"] = .string(title(i)); v["score"] = .int16(score(i)); v["note"] = nil
        default:
            v["title"] = .string(title(i)); v["score"] = .int16(score(i))
        }
        return v
    }
}

/// What checking a store against the oracle found.
public struct CheckResult: Codable, Sendable, CustomStringConvertible {
    public var version = ""
    public var items = 0
    /// Serials of the expected range that are missing.
    public var lost = 0
    /// Objects whose values differ from the oracle although they were read without error.
    public var wrongValues = 0
    /// Serials present more than once, or outside the expected range.
    public var duplicates = 0
    public var extra = 0
    /// Records that could not be read (typed errors).
    public var unreadable = 0
    public var badLinks = 0
    public var notes = 0
    public var markers: [String: Int] = [:]
    public var verifyProblems = 0
    public var problems: [String] = []

    public init() {}

    public var isClean: Bool {
        lost == 0 && wrongValues == 0 && duplicates == 0 && extra == 0 && unreadable == 0 && badLinks == 0
            && verifyProblems == 0 && problems.isEmpty
    }

    mutating func problem(_ s: String) { if problems.count < 20 { problems.append(s) } }

    public var description: String {
        "version=\(version) items=\(items) lost=\(lost) wrong=\(wrongValues) dup=\(duplicates) extra=\(extra) unreadable=\(unreadable) badLinks=\(badLinks) verify=\(verifyProblems) markers=\(markers) \(problems.prefix(3))"
    }
}

extension SeededContents {
    /// Checks every object of an open store against the oracle: items with serials `expected` at the store's
    /// version, tags and links, notes and markers of custom stages, and `Store.verify()`.
    /// - Parameter expectedMarkers: the markers custom stages must have left (`["will": 1, "did": 1]`).
    public func check(_ store: Store, expected: Range<Int>, expectedMarkers: [String: Int] = [:], runVerify: Bool = true,
                      ignoring: Set<String> = []) throws -> CheckResult {
        var result = CheckResult()
        let version = store.schema.versionIdentifier
        result.version = version
        try store.read { context in
            var seen: [Int: ObjectID] = [:]
            var tagIDs: [Int: ObjectID] = [:]
            let hasTags = !expected.isEmpty
            try context.objects("Tag").forEach { tag in
                let name = tag["name"].stringValue ?? ""
                if let k = Int(name.dropFirst(4)), name.hasPrefix("tag-") { tagIDs[k] = tag.id } else { result.problem("unexpected tag \(name)") }
            }
            if hasTags && tagIDs.count != TortureModels.tagCount { result.problem("\(tagIDs.count) tags") }
            let cursor = try context.objects("Item").makeCursor()
            while true {
                let item: DynamicObject?
                do { item = try cursor.next() } catch let error as StoreError {
                    if error.code == .corruptedRecord { result.unreadable += 1; continue }
                    throw error
                }
                guard let item else { break }
                result.items += 1
                guard let serial64 = item["serial"].int64Value, let serial = Int(exactly: serial64) else {
                    result.wrongValues += 1
                    continue
                }
                if seen[serial] != nil { result.duplicates += 1; continue }
                seen[serial] = item.id
                guard expected.contains(serial) else { result.extra += 1; continue }
                let want = expectedValues(serial, version: version)
                for (name, value) in want where item[name] != value && !ignoring.contains(name) {
                    result.wrongValues += 1
                    result.problem("item \(serial).\(name) = \(item[name]), expected \(value)")
                    break
                }
                let tags = try context.related(item, "tags")
                if let k = tagIndex(serial) {
                    if tags.count != 1 || tags.first != tagIDs[k] { result.badLinks += 1; result.problem("item \(serial) tags \(tags)") }
                } else if !tags.isEmpty {
                    result.badLinks += 1
                }
                if version == "d2" {
                    // The declared extract: one note holding the item's note, none without one.
                    let notes = try context.relatedObjects(item, "notes")
                    let want = note(serial).map { [Value.string($0)] } ?? []
                    if notes.map({ $0["text"] }) != want {
                        result.badLinks += 1
                        result.problem("item \(serial) has notes \(notes.map { $0["text"] }), expected \(want)")
                    }
                }
                if version == "c2" {
                    let notes = try context.relatedObjects(item, "notes")
                    if notes.count != 1 || notes.first?["text"] != .string(TortureModels.noteText(title: title(serial))) {
                        result.badLinks += 1
                        result.problem("item \(serial) has \(notes.count) notes")
                    }
                }
            }
            for serial in expected where seen[serial] == nil { result.lost += 1 }
            var wantPerTag = [Int](repeating: 0, count: TortureModels.tagCount)
            for serial in expected { if let k = tagIndex(serial) { wantPerTag[k] += 1 } }
            for (k, id) in tagIDs {
                let linked = try context.related(id, of: "Tag", "items").count
                let want = k < wantPerTag.count ? wantPerTag[k] : 0
                if linked != want { result.badLinks += 1; result.problem("tag \(k) links \(linked), expected \(want)") }
            }
            if version == "c2" {
                result.notes = try context.count("Note")
                if result.notes != expected.count { result.problem("\(result.notes) notes for \(expected.count) items") }
            }
            if version == "d2" {
                result.notes = try context.count("Note")
                let want = expected.filter { note($0) != nil }.count
                if result.notes != want { result.problem("\(result.notes) notes for \(want) items with a note") }
            }
            try context.objects("Marker").forEach { m in result.markers[m["kind"].stringValue ?? "?", default: 0] += 1 }
        }
        if result.markers != expectedMarkers { result.problem("markers \(result.markers), expected \(expectedMarkers)") }
        if runVerify {
            let report = try store.verify()
            result.verifyProblems = report.problems.count + report.problemsNotListed
            for p in report.problems.prefix(3) { result.problem("verify: \(p)") }
        }
        return result
    }

    /// The markers a store at `version`, migrated along the plan named `plan`, must hold.
    public static func expectedMarkers(plan: String, version: String) -> [String: Int] {
        switch (plan, version) {
        case ("custom", "c2"), ("typed", "c2"), ("script", "s2"): ["will": 1, "did": 1]
        default: [:]
        }
    }
}

/// Describes an error for the parent process: `typed` when it is one of Strata's errors.
public enum ErrorReport {
    public static func classify(_ error: any Error) -> (typed: Bool, kind: String) {
        switch error {
        case let e as StoreError: return (true, "StoreError.\(e.code)")
        case let e as MigrationError:
            if e.code == .interrupted, let underlying = e.storeError { return (true, "MigrationError.interrupted/\(underlying.code)") }
            return (true, "MigrationError.\(e.code)")
        case is SchemaValidationError: return (true, "SchemaValidationError")
        case is MigrationPlanError: return (true, "MigrationPlanError")
        default: return (false, "untyped:\(type(of: error))")
        }
    }
}
