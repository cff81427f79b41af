import Foundation
@testable import Strata
import StrataTestSupport
import Testing

/// The import's fast parser against the general path (`ObjectLine.parse`, through `JSONDecoder`): on every
/// line it decides, the same object; on the lines it leaves undecided, the general path answers. It must
/// decide the lines an export writes.
@Suite struct ObjectLineParserTests {
    static func schema() throws -> Schema {
        try Schema(jsonData: Data(Fixtures.v1.utf8))
    }

    enum Answer: Equatable {
        case object(entity: Int, id: UInt64?, values: [Value], links: [[UInt64]])
        case skipped
        case problem(String)
    }

    static func slow(_ line: String, _ schema: Schema, only: String?) -> Answer {
        do {
            guard let p = try ObjectLine.parse(Data(line.utf8), schema: schema, only: only) else { return .skipped }
            return .object(entity: p.entityIndex, id: p.id?.rawValue, values: p.values, links: p.links.map { [UInt64($0.relationship)] + $0.targets })
        } catch {
            return .problem(error.reason)
        }
    }

    static func fast(_ line: String, _ parser: ObjectLineParser) -> Answer? {
        var bytes = Array(line.utf8)
        return bytes.withUnsafeMutableBytes { raw -> Answer? in
            guard case .object(let p) = parser.parse(UnsafeRawBufferPointer(raw)) else { return nil }
            return .object(entity: p.entityIndex, id: p.id?.rawValue, values: p.values, links: p.links.map { [UInt64($0.relationship)] + $0.targets })
        }
    }

    /// Values compared by their stored meaning (NaN equals NaN; -0 differs from 0).
    static func same(_ a: Answer, _ b: Answer) -> Bool {
        guard case .object(let e1, let i1, let v1, let l1) = a, case .object(let e2, let i2, let v2, let l2) = b else { return a == b }
        guard e1 == e2, i1 == i2, l1 == l2, v1.count == v2.count else { return false }
        for (x, y) in zip(v1, v2) {
            switch (x, y) {
            case (.double(let p), .double(let q)): if !(p.bitPattern == q.bitPattern || (p.isNaN && q.isNaN)) { return false }
            case (.float(let p), .float(let q)): if !(p.bitPattern == q.bitPattern || (p.isNaN && q.isNaN)) { return false }
            case (.date(let p), .date(let q)):
                if p.timeIntervalSinceReferenceDate.bitPattern != q.timeIntervalSinceReferenceDate.bitPattern { return false }
            default: if x != y { return false }
            }
        }
        return true
    }

    @Test func decidesExportedLinesAsTheGeneralPathReadsThem() throws {
        let schema = try Self.schema()
        let parser = ObjectLineParser(schema: schema, only: nil)
        var decided = 0
        let lines = Fixtures.objects.split(separator: "\n").map(String.init) + Fixtures.posts(50).split(separator: "\n").map(String.init)
        for line in lines {
            let slow = Self.slow(line, schema, only: nil)
            if let fast = Self.fast(line, parser) {
                decided += 1
                #expect(Self.same(fast, slow), "\(line)\nfast: \(fast)\nslow: \(slow)")
            }
        }
        // Only the posts with a Codable value or an ISO 8601 date take the general path.
        #expect(decided >= lines.count - 3, "decided \(decided) of \(lines.count)")
    }

