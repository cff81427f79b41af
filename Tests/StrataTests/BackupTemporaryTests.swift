import Foundation
import Strata
import StrataTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A backup (and a store's creation) is written into `.<name>.strata-tmp-<pid>-<uuid>` beside its
/// destination and renamed into place. What a killed process left there is removed by the next backup or
/// creation at that destination; the temporary of a process that is still running is never touched.
@Suite struct BackupTemporaryTests {
    /// A process ID that is not in use: a child that has exited and been reaped.
    static func deadProcessID() throws -> pid_t {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    static func schema() throws -> Schema {
        try Schema("v1") {
            Entity("Entry") { Attribute("title", .string) }
        }
    }

    @Test func leftoversOfDeadProcessesAreRemovedAndThoseOfLiveOnesKept() throws {
        let dir = try TemporaryDirectory("backup-temporaries")
        let store = try Store.open(at: dir.path("store"), schema: try Self.schema())
        defer { store.close() }
        try store.write { context in _ = try context.insert("Entry", ["title": .string("kept")]) }

        let dead = dir.path(".copy.strata-tmp-\(try Self.deadProcessID())-\(UUID().uuidString)")
        let live = dir.path(".copy.strata-tmp-\(getpid())-\(UUID().uuidString)")
        let otherName = dir.path(".other.strata-tmp-\(try Self.deadProcessID())-\(UUID().uuidString)")
        for leftover in [dead, live, otherName] {
            try FileManager.default.createDirectory(at: leftover, withIntermediateDirectories: false)
            try Data("partial".utf8).write(to: leftover.appendingPathComponent("data.mdb"))
        }

        try store.backup(to: dir.path("copy"))

        #expect(!FileManager.default.fileExists(atPath: dead.path), "a dead process's temporary stays")
        #expect(FileManager.default.fileExists(atPath: live.path), "a live process's temporary was removed")
        #expect(FileManager.default.fileExists(atPath: otherName.path), "another destination's temporary was removed")
        let copy = try Store.open(at: dir.path("copy"), schema: try Self.schema())
        defer { copy.close() }
        #expect(try copy.read { try $0.objects("Entry").count() } == 1)
    }
}
