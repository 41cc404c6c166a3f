import CofferImport
import ArgumentParser
@_spi(CofferInternals) import Coffer
import CofferDesktop

/// `coffer pin set|rm|status` (spec/cli.md §4.11; the mechanism is spec/unlock.md).
struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Manage PIN unlock (a 6–12 digit PIN, throttled, tied to this device and boot session).",
        discussion: """
            After `pin set`, --pin or --pin-file unlocks instead of the master password. Wrong PINs are \
            throttled (4 free, then waits of 1 min up to 1 h; the 10th erases the PIN). The device secret \
            lives in $XDG_RUNTIME_DIR/coffer, so a PIN stops working at logout or reboot.
            """,
        subcommands: [PinSetCommand.self, PinRemoveCommand.self, PinStatusCommand.self])
}

struct PinSetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set", abstract: "Set or replace the PIN (needs the master password, even while `coffer unlock` holds the vault).",
        discussion: """
            A PIN is a new way into the vault, so it is never set with the agent's key, a PIN or a device key: \
            whatever process asks, only the master password can make one (spec/agent.md §5).
            """)

    @Option(name: .customLong("new-pin-file"), help: ArgumentHelp("Read the new PIN from this file's first line.", valueName: "file"))
    var newPinFile: String?

    @OptionGroup var vaultOptions: MasterPasswordOptions

    func run() throws {
        let store = try RuntimeDirectoryDeviceSecretStore.forCurrentUser()
        let path = try vaultOptions.path()
        guard VaultLocation.exists(path) else { throw CofferError.vaultMissing(at: path) }
        // The PIN is checked before the master password is asked for (and its key derived).
        let pin = try SecretInput.readNew(file: newPinFile, label: "New PIN (6–12 digits): ", what: "PIN",
                                          option: "--new-pin-file FILE", live: Checklists.pin) { pin in
            try PINPolicy.validate(pin.unsafeString())
        }
        // The master password itself, even while an agent is unlocked: an unlocked agent is access
        // that ends at `coffer lock`, and a PIN would outlast it (spec/agent.md §5, spec/cli.md §4.11).
        let vault = try vaultOptions.open(mode: .readWrite)
        defer { vault.close() }
        let pins = store.pinUnlock(forVault: vault.path)
        try Progress.during("Deriving the PIN key") { try pins.setPIN(pin, on: vault) }
        Terminal.note("PIN set; unlock with --pin (or --pin-file) until logout or reboot")
    }
}

struct PinRemoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove the PIN (needs the master password).")

    @OptionGroup var vaultOptions: MasterPasswordOptions

    func run() throws {
        let store = try RuntimeDirectoryDeviceSecretStore.forCurrentUser()
        let vault = try vaultOptions.open(mode: .readWrite)
        defer { vault.close() }
        try store.pinUnlock(forVault: vault.path).removePIN(from: vault)
        Terminal.note("PIN removed")
    }
}

struct PinStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show whether a PIN is set and usable, attempts left and any wait (no password needed).")

    @Flag(help: "Print a JSON object (set, usable, deviceSecret, failures, attemptsLeft, waitSeconds).")
    var json = false

    @OptionGroup var vaultOptions: VaultPathOptions

    func run() throws {
        let path = try vaultOptions.path()
        guard VaultLocation.exists(path) else { throw CofferError.vaultMissing(at: path) }
        let store = try RuntimeDirectoryDeviceSecretStore.forCurrentUser()
        let status = try store.pinUnlock(forVault: path).status()
        let wait = status.waitRemaining.map { Int64(($0.components.seconds) + ($0.components.attoseconds > 0 ? 1 : 0)) }
        if json {
            Terminal.out(JSON.object([
                ("set", .bool(status.slotPresent)), ("usable", .bool(status.isUsable)),
                ("deviceSecret", .bool(status.deviceSecretPresent)), ("failures", .int(Int64(status.failures))),
                ("attemptsLeft", .int(Int64(status.attemptsLeft))), ("waitSeconds", wait.map(JSON.int) ?? .null),
            ]).render(pretty: false))
            return
        }
        if !status.slotPresent {
            Terminal.out("PIN: not set (`coffer pin set` sets one)")
        } else if !status.isUsable {
            Terminal.out("PIN: set but not usable on this device (device secret or attempt counter missing); unlock with the master password and `coffer pin set` again")
        } else {
            Terminal.out("PIN: set, \(status.failures) wrong attempt(s), \(status.attemptsLeft) left before it is erased")
            if let wait { Terminal.out("wait: \(wait) s before the next attempt") }
        }
    }
}
