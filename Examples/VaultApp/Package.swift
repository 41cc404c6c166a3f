// swift-tools-version: 6.1
import PackageDescription

/// What an app does with a vault, written against the `Coffer` product alone and checked by its
/// own tests (run in CI by `.ci/run` through `check.sh`). It links neither `CofferImport` nor
/// `CofferTestSupport`, so building it shows an app pays for no importer, ZIPFoundation or zlib.
let package = Package(
    name: "VaultApp",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [.package(name: "Coffer", path: "../..")],
    targets: [
        .target(name: "VaultApp", dependencies: [.product(name: "Coffer", package: "Coffer")]),
        // An AutoFill extension's path: the device key, no key derivation (spec/unlock.md §11).
        .executableTarget(name: "VaultAutoFill", dependencies: ["VaultApp", .product(name: "Coffer", package: "Coffer")]),
        .testTarget(name: "VaultAppTests", dependencies: ["VaultApp", .product(name: "Coffer", package: "Coffer")]),
    ]
)
