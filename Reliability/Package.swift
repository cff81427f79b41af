// swift-tools-version: 6.1
// Strata's reliability suite (Sources/Strata/Documentation.docc/Reliability.md): a child process that the tests
// kill, crash and starve (`strata-torture`), an LD_PRELOAD shim that models power loss and injects I/O errors,
// and the tests. A package of its own so that none of it reaches an app that depends on Strata: it builds the
// library with the `ReliabilityHooks` trait, which compiles in the fault points and the decoder entry points
// that a normal build of the library leaves out.
//
//   swift build --build-tests --package-path Reliability && swift test --skip-build --package-path Reliability
//
// (`scripts/test` runs it after the library's own suite; `scripts/torture-full` runs its full tier.)
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder, so the library's package identity is the name of the
// folder this one sits in (`main` in a clone called `main`), whatever the clone is called.
let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "StrataReliability",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "strata-torture", targets: ["StrataTorture"]),
        // The seeded contents and the decoder fixture's macro model, shared with the fuzz target (Fuzz/).
        .library(name: "StrataTortureKit", targets: ["StrataTortureKit"]),
        // Loaded into children only (LD_PRELOAD), never linked into anything.
        .library(name: "StrataFaultShim", type: .dynamic, targets: ["CStrataFaultShim"]),
    ],
    dependencies: [
        .package(path: "..", traits: ["ReliabilityHooks"]),
        // The key rotation trials' fixed keys (`SymmetricKey`); the same package and version the library uses.
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
    ],
    targets: [
        .target(name: "CStrataFaultShim", linkerSettings: [.linkedLibrary("dl")]),
        .target(name: "StrataTortureKit", dependencies: [
            .product(name: "Strata", package: library),
            .product(name: "StrataModels", package: library),
            .product(name: "StrataTestKit", package: library),
        ]),
        .executableTarget(name: "StrataTorture", dependencies: [
            .product(name: "Strata", package: library), .product(name: "StrataTestKit", package: library), "StrataTortureKit",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .testTarget(name: "StrataReliabilityTests", dependencies: [
            "StrataTorture", "StrataTortureKit",
            .product(name: "Strata", package: library), .product(name: "StrataTestKit", package: library),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
