import Foundation
import StrataTortureKit

/// Damaged copies of stores, and opening them in sacrificial children.
enum Damage {
    static let pageSize = 4096

    /// The signals with which LMDB 0.9 kills a process reading a damaged B-tree page: a wild pointer (SIGSEGV),
    /// a page past the end of the file (SIGBUS), or one of its assertions (SIGABRT). A trap of Swift code
    /// (SIGILL, SIGTRAP) is not among them.
    static let lmdbCrashSignals: Set<Int32> = [SIGSEGV, SIGBUS, SIGABRT]

    /// A copy of `store`'s data file with `change` applied to its bytes.
    /// With `lockFile`, the copy gets an (empty) `lock.mdb` too, as a store that was opened has.
    static func copy(_ store: URL, to directory: URL, lockFile: Bool = true, _ change: (inout [UInt8]) -> Void) throws {
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var bytes = [UInt8](try Data(contentsOf: store.appendingPathComponent("data.mdb")))
        change(&bytes)
        try Data(bytes).write(to: directory.appendingPathComponent("data.mdb"))
        if lockFile { try Data().write(to: directory.appendingPathComponent("lock.mdb")) }
    }

    static func flip(_ bytes: inout [UInt8], bit: Int) {
        guard bit / 8 < bytes.count else { return }
        bytes[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
    }

    /// LMDB's meta page fields (offsets inside meta page 0; meta page 1 is one page further).
    enum MetaField: Int, CaseIterable {
        case magic = 16, version = 20, mapSize = 32, freeRoot = 80, mainRoot = 128, lastPage = 136, transactionID = 144
    }

    static func write32(_ bytes: inout [UInt8], at offset: Int, _ value: UInt32) {
        guard offset + 4 <= bytes.count else { return }
        withUnsafeBytes(of: value.littleEndian) { for i in 0..<4 { bytes[offset + i] = $0[i] } }
    }

    static func write64(_ bytes: inout [UInt8], at offset: Int, _ value: UInt64) {
        guard offset + 8 <= bytes.count else { return }
        withUnsafeBytes(of: value.littleEndian) { for i in 0..<8 { bytes[offset + i] = $0[i] } }
    }

    /// The outcome line of each store of `entries` (`<dir> [damaged ids]`), opened one after another in a
    /// `strata-torture open-many` child that is restarted after any store that kills it. A store that
    /// killed its child gets `SIGNAL <n> <the end of its standard error>`.
    static func openMany(_ entries: [String], workspace: Workspace, name: String, count: Int, plan: String = "v1",
                         extra: [String] = []) throws -> [String] {
        let list = workspace.url("\(name).list")
        try entries.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        var outcomes = [String](repeating: "", count: entries.count)
        var start = 0
        while start < entries.count {
            let child = try Child(["open-many", list.path, "--plan", plan, "--count", "\(count)", "--seed", "\(Tier.seed)",
                                   "--start", "\(start)"] + extra)
            var begun = start
            var done = false
            var hung = false
            while true {
                guard let line = child.nextLine(timeout: 30) else {
                    // No output for 30 s, the output still open: a store that makes the child hang. Kill it.
                    // (When the output ended, the child is gone — by a signal, or an exit — not hung.)
                    if !child.outputEnded { hung = true; child.killNow() }
                    break
                }
                if line.hasPrefix("BEGIN "), let i = Int(line.dropFirst(6)) { begun = i }
                if line.hasPrefix("OPENED ") || line.hasPrefix("REFUSED ") {
                    let parts = line.split(separator: " ", maxSplits: 2)
                    if parts.count >= 2, let i = Int(parts[1]), i < outcomes.count { outcomes[i] = line }
                }
                if line == "DONE" { done = true }
            }
            let run = child.wait(timeout: 60)
            if done { break }
            if begun < outcomes.count {
                let errors = run.errorOutput.suffix(200).replacingOccurrences(of: "\n", with: " ")
                outcomes[begun] = hung ? "HANG (killed)" : run.signal.map { "SIGNAL \($0) \(errors)" } ?? "EXIT \(run.exitCode ?? -1) \(errors)"
            }
            start = begun + 1
        }
        return outcomes
    }

    /// `key=value` fields of an `OPENED` line.
    static func fields(_ line: String) -> [String: Int] {
        var out: [String: Int] = [:]
        for part in line.split(separator: " ") {
            let kv = part.split(separator: "=")
            if kv.count == 2, let v = Int(kv[1]) { out[String(kv[0])] = v }
        }
        return out
    }
}
