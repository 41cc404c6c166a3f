import Crypto
import CSodium
import _CryptoExtras

/// An SSH private key with its public half (spec/ssh.md): Ed25519, ECDSA P-256 or RSA of
/// 2,048 to 16,384 bits. Read from OpenSSH's own format or PEM/PKCS#8, written back in OpenSSH's
/// format, generated here; it signs as an SSH agent does.
///
/// The private half is kept in `SecureBytes` as OpenSSH encodes it after the key type name
/// (ssh.md §3), and never appears in an error, a description or the public line.
package struct SSHKey: Sendable {
    /// The key types Coffer takes, by their SSH name.
    package enum Kind: String, Sendable, CaseIterable {
        case ed25519 = "ssh-ed25519"
        case ecdsaP256 = "ecdsa-sha2-nistp256"
        case rsa = "ssh-rsa"

        /// The word `ssh-keygen -l` prints in parentheses.
        package var fingerprintLabel: String {
            switch self {
            case .ed25519: "ED25519"
            case .ecdsaP256: "ECDSA"
            case .rsa: "RSA"
            }
        }
    }

    // Bounds (ssh.md §2.2).
    /// The largest key file read, in bytes (a 16,384-bit RSA key in OpenSSH's format is about 12 KB).
    package static let maximumFileLength = 65_536
    /// The largest single field (`string`) in a key.
    package static let maximumFieldLength = 16_384
    /// The longest comment, in bytes of UTF-8.
    package static let maximumCommentLength = 1_024
    /// RSA modulus sizes taken, in bits.
    package static let rsaBits = 2_048...16_384
    /// The RSA size `generate` uses when none is given.
    package static let defaultRSABits = 3_072
    /// Room for the private fields of the largest key (six RSA numbers of 2,049 bytes), a comment and padding.
    static let privateWriterCapacity = 6 * (4 + 2_049) + 64 + 4 + maximumCommentLength + 8

    package let kind: Kind
    /// The size `ssh-keygen -l` prints: 256 for Ed25519 and P-256, the modulus's bits for RSA.
    package let bits: Int
    /// The public key in the SSH wire encoding (RFC 4253 §6.6, RFC 5656 §3.1, RFC 8709 §4).
    package let publicKeyBlob: [UInt8]
    /// The comment (OpenSSH puts `user@host` there): UTF-8 without line breaks or NUL.
    package let comment: String
    /// OpenSSH's check integer, kept so a key read from a file is written back unchanged.
    package let checkInt: UInt32
    /// The type's private fields as openssh-key-v1 encodes them after the key type name.
    let privateFields: SecureBytes

    init(kind: Kind, bits: Int, publicKeyBlob: [UInt8], comment: String, checkInt: UInt32, privateFields: SecureBytes) {
        self.kind = kind
        self.bits = bits
        self.publicKeyBlob = publicKeyBlob
        self.comment = comment
        self.checkInt = checkInt
        self.privateFields = privateFields
    }

    /// The same key with another comment.
    package func withComment(_ comment: String) throws -> SSHKey {
        try Self.checkComment(Array(comment.utf8))
        return SSHKey(kind: kind, bits: bits, publicKeyBlob: publicKeyBlob, comment: comment, checkInt: checkInt, privateFields: privateFields)
    }

    /// The same key with another check integer: a key read from PKCS#8 gets a random one, and an
    /// export that kept the original (CXF, spec/cli.md §8.30) gives it back for the same OpenSSH text.
    package func withCheckInt(_ checkInt: UInt32) -> SSHKey {
        SSHKey(kind: kind, bits: bits, publicKeyBlob: publicKeyBlob, comment: comment, checkInt: checkInt, privateFields: privateFields)
    }

    /// The line of a `.pub` file, without its line feed: `ssh-ed25519 AAAA… comment` (no space and
    /// comment when the comment is empty, as `ssh-keygen -y` prints it).
    package var publicLine: String { publicKey.publicLine }

    /// `SHA256:` and the unpadded base64 of the blob's SHA-256, as OpenSSH shows fingerprints.
    package var fingerprint: String { publicKey.fingerprint }

    /// The line `ssh-keygen -l -f` prints: `256 SHA256:… comment (ED25519)`, `no comment` when
    /// the comment is empty.
    package var fingerprintLine: String { publicKey.fingerprintLine }

    static func checkComment(_ bytes: some Collection<UInt8>) throws {
        guard bytes.count <= maximumCommentLength else {
            throw CofferError.sshMalformedKey("the key's comment is \(bytes.count) bytes, over the bound of \(maximumCommentLength)")
        }
        guard String(validUTF8: bytes) != nil else { throw CofferError.sshMalformedKey("the key's comment is not UTF-8") }
        guard !bytes.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else {
            throw CofferError.sshMalformedKey("the key's comment holds a line break or a NUL byte")
        }
    }
}

