// swift-tools-version: 6.1
import PackageDescription

/// A runnable example for app developers: drives `UnlockSession` through the states a lock screen
/// shows, with nothing but Coffer's public API (run in CI by `.ci/run`).
let package = Package(
    name: "UnlockDemo",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [.package(name: "Coffer", path: "../..")],
    targets: [
        .executableTarget(
            name: "UnlockDemo",
            dependencies: [
                .product(name: "Coffer", package: "Coffer"),
                // A clock and an idle timer moved by hand, so the demo shows a 60 s wait and an
                // auto-lock without waiting; an app uses the real ones (the defaults).
                .product(name: "CofferTestSupport", package: "Coffer"),
            ]),
    ]
)
