#if canImport(Security)
import Foundation
import Security

/// A `DeviceSecretStore` in the Keychain, for apps on Apple platforms (spec/unlock.md §2).
///
/// One generic-password item per vault, readable only while the device is unlocked and never
/// synced or restored to another device (`kSecAttrAccessibleWhenUnlockedThisDeviceOnly`, not
/// synchronizable): a copy of the vault file plus a backup of the phone still lacks the secret a
/// PIN needs, which is what keeps a 6-digit PIN from being searched offline (unlock.md §10).
///
/// Built only where `Security` exists; it cannot be built or tested on the Linux CI.
public struct KeychainDeviceSecretStore: DeviceSecretStore {
    package let service: String
    /// A Keychain access group shared with an app extension (AutoFill), or `nil` for the app's own.
    package let accessGroup: String?

    public init(service: String = "coffer.device-secret", accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
    }

    public func load(vaultID: [UInt8]) throws -> SecureBytes? {
        var query = itemQuery(vaultID: vaultID)
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, var data = result as? Data else { throw Self.failure(status, "read") }
        // Best effort: the Keychain's own copies are beyond our reach, ours is wiped.
        defer { data.resetBytes(in: 0..<data.count) }
        guard data.count == Self.secretCount else {
            throw CofferError.pinUnavailable("the device secret for this vault is damaged; unlock with the master password and set the PIN again")
        }
        return try data.withUnsafeBytes { try SecureBytes(copying: $0) }
    }

    public func store(_ secret: SecureBytes, vaultID: [UInt8]) throws {
        try delete(vaultID: vaultID)
        var attributes = itemQuery(vaultID: vaultID)
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        attributes[kSecValueData as String] = secret.withUnsafeBytes { Data($0) }
        let status = SecItemAdd(attributes as CFDictionary, nil)
        guard status == errSecSuccess else { throw Self.failure(status, "store") }
    }

    public func delete(vaultID: [UInt8]) throws {
        let status = SecItemDelete(itemQuery(vaultID: vaultID) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw Self.failure(status, "delete") }
    }

    private func itemQuery(vaultID: [UInt8]) -> [String: Any] {
        var query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: vaultID.lowercaseHex,
            kSecAttrSynchronizable as String: kCFBooleanFalse as Any,
        ]
        if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
        return query
    }

    private static func failure(_ status: OSStatus, _ action: String) -> CofferError {
        CofferError.pinUnavailable("the Keychain could not \(action) this vault's device secret (OSStatus \(status)); unlock with the master password")
    }
}
#endif
