/// Unlocking with no key derivation, for an app extension (spec/unlock.md §11): the vault key
/// wrapped under a random secret that only this device holds.
///
/// The app enrols once, after the person unlocked with the master password: a new 32-byte
/// device secret goes to a `DeviceSecretStore` (on Apple platforms the Keychain, readable only
/// while the device is unlocked, never synced or backed up, shared with the extension through an
/// access group) and the vault key, sealed under it, to a small file in `directory` (the app
/// group's container). The extension opens the vault with both: no Argon2id, so no 64 MiB and
/// no second of work on every fill. The vault key is stable across writes, so this keeps working
/// after other devices append to or merge into the vault; `rekey` changes the key, and the
/// device key then fails with `unlock.device-key-unavailable` until the app enrols again.
public struct DeviceKeyUnlock: Sendable {
    public let vaultPath: String
    let deviceSecrets: any DeviceSecretStore
    let directory: String
    let fileSystem: any VaultFileSystem
    let random: any RandomSource

    /// `directory` holds the wrapped key (`device-key-<vault id>`); it is created by the app.
    public init(vaultPath: String, deviceSecrets: any DeviceSecretStore, directory: String) {
        self.init(vaultPath: vaultPath, deviceSecrets: deviceSecrets, directory: directory, fileSystem: POSIXFileSystem())
    }

    package init(vaultPath: String, deviceSecrets: any DeviceSecretStore, directory: String,
                 fileSystem: any VaultFileSystem, random: any RandomSource = SystemRandom()) {
        (self.vaultPath, self.deviceSecrets, self.directory, self.fileSystem, self.random) =
            (vaultPath, deviceSecrets, directory, fileSystem, random)
    }

    /// `"CDK1" ‖ vault_id (16) ‖ nonce (24) ‖ sealed vault key (32) ‖ tag (16)`.
    static let magic = Array("CDK1".utf8)
    static let fileCount = 4 + 16 + XChaCha20Poly1305.overhead + 32

    /// Enrols this device for `vault`, which must have been opened with its master password
    /// (spec/unlock.md §13): replaces an earlier enrolment.
    public func enrol(_ vault: Vault) throws {
        try vault.requireMasterPassword(for: "enrolling a device key")
        let vaultID = vault.header.vaultID
        let secret = try SecureBytes(count: 32) { random.fill($0) }
        let wrappingKey = try SecretKey(secret)
        let wrapped: [UInt8] = try vault.withVaultKey { key in
            key.bytes.withUnsafeBytes { plain in
                Self.associatedData(vaultID).withUnsafeBytes { ad in
                    XChaCha20Poly1305.seal(plain, associatedData: ad, key: wrappingKey, using: random)
                }
            }
        }
        // The secret first: a file without its secret opens nothing, a secret without a file is
        // overwritten by the next enrolment.
        try deviceSecrets.store(secret, vaultID: Self.storeID(vaultID))
        try AtomicFileWriter(fileSystem: fileSystem, random: random).replace(filePath(vaultID)) { write in
            try write(Self.magic + vaultID + wrapped)
        }
    }

    /// Whether this device is enrolled for the vault now at `vaultPath` (both halves present).
    public var isEnrolled: Bool {
        guard let vaultID = Vault.vaultID(at: vaultPath, fileSystem: fileSystem) else { return false }
        return fileSystem.fileExists(filePath(vaultID)) && ((try? deviceSecrets.load(vaultID: Self.storeID(vaultID))) ?? nil) != nil
    }

    /// Opens the vault with the device key: no key derivation. `unlock.device-key-unavailable`
    /// when this device is not enrolled, or its key no longer opens the vault (rekeyed).
    public func open(mode: Vault.AccessMode = .readOnly) throws -> Vault {
        guard let vaultID = Vault.vaultID(at: vaultPath, fileSystem: fileSystem) else {
            guard fileSystem.fileExists(vaultPath) else { throw CofferError.vaultMissing(at: vaultPath) }
            throw CofferError.notAVault("\(vaultPath) is not a Coffer vault")
        }
        let key = try unwrap(vaultID: vaultID)
        do {
            return try Vault.open(at: vaultPath, mode: mode, unlockedWith: .deviceKey, fileSystem: fileSystem, random: random) { _ in key }
        } catch let error as CofferError where error.code == .tampered || error.code == .headerCorrupted {
            throw CofferError.deviceKeyUnavailable(
                "this device's key no longer opens the vault (it was rekeyed, or replaced); unlock with the master password and enrol again")
        }
    }

    /// Forgets this device's key for the vault: the secret and the wrapped key (either may be gone).
    public func revoke() throws {
        guard let vaultID = Vault.vaultID(at: vaultPath, fileSystem: fileSystem) else { return }
        try deviceSecrets.delete(vaultID: Self.storeID(vaultID))
        if fileSystem.fileExists(filePath(vaultID)) {
            fileSystem.remove(filePath(vaultID))
            try fileSystem.syncDirectory(containing: filePath(vaultID))
        }
    }

    private func unwrap(vaultID: [UInt8]) throws -> SecretKey {
        let path = filePath(vaultID)
        guard fileSystem.fileExists(path), let secret = try deviceSecrets.load(vaultID: Self.storeID(vaultID)) else {
            throw CofferError.deviceKeyUnavailable("this device is not enrolled to open the vault without its password; unlock with the master password")
        }
        let handle = try fileSystem.open(path, writable: false)
        defer { handle.close() }
        let size = try handle.size()
        let bytes = try handle.read(at: 0, count: min(size, Self.fileCount + 1))
        guard bytes.count == Self.fileCount, Array(bytes[0..<4]) == Self.magic, Array(bytes[4..<20]) == vaultID else {
            throw CofferError.deviceKeyUnavailable("this device's wrapped key is damaged; unlock with the master password and enrol again")
        }
        do {
            return try SecretKey(XChaCha20Poly1305.open(Array(bytes[20...]), associatedData: Self.associatedData(vaultID),
                                                        key: try SecretKey(secret)))
        } catch let error as CofferError where error.code == .authenticationFailed {
            throw CofferError.deviceKeyUnavailable("this device's key does not open its wrapped key (enrolled again elsewhere?); unlock with the master password and enrol again")
        }
    }

    func filePath(_ vaultID: [UInt8]) -> String { directory + "/device-key-" + vaultID.lowercaseHex }

    static func associatedData(_ vaultID: [UInt8]) -> [UInt8] { Array("coffer/device-key/v1".utf8) + vaultID }

    /// The name the device secret is kept under: not the vault id itself, which names the PIN's
    /// device secret (unlock.md §2), so the two never replace each other.
    static func storeID(_ vaultID: [UInt8]) -> [UInt8] {
        BLAKE2b.hash(Array("coffer/device-key-secret/v1".utf8) + vaultID, outputCount: 16)
    }
}
