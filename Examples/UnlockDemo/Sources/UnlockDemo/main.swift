import Coffer
import CofferTestSupport
import Foundation

// What a lock screen sees: every state `UnlockSession` publishes, printed as it arrives, while the
// demo plays a user who mistypes the PIN, waits out the pause, unlocks, and walks away.

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

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-unlock-demo-\(getpid())")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let path = directory.appendingPathComponent("demo.coffer").path

// A vault with one item and a PIN. The cheapest KDF keeps the demo fast; apps keep the defaults.
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
let states = session.states()  // subscribed now: the first state it delivers is the current one
let printer = Task {
    var seen: [String] = []
    for await state in states {
        let line = describe(state)
        print("  state: \(line)")
        seen.append(line)
        if seen.count > 1, line == "locked", seen.contains("unlocked") { break }
    }
    return seen
}

print("Five wrong PINs:")
for guess in ["111111", "222222", "333333", "444444", "555555"] {
    await session.unlock(pin: try SecureBytes(utf8: guess))
}
print("The right PIN, too soon:")
await session.unlock(pin: pin)
print("A minute later, the right PIN:")
clock.advance(by: .seconds(60))
await session.unlock(pin: pin)
let title = try session.withVault { vault in try vault.list().map(\.title) }
print("  items: \(title)")
print("Five idle minutes:")
timer.advance(by: .seconds(300))

let seen = await printer.value
guard session.state == .locked, seen.contains("unlocked"), seen.contains(where: { $0.contains("wait 60 s") }) else {
    print("unexpected sequence: \(seen)")
    exit(1)
}
print("Done: \(seen.count) states.")
