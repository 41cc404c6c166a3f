/// The one way Coffer turns what a person typed (master password, PIN) into key material:
/// Unicode NFKC, then Argon2id (spec/crypto.md §2.1, spec/policy.md §2.2).
///
/// The policy check counts NFKC characters, so the key must come from the same form: a password
/// typed with a decomposed "é" (macOS, some input methods) or full-width letters must open a vault
/// made with the composed or ASCII form. Every keyslot derivation goes through here.
enum PasswordKDF {
    /// Argon2id over the UTF-8 bytes of NFKC(`password`).
    static func deriveKey(password: SecureBytes, salt: [UInt8], parameters: KDFParameters) throws -> SecureBytes {
        try Argon2id.deriveKey(password: normalized(password) ?? password, salt: salt, parameters: parameters)
    }

    /// Argon2id over the bytes as typed, without normalisation: only to open a vault made before
    /// normalisation (spec/crypto.md §2.1), whose password slot holds a key derived this way.
    static func deriveKeyAsTyped(password: SecureBytes, salt: [UInt8], parameters: KDFParameters) throws -> SecureBytes {
        try Argon2id.deriveKey(password: password, salt: salt, parameters: parameters)
    }

    /// The NFKC form of `password` as UTF-8, or nil when it is the input itself: ASCII (NFKC
    /// changes no ASCII byte), bytes that are not UTF-8 (used as they are, spec/crypto.md §2.1),
    /// or text already in NFKC.
    ///
    /// Non-ASCII input passes through Swift `String`s, which cannot be wiped; ASCII input never
    /// leaves `SecureBytes`.
    static func normalized(_ password: SecureBytes) throws -> SecureBytes? {
        let text: String? = password.withUnsafeBytes { bytes in
            guard bytes.contains(where: { $0 >= 0x80 }) else { return nil }
            return String(validUTF8: bytes)
        }
        guard let text else { return nil }
        let form = PasswordNormalization.nfkc.apply(text)
        var utf8 = Array(form.utf8)
        defer { secureZero(&utf8) }
        let changed = password.withUnsafeBytes { !$0.elementsEqual(utf8) }
        guard changed else { return nil }
        return try utf8.withUnsafeBytes { try SecureBytes(copying: $0) }
    }
}