extension SSHKey: CustomStringConvertible {
    /// Never shows the private half.
    package var description: String { "SSHKey(\(fingerprintLine))" }
}

// MARK: - Generating (ssh.md §5)

extension SSHKey {
    /// A new key made here: Ed25519 with libsodium, P-256 and RSA with swift-crypto (BoringSSL).
    /// `rsaBits` must lie in `rsaBits` and be a multiple of 8 (BoringSSL's own rule is stricter:
    /// 2,048, 3,072 or 4,096 are what it is tested with).
    package static func generate(_ kind: Kind, comment: String = "", rsaBits: Int = defaultRSABits,
                                 using random: some RandomSource = SystemRandom()) throws -> SSHKey {
        try checkComment(Array(comment.utf8))
        var check: UInt32 = 0
        withUnsafeMutableBytes(of: &check) { random.fill($0) }
        switch kind {
        case .ed25519:
            let seed = try SecureBytes.random(count: 32, using: random)
            let secret = try seed.withUnsafeBytes { try ed25519SecretKey(seed: $0) }
            return try ed25519(secretKey: secret, comment: comment, checkInt: check)
        case .ecdsaP256:
            let key = P256.Signing.PrivateKey()
            return try ecdsaP256(key, comment: comment, checkInt: check)
        case .rsa:
            guard Self.rsaBits.contains(rsaBits), rsaBits % 8 == 0 else {
                throw CofferError.sshUnsupportedKey("an RSA key of \(rsaBits) bits: Coffer makes RSA keys of 2048 to 16384 bits, a multiple of 8")
            }
            let key: _RSA.Signing.PrivateKey
            do { key = try _RSA.Signing.PrivateKey(keySize: .init(bitCount: rsaBits)) } catch {
                throw CofferError.cryptoUnavailable("BoringSSL could not make an RSA key of \(rsaBits) bits")
            }
            var der = [UInt8](key.derRepresentation)
            defer { secureZero(&der) }
            return try der.withUnsafeBytes { try rsa(pkcs1: $0, comment: comment, checkInt: check) }
        }
    }
}

// MARK: - Building a key from its numbers, checking both halves agree

extension SSHKey {
    /// An Ed25519 key from libsodium's 64-byte secret key (seed ‖ public key), checked: the public
    /// key derived from the seed must be the one stored after it.
    static func ed25519(secretKey: SecureBytes, comment: String, checkInt: UInt32) throws -> SSHKey {
        guard secretKey.count == 64 else { throw CofferError.sshMalformedKey("an Ed25519 secret key is not 64 bytes") }
        let derived = try secretKey.withUnsafeBytes { try ed25519SecretKey(seed: UnsafeRawBufferPointer(rebasing: $0[0..<32])) }
        guard derived.constantTimeEquals(secretKey) else {
            throw CofferError.sshMalformedKey("the Ed25519 key's public half is not the one its private half gives")
        }
        let publicKey = secretKey.withUnsafeBytes { Array($0[32..<64]) }
        var blob = SSHWriter()
        blob.string(Kind.ed25519.rawValue)
        blob.string(publicKey)
        var fields = SSHWriter(capacity: Self.privateWriterCapacity)
        fields.string(publicKey)
        defer { secureZero(&fields.bytes) }
        secretKey.withUnsafeBytes { fields.string($0) }
        let privateFields = try fields.bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
        return SSHKey(kind: .ed25519, bits: 256, publicKeyBlob: blob.bytes, comment: comment, checkInt: checkInt, privateFields: privateFields)
    }

    /// A P-256 key from swift-crypto's.
    static func ecdsaP256(_ key: P256.Signing.PrivateKey, comment: String, checkInt: UInt32) throws -> SSHKey {
        let point = [UInt8](key.publicKey.x963Representation)
        var blob = SSHWriter()
        blob.string(Kind.ecdsaP256.rawValue)
        blob.string("nistp256")
        blob.string(point)
        var scalar = [UInt8](key.rawRepresentation)
        var fields = SSHWriter(capacity: Self.privateWriterCapacity)
        defer { secureZero(&scalar); secureZero(&fields.bytes) }
        fields.string("nistp256")
        fields.string(point)
        fields.mpint(magnitude: scalar)
        let privateFields = try fields.bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
        return SSHKey(kind: .ecdsaP256, bits: 256, publicKeyBlob: blob.bytes, comment: comment, checkInt: checkInt, privateFields: privateFields)
    }

