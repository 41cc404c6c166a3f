// coffer-pin-probe VAULT SECRET-DIR
// Attempts wrong PINs on VAULT in a loop until it is killed. UnlockCrashTests kills it at random
// moments and checks that the attempt counter never goes down (spec/unlock.md §5.3).
// Every guess starts with 9, so it can never be the test's PIN; guesses never reach the output.
@_spi(CofferInternals) import Coffer
import CofferDesktop
import CofferSystem

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: coffer-pin-probe VAULT SECRET-DIR")
    exit(2)
}
do {
    let pins = PINUnlock(vaultPath: arguments[1],
                         deviceSecrets: try RuntimeDirectoryDeviceSecretStore(directory: arguments[2]),
                         clock: SystemMonotonicClock())
    let random = SystemRandom()
    while true {
        var digits = "9"
        for _ in 0..<5 { digits.append(String(random.uniform(10))) }
        if case .success(let vault) = pins.attempt(pin: try SecureBytes(utf8: digits), mode: .readOnly) {
            vault.close()
        }
    }
} catch {
    print("coffer-pin-probe: \(error)")
    exit(1)
}