    @Test func leavesEveryDoubtfulLineToTheGeneralPath() throws {
        let schema = try Self.schema()
        let parser = ObjectLineParser(schema: schema, only: nil)
        let tagOnly = ObjectLineParser(schema: schema, only: "Tag")
        let uuid = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
        let lines = [
            // Agreed by both.
            #"{"entity":"Author","id":7,"attributes":{"name":"A","age":1e2,"score":1.0,"karma":-0}}"#,
            #"{"entity":"Author","attributes":{"name":"\u00e9\ud83d\ude00\/","score":-0.0,"age":12}}"#,
            #" { "id" : 3 , "entity" : "Tag" , "attributes" : { "name" : "x" } } "#,
            #"{"attributes":{"name":"before the entity"},"entity":"Tag"}"#,
            #"{"entity":"Post","attributes":{"postID":"\#(uuid)","rating":1e-400,"published":1.5e300,"views":70000}}"#,
            #"{"entity":"Post","attributes":{"postID":"\#(uuid)","rating":12345678901234567890,"views":1.0}}"#,
            #"{"entity":"Author","id":0,"attributes":{"name":"zero id"}}"#,
            #"{"entity":"Author","id":9.0,"attributes":{"name":"fractional id"}}"#,
            #"{"entity":"Author","attributes":{"name":"dup","name":"again"}}"#,
            #"{"entity":"Author","entity":"Tag","attributes":{"name":"x"}}"#,
            #"{"entity":"Comment","attributes":{"text":"x"},"relationships":{"post":[1,2]}}"#,
            #"{"entity":"Comment","attributes":{"text":"x"},"relationships":{"post":null}}"#,
            #"{"entity":"Author","attributes":{"name":"x"},"relationships":{"mentees":[3,1],"mentor":2,"posts":[]}}"#,
            #"{"entity":"Author","attributes":{"name":"lone \ud800"}}"#,
            "{\"entity\":\"Author\",\"attributes\":{\"name\":\"ctl\ttab\"}}",
            #"{"entity":"Author","attributes":{"name":"x"}} trailing"#,
            #"{"entity":"Author","attributes":{"name":"x"},}"#,
            #"{"entity":"Author","attributes":{"nmae":"x"}}"#,
            #"{"entity":"Nope"}"#,
            #"{"attributes":{"name":"no entity"}}"#,
            #"{"entity":"Author","extra":1}"#,
            #"{"entity":"Author","attributes":{"name":"x","age":2147483648}}"#,
            #"{"entity":"Author","attributes":{"name":"x","karma":9223372036854775808}}"#,
            #"{"entity":"Author","attributes":{"name":"x","active":"yes"}}"#,
            #"{"entity":"Post","attributes":{"postID":"not a uuid"}}"#,
            #"[1,2]"#,
            #"{"entity":"Tag","attributes":{"name":"x"}"#,
        ]
        for line in lines {
            let slow = Self.slow(line, schema, only: nil)
            if let fast = Self.fast(line, parser) {
                #expect(Self.same(fast, slow), "\(line)\nfast: \(fast)\nslow: \(slow)")
            }
            // With --entity, lines of other entities are skipped by the general path; the fast path agrees.
            let slowTag = Self.slow(line, schema, only: "Tag")
            if let fast = Self.fast(line, tagOnly) {
                #expect(Self.same(fast, slowTag), "--entity Tag: \(line)\nfast: \(fast)\nslow: \(slowTag)")
            }
        }
        // Doubtful lines are never decided by the fast path.
        for line in lines {
            if case .problem = Self.slow(line, schema, only: nil) {
                #expect(Self.fast(line, parser) == nil, "decided a bad line: \(line)")
            }
        }
        #expect(Self.fast(#"{"attributes":{"name":"x"}}"#, tagOnly) != nil, "--entity gives the entity")
        #expect(Self.fast(#"{"entity":"Author","attributes":{"name":"x"}}"#, tagOnly) == nil, "another entity: skipped by the general path")
    }

    /// The one string escaper (eight bytes at a time) against a byte-by-byte one and against `JSONEncoder`, whose
    /// canonical JSON holds the keys that reshapes write with it.
    @Test func stringsAreEscapedAsByteByByteAndAsJSONEncoderDoes() throws {
        // Every ASCII character, at every position of runs longer and shorter than eight bytes, and UTF-8.
        var texts = ["", "plain", "exactly8", "sixteen bytes!!!", "héllo ✓ \u{1}", "a\"b\\c\nd\te\u{7F}f/g", "😀\u{2028}\u{FEFF}"]
        for code in 0..<128 {
            let c = String(UnicodeScalar(UInt8(code)))
            for prefix in 0..<10 { texts.append(String(repeating: "x", count: prefix) + c + String(repeating: "y", count: 9 - prefix)) }
        }
        for text in texts {
            var written: [UInt8] = []
            JSONText.writeString(text, into: &written)
            #expect(written == Self.escapedByteByByte(text), "\(text.debugDescription)")
            #expect(written == Array(try CanonicalJSON.encode(text)), "JSONEncoder: \(text.debugDescription)")
        }
    }

    /// JSON's escapes, one byte at a time.
    static func escapedByteByByte(_ s: String) -> [UInt8] {
        var out: [UInt8] = [UInt8(ascii: "\"")]
        for byte in s.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0x08: out.append(contentsOf: "\\b".utf8)
            case 0x0C: out.append(contentsOf: "\\f".utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
        return out
    }
}
