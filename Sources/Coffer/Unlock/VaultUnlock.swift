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
/// only asks for the credential.
public enum VaultUnlock {
    /// Opens the vault at `path` with `credential`.
    ///
    /// `device`: this device's state for that vault (its device secrets and throttle files, made
    /// for `path`), or nil where the device keeps none (no per-user runtime directory): the master
    /// password then opens unthrottled, and a PIN or device key is unavailable.
    /// `memoryBudgetKiB`: as for `Vault.open(at:password:mode:memoryBudgetKiB:)`.
    public static func open(at path: String, with credential: UnlockCredential, device: PINUnlock?,
                            mode: Vault.AccessMode = .readWrite, memoryBudgetKiB: UInt32? = nil) throws -> Vault {
        switch credential {
        case .masterPassword(let password):
            guard let device else { return try Vault.open(at: path, password: password, mode: mode, memoryBudgetKiB: memoryBudgetKiB) }
            return try device.unlock(password: password, mode: mode, memoryBudgetKiB: memoryBudgetKiB)
        case .pin(let pin):
            guard let device else { throw CofferError.pinUnavailable() }
            return try device.unlock(pin: pin, mode: mode, memoryBudgetKiB: memoryBudgetKiB)
        case .deviceKey(let directory):
            guard let device else {
                throw CofferError(.deviceKeyUnavailable, "this device keeps no secrets to open the vault without its password; unlock with the master password")
            }
            return try DeviceKeyUnlock(vaultPath: device.vaultPath, deviceSecrets: device.deviceSecrets, directory: directory,
                                       fileSystem: device.fileSystem, random: device.random).open(mode: mode)
        }
    }
}
