/// The vault key and the sub-keys derived from it (spec/format.md §4, spec/crypto.md §2).
/// Held in guarded memory; wiped when the last reference goes away.
public struct VaultKeys: Sendable {
    /// The random key every keyslot wraps.
    public let vaultKey: SymmetricKey
    /// Authenticates the header.
    let headerMACKey: SecureBytes
    /// Seals record frames.
    let recordKey: SymmetricKey

    init(vaultKey: SymmetricKey) throws {
        self.vaultKey = vaultKey
        headerMACKey = try BLAKE2b.deriveKey(Array("coffer/header-mac/v1".utf8), key: vaultKey.bytes)
        recordKey = try SymmetricKey(BLAKE2b.deriveKey(Array("coffer/record/v1".utf8), key: vaultKey.bytes))
    }

    static func random(using source: some RandomSource) throws -> VaultKeys {
        try VaultKeys(vaultKey: .random(using: source))
    }
}
