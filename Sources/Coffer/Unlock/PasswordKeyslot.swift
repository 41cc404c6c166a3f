/// The master password's keyslot (spec/format.md §3, spec/crypto.md §2.1): the key-encryption key
/// derived from the password (NFKC, then Argon2id with the slot's salt and parameters,
/// `PasswordKDF`) wraps the vault key. The store never sees a password: it opens with the key
/// found here and writes the slot made here.
package enum PasswordKeyslot {
    /// The vault key the password slot of `header` wraps, `vault.wrong-password` when `password`
    /// does not open it. `memoryBudgetKiB`: a slot whose derivation needs more is refused before
    /// anything is derived (`crypto.kdf-over-memory-budget`).
    package static func vaultKey(header: VaultHeader, password: SecureBytes, memoryBudgetKiB: UInt32? = nil) throws -> SecretKey {
        guard let slot = header.passwordSlot else {
            if header.isTeam {  // spec/format.md §3.1: no password opens a team vault
                throw CofferError.notAMember("a team vault opens with a member's identity, not a password")
            }
            throw CofferError.headerCorrupted("header corrupted: no password keyslot")
        }
        try slot.kdf.validate()
        try slot.kdf.check(memoryBudgetKiB: memoryBudgetKiB)
        let kek = try SecretKey(PasswordKDF.deriveKey(password: password, salt: slot.salt, parameters: slot.kdf))
        do {
            return try slot.unwrap(kek: kek, vaultID: header.vaultID)
        } catch let error as CofferError where error.code == .wrongPassword {
            // Vaults made before normalisation hold a key derived from the bytes as typed
            // (spec/crypto.md §2.1): try those too, only when they differ from the NFKC form.
            guard try PasswordKDF.normalized(password) != nil else { throw error }
            let asTyped = try SecretKey(PasswordKDF.deriveKeyAsTyped(password: password, salt: slot.salt, parameters: slot.kdf))
            return try slot.unwrap(kek: asTyped, vaultID: header.vaultID)
        }
    }

    /// A new password slot wrapping `vaultKey` under `password` with `kdf` and a fresh salt.
    static func make(for password: SecureBytes, kdf: KDFParameters, vaultKey: SecretKey, vaultID: [UInt8],
                     random: any RandomSource) throws -> Keyslot {
        let salt = random.bytes(Argon2id.saltCount)
        let kek = try SecretKey(PasswordKDF.deriveKey(password: password, salt: salt, parameters: kdf))
        return Keyslot.wrap(vaultKey, kind: .password, kdf: kdf, salt: salt, kek: kek, vaultID: vaultID, using: random)
    }
}
