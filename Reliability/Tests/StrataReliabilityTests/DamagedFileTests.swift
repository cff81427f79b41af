import Foundation
import StrataTestKit
import StrataTortureKit
import Testing

/// Area 5 of issue 7: damaged files. `data.mdb` truncated to 0 bytes, inside the meta pages, after them and at
/// random sizes; a missing data file next to its lock file; magic or version overwritten in one or both
/// meta pages. Every open runs in a child: a typed error every time, no child killed by a signal, the file
/// left byte-identical, and a 0-byte data file of an existing store never taken for a new store — even
/// with `createIfMissing` on, the default.
extension ReliabilitySuite {
    @Suite struct DamagedFiles {
        @Test("truncations, a missing data file, bad magic and version: typed errors, never a crash")
        func damagedFiles() throws {
            try #require(Products.available)
            let workspace = try Workspace("damaged")
            let count = 600
            let pristine = try PristineStores.v1(count: count)
            let size = try FileManager.default.attributesOfItem(atPath: pristine.appendingPathComponent("data.mdb").path)[.size] as? Int ?? 0
            let page = Damage.pageSize
            var cases: [(String, URL, expected: String)] = []
            var sizes = [0, 1, 100, page - 1, page, page + 100, 2 * page - 1, 2 * page, 3 * page, size - page, size - 1]
            var random = SeededGenerator(seed: Tier.seed &+ 55)
            for _ in 0..<Tier.current.pick(ci: 50, full: 400) { sizes.append(Int(random.next() % UInt64(size))) }
            for (i, s) in sizes.enumerated() {
                let dir = workspace.url("trunc\(i)")
                try Damage.copy(pristine, to: dir) { $0 = Array($0.prefix(s)) }
                cases.append(("truncated to \(s) bytes", dir, "StoreError.corrupted"))
            }
            for (label, offsets) in [("meta 0", [0]), ("meta 1", [page]), ("both metas", [0, page])] {
                let magic = workspace.url("magic-\(label.replacingOccurrences(of: " ", with: ""))")
                try Damage.copy(pristine, to: magic) { bytes in for o in offsets { Damage.write32(&bytes, at: o + 16, 0x1234_5678) } }
                cases.append(("bad magic in \(label)", magic, "StoreError.corrupted"))
                let version = workspace.url("version-\(label.replacingOccurrences(of: " ", with: ""))")
                try Damage.copy(pristine, to: version) { bytes in for o in offsets { Damage.write32(&bytes, at: o + 20, 2) } }
                cases.append(("LMDB format version 2 in \(label)", version, "StoreError.unsupportedFormat"))
            }
            // Without a lock file, a data file that is not LMDB's is not taken for a damaged store: `notAStore`.
            for (label, change) in [("truncated to 10 bytes, no lock file", { (b: inout [UInt8]) in b = Array(b.prefix(10)) }),
                                    ("bad magic, no lock file", { (b: inout [UInt8]) in Damage.write32(&b, at: 16, 0) })] {
                let dir = workspace.url("nolock-\(cases.count)")
                try Damage.copy(pristine, to: dir, lockFile: false, change)
                cases.append((label, dir, "StoreError.notAStore"))
            }
            let before = try cases.map { try Data(contentsOf: $0.1.appendingPathComponent("data.mdb")) }
            let outcomes = try Damage.openMany(cases.map(\.1.path), workspace: workspace, name: "damaged", count: count)
            var refused = 0, signals = 0, untyped = 0
            for (i, c) in cases.enumerated() {
                let line = outcomes[i]
                if line.hasPrefix("SIGNAL") { signals += 1 }
                if line.contains(" untyped ") { untyped += 1 }
                #expect(line.hasPrefix("REFUSED \(i) typed \(c.expected)"), "\(c.0): \(line)")
                if line.hasPrefix("REFUSED \(i) typed") { refused += 1 }
                // The failed open changed nothing.
                let now = try Data(contentsOf: c.1.appendingPathComponent("data.mdb"))
                #expect(now == before[i], "\(c.0): the file changed (\(before[i].count) → \(now.count) bytes)")
            }
            Figures.add("damaged files: \(cases.count) truncations and damaged meta pages, opened in children") { c in
                c.corruptions += refused
                c.childSignals += signals
                c.untypedErrors += untyped
                c.parentCrashes += 0
            }
        }

        @Test("a 0-byte or missing data.mdb of an existing store is never taken for a new store")
        func emptyDataFileIsNotANewStore() throws {
            try #require(Products.available)
            let workspace = try Workspace("empty")
            let pristine = try PristineStores.v1(count: 100)
            // A store that was opened (so it has a lock file), whose data file then became empty or vanished.
            var cases: [(String, URL, String)] = []
            for (name, keepLock, empty) in [("empty data file and lock file", true, true), ("empty data file alone", false, true),
                                            ("lock file without data file", true, false)] {
                let dir = try workspace.copy(pristine, to: name.replacingOccurrences(of: " ", with: "-"))
                let opened = try Child.run(["open", dir.path, "--plan", "v1", "--count", "100", "--seed", "\(Tier.seed)"])
                #expect(opened.line("OK ") != nil, "\(opened)")
                if !keepLock { try FileManager.default.removeItem(at: dir.appendingPathComponent("lock.mdb")) }
                if empty {
                    try Data().write(to: dir.appendingPathComponent("data.mdb"))
                } else {
                    try FileManager.default.removeItem(at: dir.appendingPathComponent("data.mdb"))
                }
                cases.append((name, dir, empty ? "emptyDataFile" : "missingDataFile"))
            }
            for (name, dir, reason) in cases {
                // createIfMissing is on: the default, and what an app does.
                let run = try Child.run(["open", dir.path, "--plan", "v1", "--create", "--count", "100", "--seed", "\(Tier.seed)"])
                #expect(run.line("ERR ")?.contains("typed StoreError.corrupted") == true, "\(name): \(run)")
                #expect(run.line("ERR ")?.contains(reason == "emptyDataFile" ? "data.mdb is empty" : "data.mdb is missing") == true, "\(name): \(run)")
                let data = dir.appendingPathComponent("data.mdb")
                if reason == "emptyDataFile" {
                    let size = try FileManager.default.attributesOfItem(atPath: data.path)[.size] as? Int
                    #expect(size == 0, "\(name): the empty data file was written (\(size ?? -1) bytes): taken for a new store")
                } else {
                    #expect(!FileManager.default.fileExists(atPath: data.path), "\(name): a new data file was created")
                }
            }
            // An empty directory is not a damaged store: a new store is created in it.
            let fresh = workspace.url("fresh")
            try FileManager.default.createDirectory(at: fresh, withIntermediateDirectories: true)
            let created = try Child.run(["open", fresh.path, "--plan", "v1", "--create", "--count", "0"])
            #expect(created.line("OK ") != nil, "\(created)")
            Figures.add("empty or missing data files of existing stores: \(cases.count) refused, none recreated") { c in
                c.corruptions += cases.count
            }
        }
    }
}
