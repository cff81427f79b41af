import Foundation
import StrataTestKit

enum TutorialText {
    static let words = ["strata", "store", "migrate", "layer", "record", "model", "version", "batch", "swift", "object",
                        "graph", "entity", "index", "commit", "reader", "writer", "schema", "crash", "resume", "hash"]

    static func sentence(_ random: inout SeededGenerator, bytes: Int) -> String {
        var out = ""
        while out.utf8.count < bytes {
            if !out.isEmpty { out += " " }
            out += words[Int(random.next() % UInt64(words.count))]
        }
        return String(out.prefix(bytes))
    }
}
