import Foundation

/// Checks what `strata export` prints for a store of ``Fixtures/posts(_:firstID:)`` against the test's own
/// input: every post once, in ID order, each with exactly the values its input line gave it, as the model
/// version reads them — nothing read back from the store is taken as the expectation.
enum ExportedPosts {
    /// The line `strata export` prints for post `i` at `version` (`v1`, or `v2` after `Fixtures.v2`'s rename,
    /// widening and added default), in its documented form: attributes and relationships in model order,
    /// absent values as null, no links.
    static func expectedLine(_ i: Int, version: String, firstID: Int = 1000) -> String {
        let uuid = String(format: "00000000-0000-4000-8000-%012X", i + 1)
        let given = version == "v1"
            ? #""postID":"\#(uuid)","title":"post \#(i)","views":\#(i % 1000)"#
            : #""postID":"\#(uuid)","headline":"post \#(i)","views":\#(i % 1000),"flag":false"#
        let absent = ["body", "rating", "published", "cover", "link", "price", "meta"].map { #""\#($0)":null"# }.joined(separator: ",")
        return #"{"entity":"Post","id":\#(firstID + i),"attributes":{\#(given),\#(absent)},"relationships":{"tags":[],"author":null,"comments":[]}}"#
    }

    /// The differences between `export` output and posts `0..<count` at `version` (at most `limit`).
    static func mismatches(_ export: String, count: Int, version: String, firstID: Int = 1000, limit: Int = 10) -> [String] {
        var out: [String] = []
        let lines = export.split(separator: "\n", omittingEmptySubsequences: true)
        if lines.count != count { out.append("\(lines.count) lines exported, expected \(count)") }
        for (i, line) in lines.enumerated() where out.count < limit {
            let want = expectedLine(i, version: version, firstID: firstID)
            if line != want { out.append("line \(i + 1): \(line)\n  expected \(want)") }
        }
        return out
    }
}
