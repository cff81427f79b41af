@_spi(Testing) import Strata
import Foundation
import StrataTortureKit
#if canImport(Glibc)
import Glibc
#endif

/// Checks the crash images the fault shim wrote while a child ran a workload (snapshot mode).
enum PowerLoss {
    struct Image {
        var syncPoint: Int
        var variant: Int
        /// The signature of the last acknowledged state before the image, and of the next one after it.
        var last: String
        var next: String?
        var createdBefore: Bool
    }

    /// Places every `IMAGE s v` line of a child's output among its `ACK`/`CREATED` lines.
    static func images(inLog log: String) -> [Image] {
        var out: [Image] = []
        var last = "none"
        var created = false
        var waiting: [Int] = []
        for line in log.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
            guard let head = parts.first else { continue }
            if head == "ACK" || head == "CREATED" {
                let sig = head == "ACK" ? (parts.count > 2 ? parts[2] : "none") : parts.dropFirst().joined(separator: " ")
                for i in waiting { out[i].next = sig }
                waiting.removeAll()
                last = sig
                if head == "CREATED" { created = true }
            } else if head == "IMAGE", parts.count >= 3, let s = Int(parts[1]), let v = Int(parts[2]) {
                waiting.append(out.count)
                out.append(Image(syncPoint: s, variant: v, last: last, next: nil, createdBefore: created))
            }
        }
        return out
    }

    /// Rebuilds an image's directory tree under `root` from its manifest.
    static func rebuild(out: String, image: Image, root: String) throws {
        let fm = FileManager.default
        try? fm.removeItem(atPath: root)
        try fm.createDirectory(atPath: root, withIntermediateDirectories: true)
        let name = String(format: "s%06d-v%d", image.syncPoint, image.variant)
        let manifest = try String(contentsOfFile: "\(out)/\(name).manifest", encoding: .utf8)
        let patches = (try? Data(contentsOf: URL(fileURLWithPath: "\(out)/\(name).patch"))) ?? Data()
        var unrenames: [(String, String)] = []
        for line in manifest.split(separator: "\n") {
            let parts = line.split(separator: " ").map(String.init)
            switch parts.first {
            case "BASE" where parts.count == 3:
                let target = root + "/" + parts[1]
                try fm.createDirectory(atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try? fm.removeItem(atPath: target)
                try fm.copyItem(atPath: "\(out)/\(parts[2])", toPath: target)
            case "PATCH" where parts.count == 5:
                guard let offset = Int(parts[2]), let length = Int(parts[3]), let at = Int(parts[4]),
                      at + length <= patches.count else { throw TortureError("bad patch line \(line)") }
                let fd = Glibc.open(root + "/" + parts[1], O_WRONLY)
                guard fd >= 0 else { throw TortureError("cannot open \(parts[1])") }
                defer { close(fd) }
                let written = patches.withUnsafeBytes { pwrite(fd, $0.baseAddress! + at, length, off_t(offset)) }
                guard written == length else { throw TortureError("short patch write") }
            case "UNRENAME" where parts.count == 3:
                unrenames.append((parts[1], parts[2]))
            default:
                throw TortureError("bad manifest line \(line)")
            }
        }
        for (new, old) in unrenames.reversed() {
            let from = root + "/" + new, to = root + "/" + old
            if fm.fileExists(atPath: from) {
                try? fm.removeItem(atPath: to)
                try fm.createDirectory(atPath: (to as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try fm.moveItem(atPath: from, toPath: to)
            }
        }
    }

    /// `check-images <shim out dir> --log <child's output> --store-rel <store path below the shim's
    /// directory> --work <dir> --plan <plan|create> [--start k]`: for each image, prints
    /// `IMG k s v OK match=last|next` or `IMG k s v FAIL <reason>`, after `BEGIN k`.
    static func checkImages(_ o: Options) throws -> Int32 {
        let log = try String(contentsOfFile: o.string("log", ""), encoding: .utf8)
        let all = images(inLog: log)
        let storeRel = o.string("store-rel", "store")
        let work = o.string("work", NSTemporaryDirectory() + "/strata-images")
        let oracle = SeededContents(seed: o.seed)
        var configuration = o.configuration()
        configuration.createIfMissing = false
        emit("IMAGES \(all.count)")
        for k in o.int("start", 0)..<all.count {
            let image = all[k]
            emit("BEGIN \(k)")
            let root = work + "/image"
            let label = "IMG \(k) \(image.syncPoint) \(image.variant)"
            do {
                try rebuild(out: o.path, image: image, root: root)
                let storeURL = URL(fileURLWithPath: root + "/" + storeRel)
                let exists = FileManager.default.fileExists(atPath: storeURL.path + "/data.mdb")
                let sig = exists ? signature(of: try ReliabilityProbe.snapshot(at: storeURL)) : "none"
                let match: String
                let lastID = image.last.split(separator: " ").first { $0.hasPrefix("t=") }.flatMap { Int($0.dropFirst(2)) }
                let sigID = sig.split(separator: " ").first { $0.hasPrefix("t=") }.flatMap { Int($0.dropFirst(2)) }
                if sig == image.last { match = "last" } else if sig == image.next { match = "next" } else if image.next == nil,
                   let l = lastID, let s = sigID, s == l + 1 {
                    // The process stopped at this sync point (crash mode): the commit in flight was never
                    // acknowledged, and may be on disk whole. Its contents are checked by resuming below.
                    match = "next(unacknowledged)"
                } else {
                    emit("\(label) FAIL state \(sig) is neither the last acknowledged (\(image.last)) nor the next (\(image.next ?? "-"))")
                    continue
                }
                if image.createdBefore && !exists {
                    emit("\(label) FAIL the store was created (acknowledged) but is missing")
                    continue
                }
                guard exists else {
                    emit("\(label) OK match=\(match) store=absent")
                    continue
                }
                // Resume on the image: open with the plan (finishing any migration) and check every object.
                let result: CheckResult
                if o.plan == "create" {
                    let store = try Store.open(at: storeURL, schema: try TortureModels.v1(), configuration: configuration)
                    let items = try store.read { try $0.count("Item") }
                    result = try oracle.check(store, expected: 0..<items)
                    store.close()
                    if items % o.batch != 0 && items != o.count {
                        emit("\(label) FAIL \(items) items is not a whole number of batches")
                        continue
                    }
                } else {
                    let plan = try TortureModels.plan(o.plan)
                    let store = try Store.open(at: storeURL, schema: plan.currentSchema, plan: plan, configuration: configuration)
                    let markers = SeededContents.expectedMarkers(plan: o.plan, version: store.schema.versionIdentifier)
                    var checked = try oracle.check(store, expected: 0..<o.count, expectedMarkers: markers)
                    if o.flags.contains("sweep"), checked.isClean {
                        // The sweep the power loss interrupted, run to its end on the image: every record then
                        // in its current layout, every object still equal to the oracle.
                        _ = try store.performMaintenance(batchSize: o.batch)
                        if try !store.maintenanceStatus().isComplete || store.info().entities.contains(where: { $0.layoutCount > 1 }) {
                            store.close()
                            emit("\(label) FAIL the sweep did not finish on the image")
                            continue
                        }
                        checked = try oracle.check(store, expected: 0..<o.count, expectedMarkers: markers)
                    }
                    result = checked
                    store.close()
                }
                if result.isClean {
                    emit("\(label) OK match=\(match) items=\(result.items)")
                } else {
                    emit("\(label) FAIL after resuming: \(result)")
                }
            } catch {
                let (typed, kind) = ErrorReport.classify(error)
                emit("\(label) FAIL \(typed ? "typed" : "untyped") \(kind): \(String(describing: error).prefix(200).replacingOccurrences(of: "\n", with: " "))")
            }
        }
        emit("DONE")
        return 0
    }
}
