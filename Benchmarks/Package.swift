// swift-tools-version: 6.1
import PackageDescription

/// Coffer's benchmarks (package-benchmark). A separate package so that a plain `swift test`
/// at the root never builds the benchmark toolchain. Run from the repository root:
///   swift package --package-path Benchmarks --scratch-path Benchmarks/.build benchmark
let suites = ["Unlock", "Store", "AEAD", "Policy"]  // not "Crypto": swift-crypto (a dependency of Coffer, for TOTP) has a target of that name

let package = Package(
    name: "CofferBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "Coffer", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // libsodium called directly, the baseline of the AEAD suite (Coffer's own CSodium module is not a product).
        .systemLibrary(name: "CSodiumRaw", path: "Sources/CSodiumRaw", pkgConfig: "libsodium"),
        .target(
            name: "BenchSupport",
            dependencies: [
                .product(name: "Coffer", package: "Coffer"),
                .product(name: "CofferTestSupport", package: "Coffer"),  // KDFParameters.minimal
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Sources/BenchSupport",
            swiftSettings: [.swiftLanguageMode(.v5)]),
        // Not a benchmark: a plain driver for valgrind/callgrind (see Benchmarks/README.md).
        .executableTarget(
            name: "ProfileUnlock",
            dependencies: [
                .product(name: "Coffer", package: "Coffer"),
                .product(name: "CofferTestSupport", package: "Coffer"),  // KDFParameters.minimal
            ],
            path: "Sources/ProfileUnlock",
            swiftSettings: [.swiftLanguageMode(.v5)]),
    ] + suites.map { suite in
        .executableTarget(
            name: suite,
            dependencies: [
                "BenchSupport",
                .product(name: "Coffer", package: "Coffer"),
                .product(name: "CofferTestSupport", package: "Coffer"),
                "CSodiumRaw",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/\(suite)",
            swiftSettings: [.swiftLanguageMode(.v5)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")])
    }
)
