/// The vault key and the sub-keys derived from it (spec/format.md §4, spec/crypto.md §2).
/// Held in guarded memory; wiped when the last reference goes away.
package struct VaultKeys: Sendable {
    /// The random key every keyslot wraps.
    package let vaultKey: SecretKey
    /// Authenticates the header.
    let headerMACKey: SecureBytes
    /// Seals record frames.
    let recordKey: SecretKey

    init(vaultKey: SecretKey) throws {
        self.vaultKey = vaultKey
        headerMACKey = try BLAKE2b.deriveKey(Array("coffer/header-mac/v1".utf8), key: vaultKey.bytes)
        recordKey = try SecretKey(BLAKE2b.deriveKey(Array("coffer/record/v1".utf8), key: vaultKey.bytes))
    }

    /// `K_file`: seals the chunk frames of files' content (spec/files.md §4.1, format 2.1).
    /// Derived when a file is read or written, not at every unlock: most opens touch no file,
    /// and each key costs a guarded allocation (a few system calls).
    func fileKey() throws -> SecretKey {
        try SecretKey(BLAKE2b.deriveKey(Array("coffer/file-chunk/v1".utf8), key: vaultKey.bytes))
    }

    static func random(using source: some RandomSource) throws -> VaultKeys {
        try VaultKeys(vaultKey: .random(using: source))
    }
}
