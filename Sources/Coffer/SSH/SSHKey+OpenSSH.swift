/// OpenSSH's private key format, openssh-key-v1 (OpenSSH's PROTOCOL.key; spec/ssh.md §3).
extension SSHKey {
    static let openSSHMagic = Array("openssh-key-v1\0".utf8)
    static let openSSHLabel = "OPENSSH PRIVATE KEY"
    /// The cipher block size of an unencrypted key: the private section is padded to it.
    static let unencryptedBlockSize = 8

    /// Reads a private key file: OpenSSH's format (`-----BEGIN OPENSSH PRIVATE KEY-----`), PKCS#8
    /// (`PRIVATE KEY`), SEC1 (`EC PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`). A PEM key has no
    /// comment; `comment` gives it one (an OpenSSH key keeps its own).
    package static func parse(_ input: UnsafeRawBufferPointer, comment: String = "") throws -> SSHKey {
        var armor = try SSHArmor.parse(input)
        defer { armor.wipe() }
        switch armor.label {
        case openSSHLabel:
            return try armor.body.withUnsafeBytes { try parseOpenSSH($0) }
        case "PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY":
            if armor.headers.contains(where: { $0.hasPrefix("Proc-Type:") && $0.hasSuffix("ENCRYPTED") }) {
                throw CofferError.sshEncryptedKey(
                    "the key is encrypted with a passphrase, which Coffer does not read; decrypt a copy first with `ssh-keygen -p -N '' -f COPY` and import that copy")
            }
            guard armor.headers.isEmpty else { throw CofferError.sshMalformedKey("the PEM key has header lines other than an encryption header") }
            try checkComment(Array(comment.utf8))
            return try armor.body.withUnsafeBytes { try parsePEM(label: armor.label, der: $0, comment: comment) }
        case "ENCRYPTED PRIVATE KEY":
            throw CofferError.sshEncryptedKey(
                "the PKCS#8 key is encrypted with a passphrase, which Coffer does not read; decrypt a copy first (`openssl pkcs8 -in KEY -out COPY`) and import that copy")
        default:
            throw CofferError.sshUnsupportedKey("a \(armor.label) file: Coffer reads OPENSSH PRIVATE KEY, PRIVATE KEY, EC PRIVATE KEY and RSA PRIVATE KEY files")
        }
    }

    package static func parse(_ input: [UInt8], comment: String = "") throws -> SSHKey {
        try input.withUnsafeBytes { try parse($0, comment: comment) }
    }

    package static func parse(_ text: String, comment: String = "") throws -> SSHKey {
        try parse(Array(text.utf8), comment: comment)
    }

