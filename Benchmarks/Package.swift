// swift-tools-version: 6.1
// Strata's benchmark runner: Strata beside raw LMDB (the limit), SQLite and GRDB (the peers), in one command.
// A package of its own so that its dependencies (SQLite, GRDB, the raw-LMDB baseline) never reach the library's users.
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the library's package identity is the name of the
// folder this one sits in (`main` in a clone called `main`), whatever the clone is called.
let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "StrataBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "strata-bench", targets: ["strata-bench"]),
    ],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // GRDB, the Swift peer (it links the system SQLite, like StrataBenchSQLite).
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        // `SymmetricKey` for the encrypted rows' fixed keys: the package and version the library uses.
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        // The same system LMDB the store uses (Debian: liblmdb-dev), under a project-prefixed module name
        // (`CLMDB` and `LMDB` are taken; the library's own `CStrataLMDB` is internal to it).
        .systemLibrary(
            name: "StrataBenchLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // SQLite's C API, the peer (Debian: libsqlite3-dev).
        .systemLibrary(
            name: "StrataBenchSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // The data set, clocks, memory probes and result records shared by every system.
        .target(name: "BenchCore"),
        // Each system's scenarios, in a module of its own (the two LMDB modules never meet in one file).
        .target(name: "BenchLMDB", dependencies: ["BenchCore", "StrataBenchLMDB"]),
        .target(name: "BenchSQLite", dependencies: ["BenchCore", "StrataBenchSQLite"]),
        .target(name: "BenchStrata", dependencies: [
            "BenchCore", .product(name: "Strata", package: library), .product(name: "StrataModels", package: library),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .target(name: "BenchGRDB", dependencies: ["BenchCore", .product(name: "GRDB", package: "GRDB.swift")]),
        .executableTarget(
            name: "strata-bench",
            dependencies: [
                "BenchCore", "BenchGRDB", "BenchLMDB", "BenchSQLite", "BenchStrata",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // The `strata` tool, built beside strata-bench for the cli-import and cli-export rows (it runs
                // the executable; nothing of it is linked in).
                .product(name: "strata", package: library),
            ]
        ),
        // Runs the runner at a small size and checks its JSON (no timed assertions).
        .testTarget(name: "StrataBenchTests", dependencies: ["strata-bench"]),
    ],
    swiftLanguageModes: [.v6]
)
