// swift-tools-version: 6.1
// libFuzzer targets for Strata's decoders (records, metadata), kept out of the main package because they
// are built with sanitizers. See README.md:
//   swift build --sanitize=fuzzer --sanitize=address
//   SWIFT_BACKTRACE=enable=no .build/debug/FuzzDecoders Corpus -max_len=65536 -timeout=10 -rss_limit_mb=2048
import PackageDescription

let package = Package(
    name: "StrataFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Strata", path: "..", traits: ["ReliabilityHooks"]),
    ],
    targets: [
        .executableTarget(
            name: "FuzzDecoders",
            dependencies: [.product(name: "Strata", package: "Strata")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
