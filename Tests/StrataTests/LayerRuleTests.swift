import Foundation
import Testing

/// The layer rule of <doc:Architecture>, checked on the library's source: every folder of `Sources/Strata` has a
/// layer, and code in one layer names only types declared in its own layer or in layers below it. A reference
/// upward (a lower layer naming a type of a higher one) fails here, with the file and the type.
@Suite struct LayerRuleTests {
    /// The layers, bottom first; folders in one entry share a layer.
    static let layers: [[String]] = [
        ["Platform"],
        ["Vocabulary"],
        ["JSON"],
        ["Schema"],
        ["Encryption"],
        ["Records"],
        ["Storage/Concurrency", "Storage/LMDB", "Storage/Keys"],
        ["Migration/Inference"],
        ["Layouts"],
        ["Catalog"],
        ["Changes"],
        ["Objects", "Objects/Typed"],
        ["Models"],
        ["Observation"],
        ["History"],
        ["Migration", "Migration/Custom", "Migration/Execution"],
        ["Maintenance"],
        ["Opening"],
        ["Store"],
        ["Interchange"],
        ["Testing"],
    ]

    static var sources: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Strata")
    }

    /// Each folder's Swift files (relative folder → file URLs).
    static func folders() throws -> [String: [URL]] {
        var out: [String: [URL]] = [:]
        let root = sources.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [:] }
        while let relative = walker.nextObject() as? String {
            guard relative.hasSuffix(".swift") else { continue }
            let folder = (relative as NSString).deletingLastPathComponent
            out[folder, default: []].append(URL(fileURLWithPath: root + "/" + relative))
        }
        return out
    }

    /// The source without comments and string literals (type names in prose are not references).
    static func code(_ text: String) -> String {
        var out = ""
        var i = text.startIndex
        func starts(_ s: String) -> Bool { text[i...].hasPrefix(s) }
        while i < text.endIndex {
            if starts("//") {
                while i < text.endIndex && text[i] != "\n" { i = text.index(after: i) }
            } else if starts("/*") {
                guard let end = text.range(of: "*/", range: i..<text.endIndex) else { break }
                i = end.upperBound
            } else if starts("\"\"\"") {
                guard let end = text.range(of: "\"\"\"", range: text.index(i, offsetBy: 3)..<text.endIndex) else { break }
                i = end.upperBound
                out += " \"\" "
            } else if text[i] == "\"" {
                i = text.index(after: i)
                while i < text.endIndex && text[i] != "\"" && text[i] != "\n" {
                    if text[i] == "\\" { i = text.index(after: i); if i == text.endIndex { break } }
                    i = text.index(after: i)
                }
                if i < text.endIndex { i = text.index(after: i) }
                out += " \"\" "
            } else {
                out.append(text[i])
                i = text.index(after: i)
            }
        }
        return out
    }

    /// The identifiers of a piece of code.
    static func identifiers(_ code: String) -> [Substring] {
        code.split { !($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// The type names a file declares at its top level (nested types such as `State` or `Step` share names
    /// across files and are not the concepts a layer owns).
    static func declaredTypes(_ code: String) -> [String] {
        var out: [String] = []
        for line in code.split(separator: "\n") where !(line.first?.isWhitespace ?? true) {
            let words = identifiers(String(line))
            for (k, word) in words.enumerated() where ["struct", "enum", "class", "protocol", "actor", "typealias"].contains(word) {
                if k + 1 < words.count, let first = words[k + 1].first, first.isUppercase { out.append(String(words[k + 1])) }
                break
            }
        }
        return out
    }

    @Test("every folder of Sources/Strata has a layer, and no code names a type of a higher layer")
    func referencesPointDown() throws {
        let folders = try Self.folders()
        #expect(!folders.isEmpty, "no sources found at \(Self.sources.path)")
        var layerOf: [String: Int] = [:]
        for (i, layer) in Self.layers.enumerated() { for folder in layer { layerOf[folder] = i } }
        let unplaced = folders.keys.filter { layerOf[$0] == nil }.sorted()
        #expect(unplaced.isEmpty, "folders without a layer (add them to LayerRuleTests.layers and to Architecture.md): \(unplaced)")

        var codeOf: [URL: String] = [:]
        var home: [String: String] = [:]
        for (folder, files) in folders {
            for file in files {
                let code = Self.code(try String(contentsOf: file, encoding: .utf8))
                codeOf[file] = code
                for name in Self.declaredTypes(code) where home[name] == nil { home[name] = folder }
            }
        }
        var upward: [String] = []
        for (folder, files) in folders {
            guard let level = layerOf[folder] else { continue }
            for file in files {
                let used = Set(Self.identifiers(codeOf[file] ?? "").map(String.init))
                for name in used {
                    guard let declaredIn = home[name], let higher = layerOf[declaredIn], higher > level else { continue }
                    upward.append("\(folder)/\(file.lastPathComponent) names \(name) (\(declaredIn))")
                }
            }
        }
        #expect(upward.isEmpty, "references that point up a layer:\n\(upward.sorted().joined(separator: "\n"))")
    }
}
