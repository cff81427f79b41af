// swift-tools-version: 6.1
// Strata: an embedded object store for Swift on LMDB, whose stores know the model that wrote them
// and migrate themselves in place.
import PackageDescription

let package = Package(
    name: "Strata",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        .executable(name: "strata", targets: ["StrataCLI"]),
        .executable(name: "strata-example", targets: ["StrataExample"]),
        .library(name: "StrataTestKit", targets: ["StrataTestKit"]),
        // The reliability suite's child process and its LD_PRELOAD fault shim (test-only).
        .executable(name: "strata-torture", targets: ["StrataTorture"]),
        .library(name: "StrataFaultShim", type: .dynamic, targets: ["CStrataFaultShim"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    ],
    targets: [
        // LMDB from the system (Debian: liblmdb-dev). The module name carries our prefix because
        // `CLMDB` and `LMDB` are taken by other packages and SwiftPM cannot alias C modules.
        .systemLibrary(
            name: "CStrataLMDB",
            pkgConfig: "lmdb",
            providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
        ),
        // Small C helpers: hardware CRC-32C and the fork() detector.
        .target(name: "CStrataSupport"),
        .target(
            name: "Strata",
            dependencies: [
                "CStrataLMDB",
                "CStrataSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: [
                .define("STRATA_FAULT_INJECTION", .when(configuration: .debug)),
            ]
        ),
        .executableTarget(
            name: "StrataCLI",
            dependencies: ["Strata", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The tutorial apps (posts, books, notes) as frozen version chains, for the example and the tests.
        .target(name: "StrataTutorials", dependencies: ["Strata"]),
        // Helpers for apps to test their own migrations.
        .target(name: "StrataTestKit", dependencies: ["Strata"]),
        .executableTarget(name: "StrataExample", dependencies: ["Strata", "StrataTutorials"]),
        .target(name: "StrataTestSupport", dependencies: ["Strata"], path: "Tests/StrataTestSupport"),
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataTestSupport"]),
        .testTarget(name: "StrataCustomMigrationTests", dependencies: ["Strata", "StrataTutorials", "StrataTestKit"]),
        // Runs the built `strata` executable (the dependency makes sure it is built) on temporary stores.
        .testTarget(name: "StrataCLITests", dependencies: ["StrataCLI", "Strata"]),
        // The reliability suite (see Documentation.docc/Reliability.md): a child process that the tests kill,
        // crash and starve (`strata-torture`), an LD_PRELOAD shim that models power loss and injects I/O
        // errors (never linked into anything: loaded into children only), and the tests.
        .target(name: "CStrataFaultShim", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "StrataTortureKit", dependencies: ["Strata"]),
        .executableTarget(name: "StrataTorture", dependencies: ["Strata", "StrataTortureKit"]),
        .testTarget(name: "StrataReliabilityTests", dependencies: ["StrataTorture", "Strata", "StrataTortureKit"]),
    ],
    swiftLanguageModes: [.v6]
)
