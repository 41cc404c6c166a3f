// swift-tools-version: 6.1
import Foundation
import PackageDescription

// libsodium and zxcvbn-c: the system's, found through pkg-config and a module map (Linux; a Mac
// with Homebrew's). Apple platforms can use XCFrameworks instead: see the block at the end.
let nativeLibraries: [Target] = [
    .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
    .systemLibrary(name: "CZxcvbn", providers: [.apt(["libzxcvbn-dev"])]),
    // Argon2d and Argon2id for KeePass KDBX 4 imports (spec/cli.md §8.29): libsodium has no Argon2d
    // and runs Argon2 with one lane only. Used by CofferImport alone, never by the core.
    // Declarations only: the library is loaded when a KDBX database needs Argon2 (`Argon2Library`),
    // so no other command pays for loading it or needs it installed.
    .systemLibrary(name: "CArgon2", providers: [.apt(["libargon2-dev"])]),
]

/// Coffer: a password-vault core (crypto, vault format, store, unlock, policy) and the `coffer` CLI.
/// Benchmarks live in `Benchmarks/` as a separate package so `swift test` never builds them.
let package = Package(
    name: "Coffer",
    // The oldest releases with Duration, Clock and Task.sleep(for:), which the unlock code needs.
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        // Everything an app or an AutoFill extension needs; parses no other manager's files.
        .library(name: "Coffer", targets: ["Coffer"]),
        // Importers and exporters (CSV, JSON, KeePass XML, 1Password): the only target that links
        // ZIPFoundation, FoundationXML and zlib.
        .library(name: "CofferImport", targets: ["CofferImport"]),
        .executable(name: "coffer", targets: ["coffer"]),
        // Test doubles for apps' own tests: a manual clock and idle timer, an in-memory device-secret store.
        .library(name: "CofferTestSupport", targets: ["CofferTestSupport"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
        // HMAC-SHA1/SHA-2 for TOTP (RFC 6238): libsodium has no HMAC-SHA1. P-256 and (its _CryptoExtras
        // product) RSA for SSH keys (spec/ssh.md): libsodium has neither.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // Reads 1Password's .1pux export (a zip archive); on Linux it links zlib (zlib1g-dev, scripts/bootstrap).
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
        // `swift package generate-documentation` (scripts/docs, run in CI with warnings as errors).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: nativeLibraries + [
        // gunzip for the attachments of KeePass XML exports (spec/cli.md §8.14); ZIPFoundation has its own module named CZlib.
        .systemLibrary(
            name: "CZlibInflate",
            providers: [.apt(["zlib1g-dev"])]),
        // The core (Sources/Coffer): crypto, vault format, store, unlock, policy, generator, TOTP,
        // merge, lookup. It imports only libsodium, zxcvbn-c, swift-crypto and the portable calls.
        .target(
            name: "Coffer",
            dependencies: [
                "CSodium", "CZxcvbn", "CofferSystem", "CofferData", .product(name: "Crypto", package: "swift-crypto"),
                // RSA SSH keys (spec/ssh.md): generation, PKCS#1 v1.5 signatures with SHA-256/512.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]),
        // Generated data, no code (Sources/CofferData/README.md): the word, password and PIN lists
        // and the Public Suffix List as string literals, read by the core through `package` names.
        .target(name: "CofferData", exclude: ["README.md"]),
        // The C library's calls under names of their own, for Linux and Darwin alike: the one place
        // that picks Glibc or Darwin, so no other file qualifies a call with a platform module.
        .target(name: "CofferSystem"),
        // Other managers' files in and out (spec/cli.md §8): builds on the core's public and package API.
        .target(
            name: "CofferImport",
            dependencies: ["Coffer", "CZlibInflate", "CArgon2", .product(name: "ZIPFoundation", package: "ZIPFoundation")]),
        // The agent (spec/agent.md): its wire protocol, the server the CLI runs as `coffer agent`,
        // and the client side of the socket. Only the CLI uses it.
        // The agent never touches device secrets or PIN state: it can make no new way in (spec/agent.md §5).
        .target(name: "CofferAgent", dependencies: ["Coffer", "CofferOperations", "CofferSystem", "CProcess", "CofferProcess"]),
        // What can be done to an open vault, with its one in-process meaning (spec/agent.md §3):
        // commands call it, the agent serves it; neither asks which side answers.
        .target(name: "CofferOperations", dependencies: ["Coffer"]),
        .target(name: "CofferTestSupport", dependencies: ["Coffer", "CSodium"]),
        // Linux-desktop policy kept out of the core: device secrets in $XDG_RUNTIME_DIR (spec/unlock.md §2).
        .target(name: "CofferDesktop", dependencies: ["Coffer", "CofferSystem"]),
        // Starting other programs (clipboard tools, the CLI under test) without Foundation's
        // Process, which waits on pipes a forking child keeps open (spec/cli.md §4.7).
        .target(name: "CProcess"),
        .target(name: "CofferProcess", dependencies: ["CProcess", "CofferSystem"]),
        .executableTarget(
            name: "coffer",
            dependencies: [
                "Coffer",
                "CofferImport",
                "CofferAgent",
                "CofferDesktop",
                "CofferOperations",
                "CofferProcess",
                "CofferSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Child process for UnlockCrashTests: attempts wrong PINs until killed (spec/unlock.md §5.3).
        .executableTarget(name: "coffer-pin-probe", dependencies: ["Coffer", "CofferDesktop", "CofferSystem"], path: "Tests/PINProbe"),
        // Tests, one target per module (each builds without the others' dependencies where it can),
        // over shared fixtures: temporary directories, vector files, a simulated disk (Tests/Helpers).
        .target(name: "CofferTestHelpers", dependencies: ["Coffer", "CofferTestSupport"], path: "Tests/Helpers"),
        .testTarget(
            name: "CofferTests",
            dependencies: [
                "Coffer", "CofferTestSupport", "CofferTestHelpers", "CofferDesktop", "CofferProcess",
                "CofferSpecWriter",  // the spec's second writer, for the format vectors
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        .testTarget(
            name: "CofferImportTests",
            dependencies: [
                "Coffer", "CofferImport", "CofferTestSupport", "CofferTestHelpers", "CofferFuzzSupport",
                .product(name: "PropertyBased", package: "swift-property-based"),  // CXFPropertyTests
            ],
            exclude: ["Fixtures"]),  // export files read by path (Repository.url), not bundled
        .testTarget(name: "CofferAgentTests", dependencies: ["Coffer", "CofferAgent", "CofferOperations", "CofferTestHelpers"]),
        .testTarget(name: "CofferFuzzTests", dependencies: ["Coffer", "CofferImport", "CofferFuzzSupport", "CofferTestHelpers"]),
        // The CLI, run as a user runs it: installed, by name, through a pseudo-terminal (spec/cli.md).
        .testTarget(
            name: "CofferCLITests",
            dependencies: [
                "Coffer", "CofferImport", "CofferTestSupport", "CofferTestHelpers", "CofferDesktop", "CofferProcess",
                "coffer",  // @testable: the exit-code table (spec/cli.md §5) is checked for every core code
                .product(name: "PropertyBased", package: "swift-property-based"),
            ]),
        // Fuzzing (Fuzz/README.md): harnesses shared by the libFuzzer executables and `swift test`.
        .target(
            name: "CofferFuzzSupport", dependencies: ["Coffer", "CofferImport", "CofferAgent", "CofferOperations", "CofferTestSupport", "CofferSpecWriter"],
            path: "Fuzz/Support"),
        // A vault writer built from spec/format.md alone: the fuzzers' seeds and the format vectors.
        // Apart from the harnesses so the core's tests build without the importers and the agent.
        .target(name: "CofferSpecWriter", dependencies: ["Coffer", "CofferTestSupport", "CSodium"], path: "Fuzz/SpecWriter"),
        .executableTarget(name: "FuzzVaultReader", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzVaultReader"),
        .executableTarget(name: "FuzzVaultRecords", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzVaultRecords"),
        .executableTarget(name: "FuzzItemDecoder", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzItemDecoder"),
        .executableTarget(name: "FuzzPasswordRules", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzPasswordRules"),
        .executableTarget(name: "FuzzImportCSV", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzImportCSV"),
        .executableTarget(name: "FuzzImportBitwardenJSON", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzImportBitwardenJSON"),
        .executableTarget(name: "FuzzImport1Password", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzImport1Password"),
        .executableTarget(name: "FuzzImportKeePassXML", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzImportKeePassXML"),
        .executableTarget(name: "FuzzThrottleState", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzThrottleState"),
        .executableTarget(name: "FuzzTOTPURI", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzTOTPURI"),
        .executableTarget(name: "FuzzAgentMessage", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzAgentMessage"),
        .executableTarget(name: "FuzzVaultMerge", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzVaultMerge"),
        .executableTarget(name: "FuzzPwnedPasswords", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzPwnedPasswords"),
        .executableTarget(name: "FuzzSiteURL", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzSiteURL"),
        .executableTarget(name: "FuzzPasskeyOptions", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzPasskeyOptions"),
        .executableTarget(name: "FuzzSSHKey", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzSSHKey"),
        .executableTarget(name: "FuzzSSHAgentMessage", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzSSHAgentMessage"),
        .executableTarget(name: "FuzzFileExtraction", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzFileExtraction"),
        .executableTarget(name: "FuzzImportKDBX", dependencies: ["CofferFuzzSupport"], path: "Fuzz/FuzzImportKDBX"),
    ]
)

// ---- Apple platforms: libsodium and zxcvbn-c from XCFrameworks (docs/Apple.md) --------------------
// iOS has no system libsodium or zxcvbn-c. On a Darwin host where scripts/apple/build-xcframeworks.sh
// has built Frameworks/CSodium.xcframework and Frameworks/CZxcvbn.xcframework, every dependency on
// the system library targets CSodium and CZxcvbn becomes: the XCFramework when building for iOS,
// macOS or Mac Catalyst, the system library elsewhere. The frameworks' module maps declare the
// modules CSodium and CZxcvbn, so the sources import the same names. Untested on Apple platforms
// (no Apple machine in CI). On any other host this block compiles to nothing.
#if canImport(Darwin)
if FileManager.default.fileExists(atPath: Context.packageDirectory + "/Frameworks/CSodium.xcframework") {
    let frameworks = ["CSodium": "CSodiumFramework", "CZxcvbn": "CZxcvbnFramework"]
    let apple: [Platform] = [.iOS, .macOS, .macCatalyst]
    let others: [Platform] = [.linux, .android, .windows, .wasi]
    for target in package.targets {
        target.dependencies = target.dependencies.flatMap { dependency -> [Target.Dependency] in
            switch dependency {
            case .byNameItem(let name, nil), .targetItem(let name, nil):
                guard let framework = frameworks[name] else { return [dependency] }
                return [
                    .target(name: framework, condition: .when(platforms: apple)),
                    .target(name: name, condition: .when(platforms: others)),
                ]
            default:
                return [dependency]
            }
        }
    }
    package.targets += frameworks.sorted { $0.key < $1.key }.map { library, framework in
        .binaryTarget(name: framework, path: "Frameworks/\(library).xcframework")
    }
}
#endif
// ---- End of the Apple platforms block ----------------------------------------------------------------
