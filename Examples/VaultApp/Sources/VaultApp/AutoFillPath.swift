import Coffer
import Foundation

/// An AutoFill extension's path (spec/unlock.md §11): the device key opens the vault with no key
/// derivation, the logins for the site are found from summaries alone, and one password is read.
/// `enrol` is the app's half, after an unlock with the master password under an extension-sized
/// memory budget (so a vault too costly for the extension is named at once).
public struct AutoFillPath: Sendable {
    public let device: DeviceKeyUnlock

    /// The memory an extension allows a key derivation (spec/crypto.md §3.1).
    public static let memoryBudgetKiB: UInt32 = 64 * 1024

    public init(vaultPath: String, keyDirectory: String) {
        device = DeviceKeyUnlock(vaultPath: vaultPath, deviceSecrets: DirectoryDeviceSecretStore(directory: keyDirectory),
                                 directory: keyDirectory)
    }

    /// In the app: unlock with the master password (refused over the budget), enrol this device.
    public func enrol(masterPassword: String) throws {
        let vault = try Vault.open(at: device.vaultPath, password: try SecureBytes(utf8: masterPassword), mode: .readOnly,
                                   memoryBudgetKiB: Self.memoryBudgetKiB)
        defer { vault.close() }
        try device.enrol(vault)
    }

    /// In the extension: the logins for the page at `url` (same site by the Public Suffix List,
    /// or each URL's own match rule: spec/urls.md), only those decrypted; nil when there is none.
    public func fill(_ url: String) throws -> (logins: [Item], first: Item)? {
        let vault = try device.open(mode: .readOnly)
        defer { vault.close() }
        let logins = try vault.logins(matching: url)
        guard let first = logins.first else { return nil }
        return (logins, first)
    }

    /// In a passkey provider extension (issue 37): the assertion for relying party `rpID` with the
    /// client data hash the system hands over: the device key opens the vault (no key
    /// derivation), only the logins of the rp's site are decrypted, the first passkey for it
    /// signs. Nil when the vault has none.
    public func assert(rpID: String, clientDataHash: [UInt8]) throws -> (passkey: Passkey, authenticatorData: [UInt8], signature: [UInt8])? {
        let vault = try device.open(mode: .readOnly)
        defer { vault.close() }
        let candidates = try vault.logins(matching: "https://\(rpID)/")
        guard let passkey = candidates.lazy.flatMap(\.passkeys).first(where: { $0.relyingPartyID == rpID }) else { return nil }
        let authenticatorData = passkey.assertionAuthenticatorData()
        return (passkey, authenticatorData, try passkey.sign(authenticatorData: authenticatorData, clientDataHash: clientDataHash))
    }

    /// In the app: a new passkey for the host of `url` on the login for that page (what a
    /// registration stores), with the master password.
    public func addPasskey(masterPassword: String, url: String) throws -> Passkey {
        let vault = try Vault.open(at: device.vaultPath, password: try SecureBytes(utf8: masterPassword))
        defer { vault.close() }
        guard var login = try vault.logins(matching: url).first else { throw CocoaError(.fileNoSuchFile) }
        let passkey = try Passkey.create(relyingPartyID: Self.host(url), userHandle: Array(login.id.hex.utf8.prefix(16)),
                                         userName: login.username ?? "", userDisplayName: login.title)
        login.passkeys.append(passkey)
        try vault.update(login)
        return passkey
    }

    /// The host of a URL, lowercased, without a trailing dot (for messages).
    public static func host(_ url: String) -> String {
        var host = URLComponents(string: url)?.host?.lowercased() ?? url.lowercased()
        if host.hasSuffix(".") { host.removeLast() }
        return host
    }
}

/// The device-secret store of this example on Linux: one 0600 file per secret in a 0700
/// directory. An app on Apple platforms passes `KeychainDeviceSecretStore(accessGroup:)`.
public struct DirectoryDeviceSecretStore: DeviceSecretStore {
    public let directory: String

    public init(directory: String) { self.directory = directory }

    func path(_ vaultID: [UInt8]) -> String { directory + "/secret-" + vaultID.map { String(format: "%02x", $0) }.joined() }

    public func load(vaultID: [UInt8]) throws -> SecureBytes? {
        guard let data = FileManager.default.contents(atPath: path(vaultID)) else { return nil }
        var bytes = [UInt8](data)
        defer { for i in bytes.indices { bytes[i] = 0 } }
        return try bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
    }

    public func store(_ secret: SecureBytes, vaultID: [UInt8]) throws {
        let target = path(vaultID)
        let temporary = target + ".new"
        let created = secret.withUnsafeBytes { FileManager.default.createFile(atPath: temporary, contents: Data($0), attributes: [.posixPermissions: 0o600]) }
        guard created, rename(temporary, target) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    public func delete(vaultID: [UInt8]) throws {
        try? FileManager.default.removeItem(atPath: path(vaultID))
    }
}
