/// Where the per-vault device secret of a PIN slot lives (spec/unlock.md §2): anywhere but the
/// vault file. The CLI uses a runtime directory (`CofferDesktop`); an app uses `KeychainDeviceSecretStore`
/// on Apple platforms, or its own (a kernel keyring).
public protocol DeviceSecretStore: Sendable {
    /// The secret for `vaultID`, or `nil` if there is none.
    func load(vaultID: [UInt8]) throws -> SecureBytes?
    /// Stores `secret` durably, replacing any earlier one.
    func store(_ secret: SecureBytes, vaultID: [UInt8]) throws
    /// Deletes the secret durably; no error if there is none.
    func delete(vaultID: [UInt8]) throws
}

extension DeviceSecretStore {
    /// Bytes in a device secret (spec/unlock.md §2).
    package static var secretCount: Int { 32 }
}
