// swift-tools-version: 6.1
// libFuzzer targets for Strata's decoders (records, metadata), kept out of the main package because they
// are built with sanitizers. See README.md:
//   swift build --sanitize=fuzzer --sanitize=address
//   SWIFT_BACKTRACE=enable=no .build/debug/FuzzDecoders Corpus -max_len=65536 -timeout=10 -rss_limit_mb=2048
import Foundation
import PackageDescription

// SwiftPM names a path dependency after its folder: the library's identity is the folder this one sits in.
let library = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .lastPathComponent.lowercased()

let package = Package(
    name: "StrataFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "..", traits: ["ReliabilityHooks"]),
        // The decoder fixture's macro model (its generated decoder is fuzzed beside the store's own).
        .package(path: "../Reliability"),
    ],
    targets: [
        .executableTarget(
            name: "FuzzDecoders",
            dependencies: [
                .product(name: "Strata", package: library),
                .product(name: "StrataTortureKit", package: "reliability"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