    /// The P-256 key for a scalar (big-endian, at most 32 significant bytes), refused unless
    /// 0 < d < n (swift-crypto checks the range).
    static func p256Key(scalar: UnsafeRawBufferPointer) throws -> P256.Signing.PrivateKey {
        let significant = scalar.drop { $0 == 0 }
        guard significant.count <= 32 else { throw CofferError.sshMalformedKey("the P-256 private scalar is longer than 32 bytes") }
        var padded = [UInt8](repeating: 0, count: 32 - significant.count) + significant
        defer { secureZero(&padded) }
        do { return try P256.Signing.PrivateKey(rawRepresentation: padded) } catch {
            throw CofferError.sshMalformedKey("the P-256 private scalar is out of range")
        }
    }

    /// An RSA key from the numbers of a PKCS#1 `RSAPrivateKey` (DER), checked by BoringSSL
    /// (n = p·q, d·e ≡ 1) and against the CRT numbers it computes. Sizes outside `rsaBits` are
    /// `ssh.unsupported-key`.
    static func rsa(pkcs1 der: UnsafeRawBufferPointer, comment: String, checkInt: UInt32) throws -> SSHKey {
        let numbers = try DER.rsaPrivateKey(der)
        return try rsa(n: numbers.n, e: numbers.e, d: numbers.d, iqmp: numbers.qInverse, p: numbers.p, q: numbers.q,
                       comment: comment, checkInt: checkInt, pkcs1: der)
    }

    /// An RSA key from its numbers (big-endian magnitudes, as `mpint`s or DER INTEGERs carry
    /// them), with `iqmp` = q⁻¹ mod p as OpenSSH stores it. `pkcs1`, when the numbers came from
    /// one, must be exactly what BoringSSL writes for them (so every CRT number is checked too).
    static func rsa(n: UnsafeRawBufferPointer, e: UnsafeRawBufferPointer, d: UnsafeRawBufferPointer,
                    iqmp: UnsafeRawBufferPointer, p: UnsafeRawBufferPointer, q: UnsafeRawBufferPointer,
                    comment: String, checkInt: UInt32, pkcs1: UnsafeRawBufferPointer? = nil) throws -> SSHKey {
        let bits = SSHWire.bitCount(n)
        guard rsaBits.contains(bits) else {
            throw CofferError.sshUnsupportedKey(
                "an RSA key of \(bits) bits: Coffer takes RSA keys of 2048 to 16384 bits; make a new key (ssh-keygen -t ed25519, or -t rsa -b 3072)")
        }
        // BoringSSL's checks cost time for absurd exponents; OpenSSH's own keys use 65537.
        guard SSHWire.bitCount(e) <= 33, e.last.map({ $0 & 1 == 1 }) == true, SSHWire.bitCount(e) >= 2 else {
            throw CofferError.sshMalformedKey("the RSA public exponent is not an odd number of at most 33 bits")
        }
        guard SSHWire.bitCount(p) <= bits, SSHWire.bitCount(q) <= bits, SSHWire.bitCount(d) <= bits, SSHWire.bitCount(iqmp) <= bits else {
            throw CofferError.sshMalformedKey("an RSA private number is larger than the modulus")
        }
        let key: _RSA.Signing.PrivateKey
        do { key = try _RSA.Signing.PrivateKey(n: n, e: e, d: d, p: p, q: q) } catch {
            throw CofferError.sshMalformedKey("the RSA key's numbers do not make a key (n is not p·q, or d does not invert e)")
        }
        var der = [UInt8](key.derRepresentation)
        defer { secureZero(&der) }
        try der.withUnsafeBytes { rebuilt in
            if let pkcs1 {
                guard rebuilt.elementsEqual(pkcs1) else {
                    throw CofferError.sshMalformedKey("the RSA key's CRT numbers (d mod p−1, d mod q−1, q⁻¹ mod p) are not the ones its primes give")
                }
            } else {
                let numbers = try DER.rsaPrivateKey(rebuilt)
                guard numbers.qInverse.elementsEqual(iqmp) else {
                    throw CofferError.sshMalformedKey("the RSA key's iqmp is not q⁻¹ mod p")
                }
            }
        }
        var blob = SSHWriter()
        blob.string(Kind.rsa.rawValue)
        blob.mpint(magnitude: e)
        blob.mpint(magnitude: n)
        var fields = SSHWriter(capacity: Self.privateWriterCapacity)
        defer { secureZero(&fields.bytes) }
        for number in [n, e, d, iqmp, p, q] { fields.mpint(magnitude: number) }
        let privateFields = try fields.bytes.withUnsafeBytes { try SecureBytes(copying: $0) }
        return SSHKey(kind: .rsa, bits: bits, publicKeyBlob: blob.bytes, comment: comment, checkInt: checkInt, privateFields: privateFields)
    }
}
