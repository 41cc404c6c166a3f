import Coffer
import CofferTestSupport
import Foundation

// What a lock screen sees: every state `UnlockSession` publishes, printed by a task that watches
// the session's stream (as a lock screen's view model would), while the demo plays a user who
// mistypes the PIN, waits out the pause, unlocks, and walks away.

/// One line per state, as a lock screen would word it.
func describe(_ state: UnlockState) -> String {
    switch state {
    case .locked: return "locked"
    case .derivingKey: return "deriving key…"
    case .unlocked: return "unlocked"
    case .failed(let error):
        switch error.detail {
        case .attemptsLeft(let left)?: return "failed: wrong PIN, \(left) attempts left [\(error.code)]"
        case .retryAfter(let wait)?: return "failed: too many tries, wait \(wait.components.seconds) s [\(error.code)]"
        default: return "failed: \(error.reason) [\(error.code)]"
        }
    }
}

/// The states the watcher has printed, in order.
struct Screen {
    var shown: AsyncStream<UnlockState>.Iterator

    /// Waits until the watcher has printed `end`, the state an action ended in.
    mutating func waitUntilShown(_ end: UnlockState) async {
        while let state = await shown.next(), state != end {}
    }
}

@main
struct UnlockDemo {
    static func main() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("coffer-unlock-demo-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("demo.coffer").path

        // A vault with one item and a PIN. The cheapest KDF keeps the demo fast; apps keep the
        // defaults. The PIN's device secret lives in memory here, in the Keychain in an app.
        let password = try SecureBytes(utf8: "correct horse battery staple 2026")
        let pin = try SecureBytes(utf8: "492817")
        let clock = ManualMonotonicClock()
        let pins = PINUnlock(vaultPath: path, deviceSecrets: InMemoryDeviceSecretStore(), clock: clock)
        do {
            let vault = try Vault.create(at: path, password: password, kdf: .minimal)
            _ = try vault.add(.login("example.com", username: "alice", password: try Secret("s3cret-Example")))
            try pins.setPIN(pin, on: vault, kdf: .minimal)
            vault.close()
        }

        let timer = ManualIdleTimer()
        let session = UnlockSession(vaultPath: path, pin: pins, autoLockAfter: .seconds(300), timer: timer)

        // The watcher prints each state as it arrives and reports it on `shown`, so the narration
        // below can wait for the screen to catch up before it says what the user does next.
        let states = session.states()  // subscribed now: the first state it delivers is the current one
        let (shown, shownSink) = AsyncStream.makeStream(of: UnlockState.self)
        let watcher = Task {
            var lines: [String] = []
            for await state in states {
                let line = describe(state)
                print("  state: \(line)")
                lines.append(line)
                shownSink.yield(state)
                if state == .locked, lines.contains("unlocked") { break }  // auto-locked: the demo is over
            }
            shownSink.finish()
            return lines
        }
        var screen = Screen(shown: shown.makeAsyncIterator())

        await screen.waitUntilShown(.locked)
        print("Five wrong PINs:")
        for guess in ["111111", "222222", "333333", "444444", "555555"] {
            await screen.waitUntilShown(await session.unlock(pin: try SecureBytes(utf8: guess)))
        }
        print("The right PIN, too soon:")
        await screen.waitUntilShown(await session.unlock(pin: pin))
        print("A minute later, the right PIN:")
        clock.advance(by: .seconds(60))
        await screen.waitUntilShown(await session.unlock(pin: pin))
        let titles = try session.withVault { vault in try vault.list().map(\.title) }
        print("  items: \(titles)")
        print("Five idle minutes:")
        timer.advance(by: .seconds(300))
        await screen.waitUntilShown(.locked)

        let lines = await watcher.value
        guard session.state == .locked, lines.contains("unlocked"),
              lines.contains(where: { $0.hasPrefix("failed: wrong PIN, 5 attempts left") }),
              lines.contains(where: { $0.hasPrefix("failed: too many tries, wait 60 s") })
        else {
            print("unexpected sequence: \(lines)")
            exit(1)
        }
        print("Done: \(lines.count) states.")
    }
}
