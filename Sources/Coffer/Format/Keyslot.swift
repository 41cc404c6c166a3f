/// One wrapping of the vault key (spec/format.md §3): under a key derived from the password or
/// the PIN, or (§3.1, since 2.2) sealed to a team member's public key.
package struct Keyslot: Sendable, Equatable {
    package enum Kind: UInt8, Sendable {
        case password = 1
        case pin = 2
        /// A team member's slot (spec/format.md §3.1): the vault key in a sealed box to their key.
        case recipient = 3
    }

    /// Who opens a recipient slot: a name unique in the header, and their public key.
    package struct Recipient: Sendable, Equatable {
        package var name: String
        package var key: MemberPublicKey
    }

    package var kind: Kind
    /// Password and PIN slots: the key derivation's parameters and salt (zero and empty in a
    /// recipient slot, which has neither and encodes neither).
    package var kdf: KDFParameters
    package var salt: [UInt8]
    /// Recipient slots only.
    package var recipient: Recipient?
    /// `nonce ‖ Seal(VK) ‖ tag`, 72 bytes; in a recipient slot the sealed box, 80 bytes.
    package var wrappedKey: [UInt8]

    static let wrappedCount = XChaCha20Poly1305.overhead + SecretKey.count  // 72
    static let sealedCount = SealedBox.overhead + SecretKey.count  // 80
    /// A recipient's name: 1 to 64 bytes of UTF-8 (§3.1).
    package static let nameBytes = 1...64

    /// The slot's bytes in the header: 97 for a password or PIN slot, 115 + the name's bytes for a recipient.
    var encodedCount: Int {
        kind == .recipient ? 1 + 1 + (recipient?.name.utf8.count ?? 0) + SealedBox.keyCount + Self.sealedCount
                           : 1 + 4 + 4 + Argon2id.saltCount + Self.wrappedCount
    }

    init(kind: Kind, kdf: KDFParameters, salt: [UInt8], wrappedKey: [UInt8]) {
        (self.kind, self.kdf, self.salt, self.wrappedKey) = (kind, kdf, salt, wrappedKey)
    }

    /// A recipient slot: `vaultKey` sealed to `key` (§3.1). The name is checked by the header.
    package static func sealed(_ vaultKey: SecretKey, to key: MemberPublicKey, name: String,
                               using source: some RandomSource) throws -> Keyslot {
        var slot = Keyslot(kind: .recipient, kdf: KDFParameters(iterations: 0, memoryKiB: 0), salt: [],
                           wrappedKey: try SealedBox.seal(vaultKey.bytes, to: key.bytes, using: source))
        slot.recipient = Recipient(name: name, key: key)
        return slot
    }

    /// The vault key of a recipient slot sealed to `identity`; `team.not-a-member` if it is not.
    package func unseal(with identity: MemberIdentity) throws -> SecretKey {
        guard kind == .recipient, recipient?.key == identity.publicKey else {
            throw CofferError.notAMember("this keyslot is not sealed to the identity's key")
        }
        do {
            return try SecretKey(try SealedBox.open(wrappedKey, publicKey: identity.publicKey.bytes, secretKey: identity.secretKey))
        } catch let error as CofferError where error.code == .authenticationFailed || error.code == .invalidArgument {
            // The slot names the key but does not open with it: altered, or written without it.
            throw CofferError.tampered("vault tampered: the keyslot of '\(recipient?.name ?? "")' names this identity's key but does not open with it")
        }
    }

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
        if kind == .recipient, let recipient {
            let name = Array(recipient.name.utf8)
            w.uint8(UInt8(truncatingIfNeeded: name.count))  // bounded by the header's check (§3.1)
            w.append(name)
            w.append(recipient.key.bytes)
            w.append(wrappedKey)
            return
        }
        w.uint32(kdf.iterations)
        w.uint32(kdf.memoryKiB)
        w.append(salt)
        w.append(wrappedKey)
    }

    /// One slot of a header of `version`: kind 3 is known from 2.2 on (§2), an unknown kind in any.
    static func decode(from r: inout ByteReader, version: FormatVersion) throws -> Keyslot {
        let rawKind = try r.uint8()
        guard let kind = Kind(rawValue: rawKind), kind != .recipient || version >= VaultHeader.recipientsSince else {
            throw CofferError.headerCorrupted("header corrupted: unknown keyslot kind \(rawKind)")
        }
        if kind == .recipient {
            let count = Int(try r.uint8())
            guard nameBytes.contains(count), let name = String(validating: try r.bytes(count), as: UTF8.self) else {
                throw CofferError.headerCorrupted("header corrupted: a recipient keyslot's name is not 1 to 64 bytes of UTF-8")
            }
            // Its length only: a key of the header is authenticated by the header MAC (§7 step 8),
            // and sealing to it again (a rekey) checks it as when it was added.
            let key = MemberPublicKey(headerBytes: try r.bytes(SealedBox.keyCount))
            var slot = Keyslot(kind: .recipient, kdf: KDFParameters(iterations: 0, memoryKiB: 0), salt: [], wrappedKey: try r.bytes(sealedCount))
            slot.recipient = Recipient(name: name, key: key)
            return slot
        }
        let kdf = KDFParameters(iterations: try r.uint32(), memoryKiB: try r.uint32())
        return Keyslot(kind: kind, kdf: kdf, salt: try r.bytes(Argon2id.saltCount), wrappedKey: try r.bytes(wrappedCount))
    }
}
