/// What a person (or this device) gives to unlock a vault. Later kinds of credential add cases
/// here and a branch in `VaultUnlock.open`, and nothing in the store.
public enum UnlockCredential: Sendable {
    /// The master password (rate-limited when the device keeps throttle state, spec/unlock.md §7).
    case masterPassword(SecureBytes)
    /// The PIN (spec/unlock.md §2–§6): needs this device's secret and attempt counter.
    case pin(SecureBytes)
    /// This device's enrolled key, its wrapped half kept in `directory` (spec/unlock.md §11).
    case deviceKey(directory: String)
}

/// The one way a credential becomes an open vault (spec/unlock.md): the key derivation and the
/// throttling are here, the store only opens with the key found, and a caller (the CLI, an app)
/// only asks for the credential. Two forms: with this device's state for the vault, or without.
/// (Not one with an optional `PINUnlock`: copying an optional of it instantiates generic metadata
/// at run time, which the cost gate counts on every command.)
public enum VaultUnlock {
    /// Opens the vault with `credential`, with this device's state for it (`device`, made for the
    /// vault's path: its device secrets and throttle files): the master password is rate-limited
    /// (spec/unlock.md §7), the PIN throttled (§3–§6), a device key needs no key derivation (§11).
    /// `memoryBudgetKiB`: as for `Vault.open(at:password:mode:memoryBudgetKiB:)`.
    public static func open(with credential: UnlockCredential, device: PINUnlock, mode: Vault.AccessMode = .readWrite,
                            memoryBudgetKiB: UInt32? = nil) throws -> Vault {
        switch credential {
        case .masterPassword(let password):
            return try device.unlock(password: password, mode: mode, memoryBudgetKiB: memoryBudgetKiB)
        case .pin(let pin):
            return try device.unlock(pin: pin, mode: mode, memoryBudgetKiB: memoryBudgetKiB)
        case .deviceKey(let directory):
            return try DeviceKeyUnlock(vaultPath: device.vaultPath, deviceSecrets: device.deviceSecrets, directory: directory,
                                       fileSystem: device.fileSystem, random: device.random).open(mode: mode)
        }
    }

    /// Opens the vault at `path` with `credential` where the device keeps no state for it (no
    /// per-user runtime directory, a merge driver): the master password opens unthrottled; a PIN
    /// or a device key is unavailable.
    public static func open(at path: String, with credential: UnlockCredential, mode: Vault.AccessMode = .readWrite,
                            memoryBudgetKiB: UInt32? = nil) throws -> Vault {
        switch credential {
        case .masterPassword(let password):
            return try Vault.open(at: path, password: password, mode: mode, memoryBudgetKiB: memoryBudgetKiB)
        case .pin:
            throw CofferError.pinUnavailable()
        case .deviceKey:
            throw CofferError(.deviceKeyUnavailable, "this device keeps no secrets to open the vault without its password; unlock with the master password")
        }
    }
}
