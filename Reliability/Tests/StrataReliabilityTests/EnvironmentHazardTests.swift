import Foundation
import StrataTortureKit
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The reliability plan's item 25: permissions, read-only directories, a missing parent directory and an
/// address space too small for the map. Each case runs in a child process — as user `nobody` when the suite
/// runs as root (as CI does), since root ignores permission bits — and must end in a typed error with
/// `data.mdb` byte-identical, or in a store that opens and holds every object.
extension ReliabilitySuite {
    @Suite struct EnvironmentHazards {
        static let count = 600

        /// The arguments that make a child an unprivileged process.
        static var unprivileged: [String] { getuid() == 0 ? ["--as-nobody"] : [] }

        static func open(_ store: URL, _ extra: [String] = []) throws -> ChildResult {
            try Child.run(["open", store.path, "--plan", "v1", "--count", "\(count)", "--seed", "\(Tier.seed)"] + extra)
        }

        static func dataFile(_ store: URL) throws -> Data { try Data(contentsOf: store.appendingPathComponent("data.mdb")) }

        static func chmod(_ url: URL, _ mode: Int) throws {
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        }

        @Test("permissions, read-only directories and a missing parent: typed errors, files unchanged")
        func permissions() throws {
            try #require(Products.available, "strata-torture must be built (swift build --build-tests)")
            let workspace = try Workspace("hazards")
            try Self.chmod(workspace.root, 0o755)
            let pristine = try PristineStores.v1(count: Self.count)
            var problems: [String] = []
            var cases = 0

            // 1. A missing parent directory, even with creation allowed.
            cases += 1
            let missing = try Self.open(workspace.url("no/such/dir/store"), ["--create"])
            if missing.line("ERR ")?.hasPrefix("ERR typed StoreError.parentDirectoryMissing") != true { problems.append("missing parent: \(missing)") }
            if FileManager.default.fileExists(atPath: workspace.path("no")) { problems.append("missing parent: directories were created") }

            // 2. Creating a store in a directory the process may not write.
            cases += 1
            let locked = workspace.url("locked-parent")
            try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: false)
            try Self.chmod(locked, 0o555)
            let create = try Self.open(locked.appendingPathComponent("store"), ["--create"] + Self.unprivileged)
            if create.line("ERR ")?.hasPrefix("ERR typed StoreError.permissionDenied") != true { problems.append("create in a read-only directory: \(create)") }
            if try !FileManager.default.contentsOfDirectory(atPath: locked.path).isEmpty { problems.append("create in a read-only directory left files") }

            // 3. A store in a read-only directory (no lock file can be made): refused for writing and reading.
            let readOnlyDirectory = try workspace.copy(pristine, to: "read-only-dir")
            try Self.chmod(readOnlyDirectory.appendingPathComponent("data.mdb"), 0o444)
            try Self.chmod(readOnlyDirectory, 0o555)
            let before = try Self.dataFile(readOnlyDirectory)
            for mode in [[], ["--read-only"]] {
                cases += 1
                let run = try Self.open(readOnlyDirectory, mode + Self.unprivileged)
                if run.line("ERR ")?.hasPrefix("ERR typed StoreError.permissionDenied") != true { problems.append("read-only directory \(mode): \(run)") }
            }
            if try Self.dataFile(readOnlyDirectory) != before { problems.append("read-only directory: data.mdb changed") }

            // 4. A read-only data file in a writable directory: refused for writing, readable read-only.
            let readOnlyFile = try workspace.copy(pristine, to: "read-only-file")
            try Self.chmod(readOnlyFile.appendingPathComponent("data.mdb"), 0o444)
            try Self.chmod(readOnlyFile, 0o777)
            let beforeFile = try Self.dataFile(readOnlyFile)
            cases += 1
            let write = try Self.open(readOnlyFile, Self.unprivileged)
            if write.line("ERR ")?.hasPrefix("ERR typed StoreError.permissionDenied") != true { problems.append("read-only data file, writable open: \(write)") }
            cases += 1
            let read = try Self.open(readOnlyFile, ["--read-only"] + Self.unprivileged)
            if read.line("OK ")?.contains("clean=1") != true { problems.append("read-only data file, read-only open: \(read)") }
            if try Self.dataFile(readOnlyFile) != beforeFile { problems.append("read-only data file: data.mdb changed") }

            for directory in [locked, readOnlyDirectory, readOnlyFile] { try? Self.chmod(directory, 0o755) }
            Figures.add("environment hazards: \(cases) permission cases, typed errors, files unchanged") { c in
                c.untypedErrors += problems.filter { $0.contains("untyped") }.count
            }
            #expect(problems.isEmpty, "\(problems)")
        }

        @Test("an address space too small for the map: a smaller map at open, a typed error when growth fails")
        func addressSpace() throws {
            try #require(Products.available, "strata-torture must be built (swift build --build-tests)")
            let workspace = try Workspace("address-space")
            let store = try workspace.copy(try PristineStores.v1(count: Self.count), to: "store")
            // 120 MiB of address space cannot hold the default 1 GiB map: open retries with smaller maps.
            let small = try Self.open(store, ["--address-limit", "120"])
            #expect(small.line("OK ")?.contains("clean=1") == true, "\(small)")
            // Writing 80 MB of blobs needs a map the limit cannot hold: a typed error, committed work intact.
            let load = try Child.run(["write-load", store.path, "--from", "\(Self.count)", "--count", "400", "--batch", "100",
                                      "--blob-size", "200000", "--seed", "\(Tier.seed)", "--address-limit", "160"])
            #expect(load.line("ERR ")?.hasPrefix("ERR typed StoreError.addressSpaceExhausted") == true, "\(load)")
            let after = try Self.open(store, ["--ignore", "blob"])
            #expect(after.line("OK ")?.contains("clean=1") == true, "\(after)")
            Figures.add("address space: smaller map at open, typed error at growth") { _ in }
        }
    }
}