    /// The decoded body of an OpenSSH key.
    static func parseOpenSSH(_ bytes: UnsafeRawBufferPointer) throws -> SSHKey {
        guard bytes.starts(with: openSSHMagic) else {
            throw CofferError.sshMalformedKey("the OPENSSH PRIVATE KEY does not start with openssh-key-v1")
        }
        var reader = SSHReader(UnsafeRawBufferPointer(rebasing: bytes[openSSHMagic.count...]), context: "OpenSSH key")
        let cipher = try reader.string(maximum: 64)
        let kdf = try reader.string(maximum: 64)
        let kdfOptions = try reader.string(maximum: 1_024)
        guard cipher.elementsEqual("none".utf8) else {
            throw CofferError.sshEncryptedKey(
                "the key is encrypted with a passphrase (cipher \(String(decoding: cipher.prefix(32), as: UTF8.self).filter { $0.isASCII && !$0.isWhitespace })), which Coffer does not read; decrypt a copy first with `ssh-keygen -p -N '' -f COPY` and import that copy")
        }
        guard kdf.elementsEqual("none".utf8), kdfOptions.isEmpty else {
            throw CofferError.sshMalformedKey("an unencrypted OpenSSH key names a key derivation")
        }
        let count = try reader.uint32()
        guard count == 1 else {
            throw count == 0 ? CofferError.sshMalformedKey("the OpenSSH key file holds no key")
                             : CofferError.sshUnsupportedKey("the OpenSSH key file holds \(count) keys; Coffer reads files of one key, as ssh-keygen writes them")
        }
        let publicBlob = try reader.string()
        let section = try reader.string(maximum: maximumFileLength)
        guard reader.isAtEnd else { throw CofferError.sshMalformedKey("the OpenSSH key has \(reader.remaining) bytes after its private section") }
        guard section.count % unencryptedBlockSize == 0 else {
            throw CofferError.sshMalformedKey("the OpenSSH key's private section is not a multiple of \(unencryptedBlockSize) bytes")
        }

        var inner = SSHReader(section, context: "OpenSSH key's private section")
        let check1 = try inner.uint32(), check2 = try inner.uint32()
        guard check1 == check2 else {
            throw CofferError.sshMalformedKey("the OpenSSH key's check integers differ (a wrong passphrase or a damaged file)")
        }
        let typeName = try inner.string(maximum: 64)
        guard let kind = Kind(rawValue: String(decoding: typeName, as: UTF8.self)), typeName.allSatisfy({ $0 < 0x80 }) else {
            throw CofferError.sshUnsupportedKey(
                "a key of type \(String(decoding: typeName.prefix(40), as: UTF8.self).filter { $0.isASCII && !$0.isNewline }): Coffer takes ssh-ed25519, ecdsa-sha2-nistp256 and ssh-rsa keys")
        }
        let fieldsStart = inner.offset
        let key: SSHKey
        let commentBytes: UnsafeRawBufferPointer
        switch kind {
        case .ed25519:
            let publicKey = try inner.string(maximum: 32)
            let secret = try inner.string(maximum: 64)
            guard publicKey.count == 32, secret.count == 64 else { throw CofferError.sshMalformedKey("the Ed25519 key's fields are not 32 and 64 bytes") }
            guard secret[32...].elementsEqual(publicKey) else {
                throw CofferError.sshMalformedKey("the Ed25519 key's public key differs from the copy in its secret key")
            }
            commentBytes = try inner.string(maximum: maximumCommentLength)
            try checkComment(commentBytes)
            key = try ed25519(secretKey: SecureBytes(copying: secret), comment: String(decoding: commentBytes, as: UTF8.self), checkInt: check1)
        case .ecdsaP256:
            try inner.expectString("nistp256", "curve")
            let point = try inner.string(maximum: 65)
            let scalar = try inner.positiveMPInt("P-256 private scalar", maximumBytes: 32)
            commentBytes = try inner.string(maximum: maximumCommentLength)
            try checkComment(commentBytes)
            let privateKey = try p256Key(scalar: scalar)
            guard privateKey.publicKey.x963Representation.elementsEqual(point) else {
                throw CofferError.sshMalformedKey("the P-256 key's public point is not the one its private scalar gives")
            }
            key = try ecdsaP256(privateKey, comment: String(decoding: commentBytes, as: UTF8.self), checkInt: check1)
        case .rsa:
            let limit = rsaBits.upperBound / 8
            let n = try inner.positiveMPInt("RSA modulus", maximumBytes: limit)
            let e = try inner.positiveMPInt("RSA public exponent", maximumBytes: limit)
            let d = try inner.positiveMPInt("RSA private exponent", maximumBytes: limit)
            let iqmp = try inner.positiveMPInt("RSA iqmp", maximumBytes: limit)
            let p = try inner.positiveMPInt("RSA prime p", maximumBytes: limit)
            let q = try inner.positiveMPInt("RSA prime q", maximumBytes: limit)
            commentBytes = try inner.string(maximum: maximumCommentLength)
            try checkComment(commentBytes)
            key = try rsa(n: n, e: e, d: d, iqmp: iqmp, p: p, q: q, comment: String(decoding: commentBytes, as: UTF8.self), checkInt: check1)
        }
        // The fields as read must be the canonical ones written back (mpints were checked minimal).
        let fieldsEnd = inner.offset - 4 - commentBytes.count
        let readFields = UnsafeRawBufferPointer(rebasing: section[(fieldsStart + 0)..<fieldsEnd])
        guard key.privateFields.constantTimeEquals(readFields) else {
            throw CofferError.sshMalformedKey("the key's private fields are not in OpenSSH's canonical form")
        }
        guard publicBlob.elementsEqual(key.publicKeyBlob) else {
            throw CofferError.sshMalformedKey("the OpenSSH key's public key is not the public half of its private key")
        }
        // Padding: 1, 2, 3, … up to the block size, as OpenSSH writes it (fewer than 8 bytes).
        let padding = try inner.rest()
        guard padding.count < unencryptedBlockSize, padding.enumerated().allSatisfy({ $0.element == UInt8($0.offset + 1) }) else {
            throw CofferError.sshMalformedKey("the OpenSSH key's padding is not 1, 2, 3, … to a multiple of \(unencryptedBlockSize) bytes")
        }
        return key
    }

    /// The key in OpenSSH's format, unencrypted, as `ssh-keygen -N ''` writes it: a key read
    /// from such a file comes out byte for byte (same check integer, comment and padding).
    /// The text holds the private key: write it to a private file and drop it.
    package func openSSHPrivateKey() -> String {
        var section = SSHWriter(capacity: Self.privateWriterCapacity)
        section.uint32(checkInt)
        section.uint32(checkInt)
        section.string(kind.rawValue)
        privateFields.withUnsafeBytes { section.raw($0) }
        section.string(comment)
        var pad: UInt8 = 1
        while section.bytes.count % Self.unencryptedBlockSize != 0 { section.raw([pad]); pad += 1 }
        var file = SSHWriter(capacity: 2 * Self.privateWriterCapacity)
        file.raw(Self.openSSHMagic)
        file.string("none")
        file.string("none")
        file.string([UInt8]())
        file.uint32(1)
        file.string(publicKeyBlob)
        file.string(section.bytes)
        defer { secureZero(&section.bytes); secureZero(&file.bytes) }
        return SSHArmor.write(label: Self.openSSHLabel, body: file.bytes, width: 70)
    }
}
