import Foundation
import Strata

/// A fresh directory under the system's temporary directory, removed when the value is released.
///
/// Keep the value in a local for the whole test (debug builds keep locals alive to the end of their
/// scope); stores opened inside it should be closed before it goes away.
///
/// ```swift
/// let dir = try TemporaryDirectory("roundtrip")
/// let store = try Store.open(at: dir.store, schema: schema)
/// ```
public final class TemporaryDirectory: @unchecked Sendable {
    /// The directory itself (it exists).
    public let url: URL

    /// Creates the directory; `label` appears in its name to help find leftovers.
    ///
    /// - Parameter inMemory: puts the directory on a memory file system (`/dev/shm`, where it exists and is
    ///   writable) instead of the system's temporary directory, so commits cost no disk flush. For tests of
    ///   logic that commit thousands of times (the random evolution test); durability is the reliability
    ///   suite's subject, on a real disk.
    public init(_ label: String = "test", inMemory: Bool = false) throws {
        url = ((inMemory ? Self.memoryFileSystem : nil) ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("strata-tests-\(label)-\(UUID().uuidString.prefix(12))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// `/dev/shm` when this machine has a writable one (Linux), otherwise nil.
    private static let memoryFileSystem: URL? = {
        let shm = URL(fileURLWithPath: "/dev/shm", isDirectory: true)
        return FileManager.default.isWritableFile(atPath: shm.path) ? shm : nil
    }()

    /// A path inside the directory (not created).
    public func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The default store location inside the directory (not created: `Store.open` creates it).
    public var store: URL { path("store") }

    /// The store's LMDB data file.
    public var dataFile: URL { store.appendingPathComponent("data.mdb") }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// File helpers for tests that inspect a store's bytes.
public enum StoreFileBytes {
    /// The name and bytes of every file in the store directory but `lock.mdb` (whose reader table changes
    /// with every open): what a refusal or a dry run must leave exactly as it was.
    public static func snapshot(_ store: URL) -> [String: Data] {
        var out: [String: Data] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: store.path)) ?? [] where name != "lock.mdb" {
            out[name] = (try? Data(contentsOf: store.appendingPathComponent(name))) ?? Data()
        }
        return out
    }

    /// The bytes of `data.mdb` of the store at `store`.
    public static func dataFile(of store: URL) throws -> Data {
        try Data(contentsOf: store.appendingPathComponent("data.mdb"))
    }

    /// Every byte offset at which `needle` occurs in `haystack`.
    public static func offsets(of needle: [UInt8], in haystack: Data) -> [Int] {
        guard !needle.isEmpty, haystack.count >= needle.count else { return [] }
        var out: [Int] = []
        haystack.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            let first = needle[0]
            var i = 0
            let last = bytes.count - needle.count
            while i <= last {
                if bytes[i] == first {
                    var j = 1
                    while j < needle.count && bytes[i + j] == needle[j] { j += 1 }
                    if j == needle.count { out.append(i) }
                }
                i += 1
            }
        }
        return out
    }

    /// Flips every bit of `count` bytes at each offset where `needle` occurs in the store's data file.
    /// - Returns: how many occurrences were damaged.
    @discardableResult
    public static func damage(_ needle: String, in store: URL, count: Int = 1) throws -> Int {
        let file = store.appendingPathComponent("data.mdb")
        var data = try Data(contentsOf: file)
        let found = offsets(of: Array(needle.utf8), in: data)
        for offset in found {
            for k in 0..<min(count, needle.utf8.count) { data[offset + k] ^= 0xFF }
        }
        try data.write(to: file)
        return found.count
    }
}
