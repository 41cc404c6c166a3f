#if canImport(SwiftUI)
import Coffer
import CofferTestSupport
import Foundation
import LockScreen
import SwiftUI

/// A window with the lock screen over a throwaway vault whose PIN is 492817: type other PINs to
/// see the attempts left, five of them to see the countdown. The vault lives in the temporary
/// directory. An app keeps its vault in its container and the PIN's device secret in the
/// Keychain (`KeychainDeviceSecretStore`); this demo keeps the secret in memory so that it leaves
/// nothing behind in the Keychain.
@main
struct LockScreenDemoApp: App {
    @Environment(\.scenePhase) private var scenePhase
    @State private var model: LockScreenModel

    init() {
        do {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("coffer-lockscreen-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let path = directory.appendingPathComponent("demo.coffer").path
            let pins = PINUnlock(vaultPath: path, deviceSecrets: InMemoryDeviceSecretStore())
            let vault = try Vault.create(at: path, password: try SecureBytes(utf8: "correct horse battery staple 2026"),
                                         kdf: .interactive)
            try pins.setPIN(try SecureBytes(utf8: "492817"), on: vault)  // the default PIN KDF: real progress
            vault.close()
            let session = UnlockSession(vaultPath: path, pin: pins, autoLockAfter: .seconds(60))
            _model = State(initialValue: LockScreenModel(session: session))
        } catch {
            fatalError("could not create the demo vault: \(error)")
        }
    }

    var body: some Scene {
        WindowGroup {
            LockScreenView(model: model)
        }
        .onChange(of: scenePhase) { _, phase in
            if phase == .background { model.lock() }  // lock when the app leaves the screen
        }
    }
}
#else
/// SwiftUI is not available here (Linux, Windows): the lock screen needs an Apple platform. See
/// Examples/UnlockDemo for the same sequence printed on a terminal.
@main
struct LockScreenDemoApp {
    static func main() {
        print("LockScreenDemo needs SwiftUI (iOS or macOS); Examples/UnlockDemo runs anywhere.")
    }
}
#endif
