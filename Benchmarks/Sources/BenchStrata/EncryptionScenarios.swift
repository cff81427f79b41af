import BenchCore
import Crypto
import Foundation
import Strata

/// The encrypted rows (issue 26): `strata-encrypted` runs `insert`, `open`, `scan` and `get` as `strata-typed` does,
/// on a store opened with a fixed test key, and `key-rotation` alone.
enum EncryptionScenarios {
    /// The store's key (fixed, so that every child of a run opens the same store), and the key `key-rotation`
    /// rotates it to.
    static var key: SymmetricKey { SymmetricKey(data: (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) }) }
    static var newKey: SymmetricKey { SymmetricKey(data: (0..<32).map { UInt8(truncatingIfNeeded: 0xC3 &+ $0 &* 5) }) }

    /// The configuration a system opens its stores with: the default, and for `strata-encrypted` the test key.
    static func configuration(for system: System) -> StoreConfiguration {
        var configuration = StoreConfiguration()
        if system == .strataEncrypted { configuration.encryption = StoreEncryption(key: key) }
        return configuration
    }

    /// `key-rotation`: on an encrypted store of the data set (prepared by `insert`'s load), times
    /// `Store.rotateEncryptionKey(at:to:configuration:)`, then the open with both keys and `performMaintenance()` —
    /// the sweep re-sealing every value under the new key in its default batches — to the close. Checked after:
    /// the rotation is done, every post reads back equal to the data set with the new key alone, the old key is refused.
    static func measureKeyRotation(_ task: ChildTask, url: URL) throws -> ChildReport {
        let schema = try PostModel.v1()
        var old = StoreConfiguration()
        old.encryption = StoreEncryption(key: key)
        old.backgroundMaintenance = false
        var both = old
        both.encryption = StoreEncryption(key: newKey, previousKeys: [key])
        var resealed = 0
        var batches = 0
        let report = try measured(path: task.path) {
            let start = Clock.now()
            try Store.rotateEncryptionKey(at: url, to: newKey, configuration: old)
            let rotated = Clock.now() - start
            let store = try Store.open(at: url, schema: schema, configuration: both)
            resealed = try store.performMaintenance { _ in batches += 1 }.resealed
            guard try store.maintenanceStatus().valuesUnderPreviousKey == nil else { throw BenchFailure("the rotation is not done after the sweep") }
            store.close()
            return (Clock.now() - start, task.records, "records", ["begin_seconds": rotated], [])
        }
        guard resealed >= task.records else { throw BenchFailure("the sweep re-sealed \(resealed) values for \(task.records) posts") }
        try verifyRotated(task, url: url, schema: schema)
        var out = report
        out.extra["resealed"] = Double(resealed)
        out.extra["batches"] = Double(batches)
        return out
    }

    /// Every post, read with the new key alone, equals its record of the data set; the old key alone is refused.
    static func verifyRotated(_ task: ChildTask, url: URL, schema: Schema) throws {
        var configuration = StoreConfiguration()
        configuration.backgroundMaintenance = false
        configuration.encryption = StoreEncryption(key: newKey)
        let store = try Store.open(at: url, schema: schema, configuration: configuration)
        defer { store.close() }
        var n = 0
        try store.read { ctx in
            try ctx.objects(MacroPosts.V1.Post.self).forEach { p in
                n += 1
                let i = Int(p.objectID?.rawValue ?? 0)
                guard i >= 1, i <= task.records else { throw BenchFailure("post \(i) outside the data set") }
                let r = task.dataSet.record(i)
                guard p.postID == r.uuid, p.content == r.content, p.color == r.color, p.views == r.views else {
                    throw BenchFailure("post \(i) does not hold record \(i) after the rotation")
                }
            }
        }
        guard n == task.records else { throw BenchFailure("\(n) posts after the rotation, expected \(task.records)") }
        configuration.encryption = StoreEncryption(key: key)
        do {
            let refused = try Store.open(at: url, schema: schema, configuration: configuration)
            refused.close()
            throw BenchFailure("the old key still opens the store after the rotation")
        } catch let error as StoreError where error.code == .wrongEncryptionKey {}
    }
}
