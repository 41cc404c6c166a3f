/// One wrapping of the vault key (spec/format.md §3).
package struct Keyslot: Sendable, Equatable {
    package enum Kind: UInt8, Sendable {
        case password = 1
        case pin = 2
    }

    package var kind: Kind
    package var kdf: KDFParameters
    package var salt: [UInt8]
    /// `nonce ‖ Seal(VK) ‖ tag`, 72 bytes.
    package var wrappedKey: [UInt8]

    static let wrappedCount = XChaCha20Poly1305.overhead + SecretKey.count  // 72
    static let encodedCount = 1 + 4 + 4 + Argon2id.saltCount + wrappedCount  // 97

    /// Wraps `vaultKey` under `kek`, binding the slot's own fields as associated data.
    static func wrap(_ vaultKey: SecretKey, kind: Kind, kdf: KDFParameters, salt: [UInt8], kek: SecretKey,
                     vaultID: [UInt8], using source: some RandomSource) -> Keyslot {
        var slot = Keyslot(kind: kind, kdf: kdf, salt: salt, wrappedKey: [])
        let ad = slot.associatedData(vaultID: vaultID)
        slot.wrappedKey = vaultKey.bytes.withUnsafeBytes { key in
            ad.withUnsafeBytes { XChaCha20Poly1305.seal(key, associatedData: $0, key: kek, using: source) }
        }
        return slot
    }

    /// The vault key, or `.wrongPassword` when `kek` does not open the slot.
    func unwrap(kek: SecretKey, vaultID: [UInt8]) throws -> SecretKey {
        let ad = associatedData(vaultID: vaultID)
        do {
            let key = try wrappedKey.withUnsafeBytes { sealed in
                try ad.withUnsafeBytes { try XChaCha20Poly1305.open(sealed, associatedData: $0, key: kek) }
            }
            return try SecretKey(key)
        } catch let error as CofferError where error.code == .authenticationFailed {
            throw kind == .password
                ? CofferError.wrongPassword("wrong password (or the password keyslot was altered)")
                : CofferError.wrongPIN("wrong PIN")
        }
    }

    func associatedData(vaultID: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: 64)
        w.append("coffer/keyslot/v1")
        w.append(vaultID)
        w.uint8(kind.rawValue)
        w.uint32(kdf.iterations)
        w.uint32(kdf.memoryKiB)
        w.append(salt)
        return w.bytes
    }

    func encode(into w: inout ByteWriter) {
        w.uint8(kind.rawValue)
        w.uint32(kdf.iterations)
        w.uint32(kdf.memoryKiB)
        w.append(salt)
        w.append(wrappedKey)
    }

    static func decode(from r: inout ByteReader) throws -> Keyslot {
        let rawKind = try r.uint8()
        guard let kind = Kind(rawValue: rawKind) else {
            throw CofferError.headerCorrupted("header corrupted: unknown keyslot kind \(rawKind)")
        }
        let kdf = KDFParameters(iterations: try r.uint32(), memoryKiB: try r.uint32())
        return Keyslot(kind: kind, kdf: kdf, salt: try r.bytes(Argon2id.saltCount), wrappedKey: try r.bytes(wrappedCount))
    }
}
