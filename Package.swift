// swift-tools-version: 6.1
// Strata: an embedded object store for Swift on LMDB, whose stores know the model that wrote them
// and migrate themselves in place.
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "Strata",
    // What the `Synchronization` module (Atomic, Mutex) needs; LMDB itself runs everywhere.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2), .macCatalyst(.v18)],
    products: [
        .library(name: "Strata", targets: ["Strata"]),
        // Models declared once in Swift: the `@Entity`, `@Field` and `@Related` macros (builds swift-syntax).
        .library(name: "StrataModels", targets: ["StrataModels"]),
        .executable(name: "strata", targets: ["StrataCLI"]),
        .executable(name: "strata-example", targets: ["StrataExample"]),
        // Helpers for apps to test their own migrations.
        .library(name: "StrataTestKit", targets: ["StrataTestKit"]),
    ],
    traits: [
        // Compiles the reliability suite's hooks into the library: fault points in the engine, LMDB calls that
        // can be made to fail, and the decoders' entry points. Off by default, so an app that depends on
        // Strata builds none of it; the nested packages Reliability/ and Fuzz/ turn it on.
        .trait(name: "ReliabilityHooks", description: "Fault injection and decoder entry points for Strata's reliability suite and fuzzer."),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Only the macro plugin and its tests use swift-syntax; the library never does.
        .package(url: "https://github.com/swiftlang/swift-syntax.git", from: "603.0.0"),
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
            ]
        ),
        // The compiler plugin behind `@Entity`: reads a struct's stored properties and generates its schema
        // entity and field-by-field record code.
        .macro(
            name: "StrataMacrosPlugin",
            dependencies: [
                .product(name: "SwiftSyntax", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
                .product(name: "SwiftDiagnostics", package: "swift-syntax"),
            ]
        ),
        // The macros' declarations, re-exporting Strata: `import StrataModels` is all a model file needs.
        .target(name: "StrataModels", dependencies: ["Strata", "StrataMacrosPlugin"]),
        // The `strata` tool's commands (thin: each parses its arguments, calls the library and words the outcome), as a
        // library so that tests can reach them; StrataCLI is its thin executable.
        .target(
            name: "StrataCommandLine",
            dependencies: ["Strata", "StrataTestKit", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Crypto", package: "swift-crypto")]
        ),
        .executableTarget(name: "StrataCLI", dependencies: ["StrataCommandLine"]),
        // The tutorial apps (posts, books, notes) as frozen version chains, for the example and the tests.
        .target(name: "StrataTutorials", dependencies: ["StrataModels", "StrataTestKit"]),
        .target(name: "StrataTestKit", dependencies: ["Strata"]),
        .executableTarget(name: "StrataExample", dependencies: ["StrataModels", "StrataTutorials"]),
        .target(name: "StrataTestSupport", dependencies: ["Strata", "StrataTestKit"], path: "Tests/StrataTestSupport"),
        // Fixtures: store files that only an older Strata or LMDB writes as they are (kept byte for byte).
        .testTarget(name: "StrataTests", dependencies: ["Strata", "StrataTestSupport", .product(name: "Crypto", package: "swift-crypto")],
                    resources: [.copy("Fixtures")]),
        // The deprecated Codable typed API (`Persistable`), which keeps working: its tests use it on purpose, so
        // their deprecation warnings are silenced here (the only target that does so).
        .testTarget(name: "StrataCodableAPITests", dependencies: ["Strata", "StrataTestSupport"],
                    swiftSettings: [.unsafeFlags(["-suppress-warnings"])]),
        // Expansion and diagnostic tests of the macros (the plugin's code, run in process).
        .testTarget(
            name: "StrataMacrosTests",
            dependencies: [
                "StrataMacrosPlugin",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
                .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
            ]
        ),
        // Macro models at run time: schemas identical to the DSL's, round trips, key-path queries, typed stages.
        .testTarget(name: "StrataModelTests", dependencies: ["StrataModels", "StrataTestSupport", "StrataTutorials",
                                                        .product(name: "Crypto", package: "swift-crypto")]),
        // Fixtures: a small store per version of every tutorial app, opened at head by FixtureTests.
        .testTarget(name: "StrataCustomMigrationTests", dependencies: ["Strata", "StrataTutorials", "StrataTestKit"],
                    resources: [.copy("Fixtures")]),
        // Runs the built `strata` executable (the dependency makes sure it is built) on temporary stores.
        .testTarget(name: "StrataCLITests", dependencies: ["StrataCLI", "StrataCommandLine", "Strata", "StrataTestSupport",
                                                      .product(name: "Crypto", package: "swift-crypto")]),
        // The reliability suite is the nested package Reliability/ (it builds the library with the
        // `ReliabilityHooks` trait); the benchmarks and the fuzzer are Benchmarks/ and Fuzz/.
    ],
    swiftLanguageModes: [.v6]
)
