// swift-tools-version: 6.1
import PackageDescription

/// A SwiftUI lock screen bound to `UnlockSession`, for Apple platforms (docs/Apple.md). It is not
/// built by CI (Linux has no SwiftUI); its sources compile to nothing where SwiftUI is missing.
let package = Package(
    name: "LockScreen",
    platforms: [.iOS(.v17), .macOS(.v14)],
    dependencies: [.package(name: "Coffer", path: "../..")],
    targets: [
        .target(name: "LockScreen", dependencies: [.product(name: "Coffer", package: "Coffer")]),
        // `swift run LockScreenDemo` on a Mac (or open the package in Xcode): a throwaway vault
        // behind the lock screen, PIN 492817.
        .executableTarget(
            name: "LockScreenDemo",
            dependencies: [
                "LockScreen",
                .product(name: "Coffer", package: "Coffer"),
                .product(name: "CofferTestSupport", package: "Coffer"),  // the in-memory device-secret store
            ]),
    ]
)
